"""One bot seat of one match, played through the match service like any client.

The bot follows the match with ``WatchMatch`` (its own view after each commit),
and when its seat is awaited it picks a move with the game's bot
(``engine_core.bots``) and sends it with ``SubmitMove``: expected version = the
commit it decided on, idempotency key = bot and version, so a retried submit
never plays twice and a stale one is simply refused (the next commit brings a
fresh view).

The engine bots decide on a state. For games whose view is the state itself
(no hidden information) the bot rebuilds it from its own view and plays the
game's bot (greedy by default). For games with hidden information a seat's view
is not enough to decide on, and the engine has no determinisation yet, so the
bot asks ``GetMatch`` for its legal moves (which the match service lists for
the awaited caller) and plays one of them at random: it sees only what its seat
may see, like any client.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import time

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


def has_public_state(game: Game) -> bool:
    """Whether a seat's view is the whole state (no hidden information)."""
    return game.View is game.State


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
        self._view = msgspec.json.Decoder(game.State) if has_public_state(game) else None
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
        rng = Rng(os.urandom(16))
        if self._view is not None:
            if not commit.view_json:
                return
            version, state = commit.version, self._view.decode(commit.view_json)
            if self.seat not in self.game.awaiting(state):
                return
            move_json = msgspec.json.encode(self.bot.choose(self.game, state, self.seat, rng))
        else:
            now = await self.stub.GetMatch(
                match_pb2.GetMatchRequest(match_id=self.match_id),
                metadata=self.identity.metadata(),
                timeout=self.timeout_s,
            )
            if now.version != commit.version or not now.legal_moves_json:
                return  # not our turn, or a newer commit is on its way: it decides
            version, move_json = now.version, rng.choice(list(now.legal_moves_json)).encode()
        if self.move_delay_s:
            await asyncio.sleep(self.move_delay_s)
        request = match_pb2.SubmitMoveRequest(
            match_id=self.match_id,
            move_json=move_json.decode(),
            expected_version=version,
            idempotency_key=f"{self.identity.player_id}:{version}",
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
    public = has_public_state(game)
    players = [
        SeatPlayer(
            stub,
            match_id,
            game,
            Identity(bot_id, tokens),
            seat,
            bot_for(kind if public else "random", game),
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
