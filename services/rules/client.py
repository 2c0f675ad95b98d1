"""A small typed client of the rules service (used by the match service and tests).

::

    async with RulesClient("dns:///rules.tabletop.svc:50051") as rules:
        new = await rules.new_game("tic_tac_toe", players=2)
        step = await rules.apply_move("tic_tac_toe", new.state, seat=0,
                                      move={"type": "place_mark", "cell": 4})

Targets are gRPC names: ``host:port`` or ``dns:///name:port``; with a DNS
name that resolves to several addresses (a Kubernetes headless Service) the
channel balances calls round-robin over them. Every call has a deadline
(``timeout``, default 2 s). Rules calls are pure functions of their request,
so the channel retries them on UNAVAILABLE (another replica answers).

A rejection raises ``RulesError``, a ``ServiceError`` carrying the server's
status, reason and metadata: a service that calls the rules service can let
it propagate and its own client sees the same status and reason.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import grpc
import msgspec

from engine_core.types import Outcome
from services.common.errors import ServiceError, error_info
from services.common.grpcserver import channel_options
from tabletop.rules.v1 import rules_pb2, rules_pb2_grpc

__all__ = [
    "GameListing",
    "GameStatus",
    "LegalMoves",
    "Played",
    "RulesClient",
    "RulesError",
    "service_config",
]

_SERVICE = "tabletop.rules.v1.RulesService"


def service_config(*, retries: int = 3) -> str:
    """Round-robin load balancing and retry-on-UNAVAILABLE for the rules service."""
    return json.dumps(
        {
            "loadBalancingConfig": [{"round_robin": {}}],
            "methodConfig": [
                {
                    "name": [{"service": _SERVICE}],
                    "retryPolicy": {
                        "maxAttempts": retries,
                        "initialBackoff": "0.05s",
                        "maxBackoff": "0.5s",
                        "backoffMultiplier": 2,
                        "retryableStatusCodes": ["UNAVAILABLE"],
                    },
                }
            ],
        }
    )


class RulesError(ServiceError):
    """A call the rules service refused (or could not answer)."""

    def __init__(self, status: grpc.StatusCode, reason: str, message: str, **metadata: str) -> None:
        super().__init__(reason, message, **metadata)
        self.status = status

    @classmethod
    def from_rpc(cls, error: grpc.aio.AioRpcError) -> RulesError:
        info = error_info(error)
        code = error.code()
        if info is not None:
            return cls(code, info.reason, error.details() or info.reason, **dict(info.metadata))
        return cls(code, code.name.lower(), error.details() or code.name)


@dataclass(frozen=True)
class GameStatus:
    awaiting: tuple[int, ...]
    outcome: Outcome | None

    @classmethod
    def from_pb(cls, pb: rules_pb2.GameStatus) -> GameStatus:
        outcome = None
        if pb.HasField("outcome"):
            o = pb.outcome
            outcome = Outcome(ranks=tuple(o.ranks), scores=tuple(o.scores), reason=o.reason)
        return cls(tuple(pb.awaiting), outcome)

    @property
    def over(self) -> bool:
        return self.outcome is not None


@dataclass(frozen=True)
class Played:
    """The answer of ``new_game`` and ``apply_move``."""

    state: bytes
    events: tuple[str, ...]
    """JSON text of each event, in order (not redacted)."""
    status: GameStatus
    entropy: bytes
    redacted: tuple[tuple[str | None, ...], ...]
    """``redacted[s]``: the events as seat ``s`` sees them, ``redacted[-1]`` as a
    spectator does; same length as ``events``, ``None`` where hidden."""
    rules_version: str

    @classmethod
    def from_pb(cls, pb: rules_pb2.NewGameResponse | rules_pb2.ApplyMoveResponse) -> Played:
        return cls(
            state=pb.state,
            events=tuple(pb.events),
            status=GameStatus.from_pb(pb.status),
            entropy=pb.entropy,
            redacted=tuple(tuple(e or None for e in r.events) for r in pb.redacted),
            rules_version=pb.rules_version,
        )

    def visible(self, seat: int | None) -> tuple[str, ...]:
        """The events ``seat`` (``None``: a spectator) may see, hidden ones left out."""
        return tuple(e for e in self.redacted[-1 if seat is None else seat] if e is not None)

    def event_dicts(self) -> list[dict[str, Any]]:
        return [json.loads(e) for e in self.events]


@dataclass(frozen=True)
class LegalMoves:
    moves: tuple[str, ...]
    """JSON text of each legal move."""
    texts: tuple[str, ...]


@dataclass(frozen=True)
class GameListing:
    id: str
    title: str
    min_players: int
    max_players: int
    rules_version: str
    schemas: Mapping[str, Any]
    """``options``, ``move``, ``event``, ``view``: JSON Schema documents."""


def _json_text(value: Any) -> str:
    if isinstance(value, str):
        return value
    if isinstance(value, bytes):
        return value.decode()
    return msgspec.json.encode(value).decode()


class RulesClient:
    """Typed async calls to ``tabletop.rules.v1.RulesService``."""

    def __init__(
        self,
        target: str,
        *,
        timeout: float = 2.0,
        max_message_bytes: int = 4 * 1024 * 1024,
        channel: grpc.aio.Channel | None = None,
        metadata: Callable[[], Sequence[tuple[str, str]]] | None = None,
    ) -> None:
        """``metadata``: called before each call for its metadata, e.g. a
        ``ServiceToken``'s ``metadata`` when the rules service requires one."""
        self.target = target
        self.timeout = timeout
        self._metadata = metadata
        self._own_channel = channel is None
        self.channel = channel or grpc.aio.insecure_channel(
            target,
            options=[
                *channel_options(max_message_bytes),
                ("grpc.service_config", service_config()),
                ("grpc.enable_retries", 1),
            ],
        )
        self.stub = rules_pb2_grpc.RulesServiceStub(self.channel)

    async def __aenter__(self) -> RulesClient:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.close()

    async def close(self) -> None:
        if self._own_channel:
            await self.channel.close()

    async def _call(self, method: Any, request: Any, timeout: float | None) -> Any:
        try:
            return await method(
                request,
                timeout=self.timeout if timeout is None else timeout,
                metadata=self._metadata() if self._metadata is not None else None,
            )
        except grpc.aio.AioRpcError as e:
            raise RulesError.from_rpc(e) from None

    # ------------------------------------------------------------------ RPCs
    async def list_games(self, *, timeout: float | None = None) -> list[GameListing]:
        reply = await self._call(self.stub.ListGames, rules_pb2.ListGamesRequest(), timeout)
        return [
            GameListing(
                id=g.info.id,
                title=g.info.title,
                min_players=g.info.min_players,
                max_players=g.info.max_players,
                rules_version=g.info.rules_version,
                schemas={
                    "options": json.loads(g.schemas.options),
                    "move": json.loads(g.schemas.move),
                    "event": json.loads(g.schemas.event),
                    "view": json.loads(g.schemas.view),
                },
            )
            for g in reply.games
        ]

    async def new_game(
        self,
        game: str,
        players: int,
        *,
        options: Any = None,
        entropy: bytes = b"",
        timeout: float | None = None,
    ) -> Played:
        request = rules_pb2.NewGameRequest(
            game=game,
            players=players,
            options="" if options is None else _json_text(options),
            entropy=entropy,
        )
        return Played.from_pb(await self._call(self.stub.NewGame, request, timeout))

    async def apply_move(
        self,
        game: str,
        state: bytes,
        seat: int,
        move: Any,
        *,
        entropy: bytes = b"",
        timeout: float | None = None,
    ) -> Played:
        """``move`` is JSON text, or a dict / msgspec Struct encoded to JSON.
        ``game`` may be ``""``: the game the state names."""
        request = rules_pb2.ApplyMoveRequest(
            game=game, state=state, seat=seat, move=_json_text(move), entropy=entropy
        )
        return Played.from_pb(await self._call(self.stub.ApplyMove, request, timeout))

    async def legal_moves(
        self, game: str, state: bytes, seat: int, *, timeout: float | None = None
    ) -> LegalMoves:
        request = rules_pb2.LegalMovesRequest(game=game, state=state, seat=seat)
        reply = await self._call(self.stub.LegalMoves, request, timeout)
        return LegalMoves(tuple(reply.moves), tuple(reply.texts))

    async def view(
        self,
        game: str,
        state: bytes,
        seat: int | None,
        *,
        full: bool = False,
        timeout: float | None = None,
    ) -> tuple[str, GameStatus]:
        """The view JSON for ``seat`` (``None`` = a spectator) and the game's status;
        ``full``: the whole state (only once the game is over)."""
        request = rules_pb2.ViewRequest(game=game, state=state, full=full)
        if seat is not None:
            request.seat = seat
        reply = await self._call(self.stub.View, request, timeout)
        return reply.view, GameStatus.from_pb(reply.status)

    async def outcome(self, game: str, state: bytes, *, timeout: float | None = None) -> GameStatus:
        request = rules_pb2.OutcomeRequest(game=game, state=state)
        reply = await self._call(self.stub.Outcome, request, timeout)
        return GameStatus.from_pb(reply.status)

    async def fold(
        self,
        game: str,
        state: bytes | None,
        events: Sequence[str],
        *,
        timeout: float | None = None,
    ) -> tuple[bytes, GameStatus]:
        """``state`` (``None``: before the first event) with ``events`` (JSON) applied."""
        request = rules_pb2.FoldRequest(game=game, state=state or b"", events=list(events))
        reply = await self._call(self.stub.Fold, request, timeout)
        return reply.state, GameStatus.from_pb(reply.status)

    async def default_move(
        self,
        game: str,
        state: bytes,
        seat: int,
        *,
        bot: str = "",
        entropy: bytes = b"",
        timeout: float | None = None,
    ) -> str:
        """The move the server makes for ``seat`` (JSON): the game's default
        move, or ``bot``'s choice."""
        request = rules_pb2.DefaultMoveRequest(
            game=game, state=state, seat=seat, bot=bot, entropy=entropy
        )
        return (await self._call(self.stub.DefaultMove, request, timeout)).move
