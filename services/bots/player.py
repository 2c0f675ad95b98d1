"""One bot seat of one match, played through the match service like any client.

The bot plays on one ``PlayMatch`` stream per seat: it follows the match
there (its own view after each commit), and when its seat is awaited it picks
a move with the game's bot (``engine_core.bots``) and sends it on the same
stream (a message, where ``SubmitMove`` was a call of its own each move):
expected version = the commit it decided on, idempotency key = bot and
version, so a move sent again never plays twice and a stale one is simply
refused (the next commit brings a fresh view). Its moves are counted from
its seat's commits, whichever attempt or stream carried them.

The bot decides on its seat's view alone, like any client: the view in the
commit is decoded and handed to ``engine_core.bots.choose_from_view`` (the
search bot searches from the view; the random and greedy bots play on a state
sampled from it with ``game.sample_state``, whose hidden parts are dealt at
random). The level comes from the bot's player id (``bot:<level>-<n>``, e.g.
``bot:search-1``; ``LEVELS`` in ``engine_core.bots``), else the worker's
default. A search decision gets a time budget (``search_time_s``) and runs in
an executor thread, so the event loop keeps serving the other matches.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import time
from concurrent.futures import Executor
from typing import Any

import grpc
import msgspec
from prometheus_client import Counter

from engine_core.bots import LEVELS, Bot, bot_for, choose_from_view
from engine_core.decider import BaseGame, Game
from engine_core.registry import default_registry
from engine_core.rng import Rng
from services.common.auth import Tokens, bearer_metadata, is_bot
from services.common.logging import get_logger
from tabletop.match.v1 import match_pb2, match_pb2_grpc

log = get_logger("bots")

FINISHED = match_pb2.MATCH_STATUS_FINISHED
_TRANSIENT = (grpc.StatusCode.UNAVAILABLE, grpc.StatusCode.DEADLINE_EXCEEDED)
_TRANSIENT_NAMES = frozenset(code.name for code in _TRANSIENT)
_STALE_NAMES = frozenset(("ABORTED", "FAILED_PRECONDITION"))
"""A move refused for these: somebody moved first (or the clock ran out)."""

LEVEL_MOVES = Counter(
    "bots_level_moves_total", "Moves bot seats made, by the level they played at", ["level"]
)


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


def samples_views(game: Game) -> bool:
    """Whether the game deals a full state from a seat's view (``sample_state``):
    else a bot plays a random move of those the match service lists."""
    return has_public_state(game) or type(game).sample_state is not BaseGame.sample_state


def level_of(player_id: str, default: str) -> str:
    """The difficulty level a bot id names: the first part of its name
    (``bot:search-1`` -> ``search``, ``bot:greedy-fill-t1`` -> ``greedy``), or
    ``default`` for ids that name none (``bot:7``, ``bot:fill-t1``)."""
    name = player_id.split(":", 1)[-1].split("-", 1)[0]
    return name if name in LEVELS else default


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
        executor: Executor | None = None,
        level: str = "",
    ) -> None:
        self.stub = stub
        self.match_id = match_id
        self.game = game
        self.identity = identity
        self.seat = seat
        self.bot = bot
        self.timeout_s = timeout_s
        self.move_delay_s = move_delay_s
        self.executor = executor
        self._view = msgspec.json.Decoder(game.View)
        self._samples = samples_views(game)
        self.moves = 0
        self.level = level or bot.name  # what the moves are counted under
        self._counted = 0
        """The version of the last commit of this seat's counted in ``moves``."""
        self._sent: tuple[int, str, int] = (0, "", 0)
        """The last move sent: the version decided on, its JSON, the attempt."""

    async def play(self) -> None:
        """Until the match is finished: one ``PlayMatch`` stream, opened
        again from the last commit seen after a transient failure."""
        last: int | None = None
        backoff = 0.1
        while True:
            opening = match_pb2.PlayOpen(
                match_id=self.match_id,
                include_view=True,
                # the listed moves, with each commit, for a game it cannot sample
                include_turn=not self._samples,
                seat=self.seat,
            )
            if last is not None and last > 0:
                opening.after_version = last - 1  # get the last commit (and view) again
            call = self.stub.PlayMatch(metadata=self.identity.metadata())
            followed = False  # the stream got a frame: its token was good
            try:
                await call.write(match_pb2.PlayRequest(open=opening))
                async for frame in call:
                    followed = True
                    kind = frame.WhichOneof("kind")
                    if kind == "commit":
                        commit = frame.commit
                        last = commit.version
                        self._count(commit)
                        if commit.status == FINISHED:
                            return
                        await self._on_commit(call, commit)
                    elif kind == "error":
                        await self._refused(call, frame)
                    backoff = 0.1
                return  # the stream ends when the match is finished
            except grpc.aio.AioRpcError as e:
                if followed and e.code() == grpc.StatusCode.UNAUTHENTICATED:
                    # the stream outlived its token (a long match): again with
                    # a fresh one (``Identity`` renews it by then)
                    log.info("play_token_renewed", match=self.match_id)
                    continue
                if e.code() not in _TRANSIENT:
                    raise
                log.warning("play_lost", match=self.match_id, code=e.code().name)
                await asyncio.sleep(backoff)
                backoff = min(2.0, backoff * 2)
            finally:
                call.cancel()

    def _count(self, commit: match_pb2.MatchCommit) -> None:
        """A move of this seat's, counted once from its commit (whichever
        stream or attempt carried it; not a move the server made for it)."""
        if (
            commit.HasField("seat")
            and commit.seat == self.seat
            and not commit.timeout
            and commit.version > self._counted
        ):
            self._counted = commit.version
            self.moves += 1
            LEVEL_MOVES.labels(self.level).inc()

    async def _on_commit(self, call: Any, commit: match_pb2.MatchCommit) -> None:
        if not commit.view_json:
            return
        rng = Rng(os.urandom(16))
        version, view = commit.version, self._view.decode(commit.view_json)
        try:
            sample = self.game.sample_state(view, self.seat, rng)
        except NotImplementedError:  # hidden information and no sampler: ask for the moves
            await self._random_listed_move(call, commit, rng)
            return
        if self.seat not in self.game.awaiting(sample):
            return
        if self.bot.name == "search":  # seconds of CPU: off the event loop
            loop = asyncio.get_running_loop()
            move = await loop.run_in_executor(
                self.executor, choose_from_view, self.bot, self.game, view, self.seat, rng
            )
        else:
            move = choose_from_view(self.bot, self.game, view, self.seat, rng)
        await self._send(call, version, msgspec.json.encode(move).decode())

    async def _random_listed_move(self, call: Any, commit: match_pb2.MatchCommit, rng: Rng) -> None:
        """A random move among those the match service lists for this seat (for
        a game that cannot sample a state from a view): the commit's turn, or
        a GetMatch for a commit without one (newer commits follow it, or a
        match service of before ``include_turn``)."""
        if commit.HasField("turn"):
            legal = commit.turn.legal_moves_json
        else:
            now = await self.stub.GetMatch(
                match_pb2.GetMatchRequest(match_id=self.match_id, omit_view=True),
                metadata=self.identity.metadata(),
                timeout=self.timeout_s,
            )
            if now.version != commit.version:
                return  # a newer commit is on its way: it decides
            legal = now.legal_moves_json
        if not legal:
            return  # not our turn
        await self._send(call, commit.version, rng.choice(list(legal)))

    async def _send(self, call: Any, version: int, move_json: str, attempt: int = 0) -> None:
        """The move decided on ``version``, on the stream: that version
        expected, the idempotency key the bot and the version (a move sent
        again is never played twice), its ``ref`` the attempt."""
        if self.move_delay_s and not attempt:
            await asyncio.sleep(self.move_delay_s)
        self._sent = (version, move_json, attempt)
        move = match_pb2.PlayMove(
            ref=f"{version}.{attempt}",
            move_json=move_json,
            expected_version=version,
            idempotency_key=f"{self.identity.player_id}:{version}",
            seat=self.seat,
        )
        await call.write(match_pb2.PlayRequest(move=move))

    async def _refused(self, call: Any, frame: match_pb2.PlayFrame) -> None:
        """The last move sent refused: stale (somebody moved first: the next
        commit decides), sent again after a transient failure (up to five
        times), else the seat stops with the refusal. (A refusal of an
        earlier move, overtaken by a newer commit, changes nothing.)"""
        error = frame.error
        version, move_json, attempt = self._sent
        if error.code in _STALE_NAMES or frame.ref != f"{version}.{attempt}":
            return
        if error.code not in _TRANSIENT_NAMES or attempt == 4:
            raise RuntimeError(
                f"bot move at version {version} refused: {error.code} {error.reason}: "
                f"{error.message}"
            )
        await asyncio.sleep(0.1 * 2**attempt)
        await self._send(call, version, move_json, attempt + 1)


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
    search_time_s: float = 0.5,
    search_iterations: int = 5000,
    executor: Executor | None = None,
) -> int:
    """Play every bot seat of a match to its end; returns the moves made.

    Each seat plays at the level its bot id names (``level_of``), else ``kind``;
    a search bot spends at most ``search_time_s`` (and ``search_iterations``)
    per decision, in ``executor`` (the loop's default executor if None)."""
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
            bot_for(
                level,
                game,
                iterations=search_iterations,
                time_s=search_time_s,
                clock=time.monotonic,
            ),
            timeout_s=timeout_s,
            move_delay_s=move_delay_s,
            executor=executor,
            level=level,
        )
        for bot_id, seat in sorted(bots.items(), key=lambda kv: kv[1])
        for level in [level_of(bot_id, kind)]
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
