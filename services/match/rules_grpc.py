"""``RulesClient`` over the rules service (``services.rules.client``).

One call per port method: ``setup`` -> NewGame, ``decide`` -> ApplyMove,
``evolve`` -> Fold, ``view`` -> View, ``default_move`` -> DefaultMove. Every call has the client's deadline.
With ``streams`` > 0 (``TABLETOP_RULES_STREAMS``, default 2) ``decide`` and
``setup`` go over that many long-lived ApplyMoves streams, calls batched and
multiplexed (``services.rules.client.MoveStreams``); a broken stream's calls
are sent again on a fresh one, and the answers are the same as the unary
calls'.
A rules service that cannot be reached (UNAVAILABLE, DEADLINE_EXCEEDED) is
``RulesUnavailable``; its rejections (malformed move, illegal move, unknown
game...) pass through with their status and reason.
"""

from __future__ import annotations

from collections.abc import Sequence

import grpc

from services.common.auth import ServiceToken
from services.match import metrics
from services.match.model import Decision
from services.match.ports import RulesUnavailable
from services.rules.client import Played, RulesClient, RulesError

_DOWN = {grpc.StatusCode.UNAVAILABLE, grpc.StatusCode.DEADLINE_EXCEEDED}


def _decision(played: Played) -> Decision:
    return Decision(
        state=played.state,
        events=played.events,
        redacted=played.redacted,
        awaiting=played.status.awaiting,
        outcome=played.status.outcome,
        rules_version=played.rules_version,
    )


class GrpcRules:
    def __init__(
        self,
        target: str,
        *,
        timeout_s: float = 2.0,
        token: ServiceToken | None = None,
        streams: int = 2,
    ) -> None:
        """``token``: sent with every call (a rules service may require one);
        ``streams``: ApplyMoves streams for ``decide`` and ``setup`` (0 =
        unary ApplyMove and NewGame)."""
        self.deadline_s = timeout_s
        """The deadline every call of this port carries (the stream's
        calls expire as the unary calls would): ``AppBase._rules`` puts no
        timer of its own around them."""
        self.client = RulesClient(
            target,
            timeout=timeout_s,
            metadata=token.metadata if token is not None else None,
            streams=streams,
        )
        if self.client.streams is not None:
            metrics.RULES_STREAMS.track(self.client.streams)

    async def close(self) -> None:
        await self.client.close()

    async def setup(self, game: str, players: int, options: str, entropy: bytes) -> Decision:
        try:
            played = await self.client.new_game(
                game, players, options=options or None, entropy=entropy
            )
        except RulesError as e:
            raise self._down(e) from None
        return _decision(played)

    async def decide(self, state: bytes, seat: int, move: str, entropy: bytes) -> Decision:
        try:
            played = await self.client.apply_move("", state, seat, move, entropy=entropy)
        except RulesError as e:
            raise self._down(e) from None
        return _decision(played)

    async def evolve(self, game: str, state: bytes | None, events: Sequence[str]) -> bytes:
        try:
            new, _status = await self.client.fold(game, state, events)
        except RulesError as e:
            raise self._down(e) from None
        return new

    async def legal_moves(self, state: bytes, seat: int) -> tuple[str, ...]:
        try:
            return (await self.client.legal_moves("", state, seat)).moves
        except RulesError as e:
            raise self._down(e) from None

    async def default_move(self, state: bytes, seat: int, bot: str, entropy: bytes) -> str:
        try:
            return await self.client.default_move("", state, seat, bot=bot, entropy=entropy)
        except RulesError as e:
            raise self._down(e) from None

    async def view(self, state: bytes, seat: int | None, *, full: bool = False) -> str:
        try:
            view, _status = await self.client.view("", state, seat, full=full)
        except RulesError as e:
            if full and e.reason == "game_not_over":
                # The rules service shows whole states only once a game is
                # over; before the last version a full replay shows what a
                # spectator sees (its events are still shown in full).
                return await self.view(state, None)
            raise self._down(e) from None
        return view

    @staticmethod
    def _down(error: RulesError) -> Exception:
        if error.status in _DOWN:
            return RulesUnavailable(f"{error.status.name}: {error.message}")
        return error
