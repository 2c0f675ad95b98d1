"""One bot seat of one match, played through the match service like any client.

The bot follows the match with ``WatchMatch`` (its own view after each commit),
and when its seat is awaited it picks a move with the game's bot
(``engine_core.bots``) and sends it with ``SubmitMove``: expected version = the
commit it decided on, idempotency key = bot and version, so a retried submit
never plays twice and a stale one is simply refused (the next commit brings a
fresh view).

A bot sees exactly what its seat sees. The engine bots decide on a state, so
the bot rebuilds it from its view: for games whose view is the state itself
(no hidden information) that is exact. For games with hidden information the
bot would need a determinisation (a state consistent with its view), which the
engine does not offer yet: such games raise ``UnsupportedGame``.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import time
from collections.abc import Callable
from typing import Any

import grpc
import msgspec

from engine_core.bots import Bot, bot_for
from engine_core.decider import Game
from engine_core.registry import default_registry
from engine_core.rng import Rng
from services.common.auth import Tokens, bearer_metadata, is_bot
from services.common.logging import get_logger
from tabletop.match.v1 import match_pb2, match_pb2_grpc

log = get_logger("bots")

FINISHED = match_pb2.MATCH_STATUS_FINISHED
_TRANSIENT = (grpc.StatusCode.UNAVAILABLE, grpc.StatusCode.DEADLINE_EXCEEDED)
_STALE = (grpc.StatusCode.ABORTED, grpc.StatusCode.FAILED_PRECONDITION)


class UnsupportedGame(Exception):
    """The bot cannot rebuild a state of this game from its view."""


class Identity:
    """A player id and its bearer token, issued again before it expires."""

    def __init__(self, player_id: str, tokens: Tokens, ttl_s: int = 6 * 3600) -> None:
        self.player_id = player_id
        self._tokens = tokens
        self._ttl_s = ttl_s
        self._token = ""
        self._renew_at = 0.0

    def metadata(self) -> tuple[tuple[str, str], ...]:
        now = time.time()
        if now >= self._renew_at:
            self._token = self._tokens.issue(self.player_id, ttl_s=self._ttl_s)
            self._renew_at = now + self._ttl_s / 2
        return bearer_metadata(self._token)


def state_from_view(game: Game) -> Callable[[str], Any]:
    """How to rebuild the state a bot decides on from its view JSON."""
    if game.View is game.State:
        decoder = msgspec.json.Decoder(game.State)
        return decoder.decode
    raise UnsupportedGame(f"{game.name} hides information: its view is not its state")


class SeatPlayer:
    def __init__(
        self,
        stub: match_pb2_grpc.MatchServiceStub,
        match_id: str,
        game: Game,
        identity: Identity,
        seat: int,
        bot: Bot,
        *,
        timeout_s: float = 10.0,
        move_delay_s: float = 0.0,
    ) -> None:
        self.stub = stub
        self.match_id = match_id
        self.game = game
        self.identity = identity
        self.seat = seat
        self.bot = bot
        self.timeout_s = timeout_s
        self.move_delay_s = move_delay_s
        self.to_state = state_from_view(game)
        self.moves = 0

    async def play(self) -> None:
        """Until the match is finished."""
        last: int | None = None
        backoff = 0.1
        while True:
            request = match_pb2.WatchMatchRequest(match_id=self.match_id, include_view=True)
            if last is not None and last > 0:
                request.after_version = last - 1  # get the last commit (and view) again
            try:
                async for commit in self.stub.WatchMatch(
                    request, metadata=self.identity.metadata()
                ):
                    last = commit.version
                    if commit.status == FINISHED:
                        return
                    await self._on_commit(commit)
                    backoff = 0.1
                return  # the stream ends when the match is finished
            except grpc.aio.AioRpcError as e:
                if e.code() not in _TRANSIENT:
                    raise
                log.warning("watch_lost", match=self.match_id, code=e.code().name)
                await asyncio.sleep(backoff)
                backoff = min(2.0, backoff * 2)

    async def _on_commit(self, commit: match_pb2.MatchCommit) -> None:
        if not commit.view_json:
            return
        state = self.to_state(commit.view_json)
        if self.seat not in self.game.awaiting(state):
            return
        move = self.bot.choose(self.game, state, self.seat, Rng(os.urandom(16)))
        if self.move_delay_s:
            await asyncio.sleep(self.move_delay_s)
        request = match_pb2.SubmitMoveRequest(
            match_id=self.match_id,
            move_json=msgspec.json.encode(move).decode(),
            expected_version=commit.version,
            idempotency_key=f"{self.identity.player_id}:{commit.version}",
            seat=self.seat,
        )
        for attempt in range(5):
            try:
                await self.stub.SubmitMove(
                    request, metadata=self.identity.metadata(), timeout=self.timeout_s
                )
                self.moves += 1
                return
            except grpc.aio.AioRpcError as e:
                if e.code() in _STALE:  # somebody moved first: the next commit decides
                    return
                if e.code() not in _TRANSIENT or attempt == 4:
                    raise
                await asyncio.sleep(0.1 * 2**attempt)


async def play_match(
    stub: match_pb2_grpc.MatchServiceStub,
    match_id: str,
    game_name: str,
    bots: dict[str, int],
    tokens: Tokens,
    *,
    kind: str = "greedy",
    timeout_s: float = 10.0,
    move_delay_s: float = 0.0,
) -> int:
    """Play every bot seat of a match to its end; returns the moves made."""
    if not all(is_bot(b) for b in bots):
        raise ValueError(f"not bot ids: {sorted(b for b in bots if not is_bot(b))}")
    game = default_registry().get(game_name)
    players = [
        SeatPlayer(
            stub,
            match_id,
            game,
            Identity(bot_id, tokens),
            seat,
            bot_for(kind, game),
            timeout_s=timeout_s,
            move_delay_s=move_delay_s,
        )
        for bot_id, seat in sorted(bots.items(), key=lambda kv: kv[1])
    ]
    tasks = [asyncio.create_task(p.play()) for p in players]
    try:
        await asyncio.gather(*tasks)
    finally:
        for t in tasks:
            t.cancel()
        for t in tasks:
            with contextlib.suppress(BaseException):
                await t
    return sum(p.moves for p in players)
