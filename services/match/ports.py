"""The match application's ports, and the in-process rules adapter.

``RulesClient``: the rules (the rules service over gRPC in production; the
engine called directly in ``InProcessRules``, used by tests and handy for a
single-process deployment). ``EventStore`` (JetStream) and ``ProjectionCache``
(Redis) are the other two; their adapters live in ``store.py`` and
``cache.py``.

States cross the port as opaque bytes: msgpack of the game's state inside an
envelope tagged with the game id and rules version. Moves, events and views
are JSON texts.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Sequence
from typing import Any, Protocol

import msgspec

from engine_core.decider import Game, fold, start
from engine_core.errors import EngineError, MalformedMove
from engine_core.registry import Registry, default_registry
from services.common.codecs import (
    codec_for,
    decode_move,
    decode_options,
    decode_state,
    encode_state,
    peek_state_game,
)
from services.common.errors import InvalidArgument
from services.common.logging import get_logger
from services.common.standin import stand_in_move
from services.match.model import Commit, Decision, Projection

log = get_logger("match.rules")


class RulesUnavailable(Exception):
    """The rules could not be reached in time (UNAVAILABLE); nothing was decided."""


class RulesClient(Protocol):
    async def setup(self, game: str, players: int, options: str, entropy: bytes) -> Decision:
        """The creation of a match. Raises ``UnknownGame`` or ``EngineError``."""
        ...

    async def decide(self, state: bytes, seat: int, move: str, entropy: bytes) -> Decision:
        """One move on ``state``. Raises ``EngineError`` for a rejection."""
        ...

    async def evolve(self, game: str, state: bytes | None, events: Sequence[str]) -> bytes:
        """``state`` (``None``: nothing yet) with ``events`` applied."""
        ...

    async def legal_moves(self, state: bytes, seat: int) -> tuple[str, ...]:
        """Every move ``seat`` may make now, as JSON."""
        ...

    async def default_move(self, state: bytes, seat: int, bot: str, entropy: bytes) -> str:
        """The move the server makes for ``seat`` (JSON): the game's default
        move (``bot=""``: its clock ran out), or ``bot``'s choice (a seat
        handed over)."""
        ...

    async def view(self, state: bytes, seat: int | None, *, full: bool = False) -> str:
        """The view of ``seat`` (``None``: a spectator) as JSON; with ``full``
        the whole state (for public replays of finished matches)."""
        ...


class AppendConflict(Exception):
    """Another commit landed on the subject since the sequence we expected."""


class EventStore(Protocol):
    async def append(
        self,
        match_id: str,
        commit: Commit,
        expected_seq: int,
        msg_id: str,
        extra_headers: dict[str, str] | None = None,
    ) -> tuple[int, bool]:
        """Append ``commit`` if the match's last sequence is ``expected_seq``
        (0: no commit yet). Returns ``(seq, duplicate)``; raises
        ``AppendConflict`` when another commit came first, and tells an
        append that was surely not written from one that may have been."""
        ...

    async def last_seq(self, match_id: str) -> int:
        """The sequence of the match's last commit (0: no such match)."""
        ...

    async def commit_at(self, seq: int) -> Commit: ...

    def commits(
        self, match_id: str, after_seq: int = 0, *, follow: bool = False
    ) -> AsyncIterator[tuple[int, Commit]]:
        """The match's commits after ``after_seq``, in order; with ``follow``,
        then new ones as they come, forever."""
        ...


class ProjectionCache(Protocol):
    async def get(self, match_id: str) -> Projection | None: ...

    async def put(
        self,
        projection: Projection,
        new_keys: dict[str, int] | None = None,
        *,
        base: int | None = None,
    ) -> bool:
        """Store ``projection`` unless a newer version is there (forward only):
        all of it (``new_keys=None``), or as an increment on version ``base``
        (default the previous one) adding ``new_keys``."""
        ...

    async def put_many(
        self, writes: list[tuple[Projection, dict[str, int] | None, int | None]]
    ) -> list[bool] | None:
        """Several ``put`` at once; whether each applied (``None``: no answer)."""
        ...


# ------------------------------------------------------------ in-process rules
_json = msgspec.json.Encoder()


class InProcessRules:
    """``RulesClient`` calling ``engine_core`` directly (same state envelope
    as the rules service: ``services.common.codecs``)."""

    def __init__(self, registry: Registry | None = None) -> None:
        self.registry = registry or default_registry()

    # ---------------------------------------------------------------- helpers
    def _open(self, data: bytes) -> tuple[Game, Any]:
        game = self.registry.get(peek_state_game(data)[0])
        return game, decode_state(game, data)

    def _seal(self, game: Game, state: Any) -> bytes:
        return encode_state(game, state)

    def _decision(self, game: Game, state: Any, events: Sequence[Any]) -> Decision:
        seats = game.seats(state)
        texts = tuple(_json.encode(e).decode() for e in events)
        redacted = []
        for seat in [*range(seats), None]:
            row = []
            for e in events:
                r = game.redact(e, seat)
                row.append(None if r is None else _json.encode(r).decode())
            redacted.append(tuple(row))
        return Decision(
            state=self._seal(game, state),
            events=texts,
            redacted=tuple(redacted),
            awaiting=tuple(game.awaiting(state)),
            outcome=game.outcome(state),
            rules_version=game.rules_version,
        )

    # ------------------------------------------------------------------ port
    async def setup(self, game: str, players: int, options: str, entropy: bytes) -> Decision:
        g = self.registry.get(game)
        opts = decode_options(g, options.encode() if options else b"{}")
        state, events = start(g, players, opts, entropy)
        return self._decision(g, state, events)

    async def decide(self, state: bytes, seat: int, move: str, entropy: bytes) -> Decision:
        game, s = self._open(state)
        m = decode_move(game, move.encode())
        try:
            events = game.decide(s, seat, m, entropy)
        except EngineError:
            raise
        except Exception as e:  # a move the rules do not cover: the client's, not a crash
            log.error("engine_failed_on_input", error=type(e).__name__, exc_info=e)
            raise InvalidArgument(
                "unprocessable_input",
                f"the engine could not process this move ({type(e).__name__})",
                error=type(e).__name__,
            ) from None
        return self._decision(game, fold(game, events, s), events)

    async def evolve(self, game: str, state: bytes | None, events: Sequence[str]) -> bytes:
        if state is None:
            g, s = self.registry.get(game), None
        else:
            g, s = self._open(state)
        decode = codec_for(g).event_json.decode
        try:
            decoded = [decode(e) for e in events]
        except (msgspec.DecodeError, msgspec.ValidationError) as e:
            raise MalformedMove("malformed_event", str(e)) from None
        return self._seal(g, fold(g, decoded, s))

    async def legal_moves(self, state: bytes, seat: int) -> tuple[str, ...]:
        game, s = self._open(state)
        return tuple(_json.encode(m).decode() for m in game.legal_moves(s, seat))

    async def default_move(self, state: bytes, seat: int, bot: str, entropy: bytes) -> str:
        game, s = self._open(state)
        return _json.encode(stand_in_move(game, s, seat, bot, entropy)).decode()

    async def view(self, state: bytes, seat: int | None, *, full: bool = False) -> str:
        game, s = self._open(state)
        return _json.encode(s if full else game.view(s, seat)).decode()
