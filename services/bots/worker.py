"""The bot worker: takes matches with bot seats from the matchmaker and plays them.

Jobs come from the Redis stream ``mm:bots`` (one entry per match: match id,
game, ``{bot player id: seat}``), read with the consumer group ``bots``, so
several workers share the matches and each match is played by one of them.
An entry is acknowledged when its match is over. While it plays, the worker
touches its entries (``XCLAIM ... JUSTID``) so nobody takes them; the entries
of a worker that died stop being touched and are taken over by another after
``claim_idle_s`` (``XAUTOCLAIM``), which resumes the match where it stands.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
from concurrent.futures import ThreadPoolExecutor

import grpc
import redis.asyncio as redis
from prometheus_client import Counter
from redis.exceptions import ResponseError

from services.bots.player import play_match
from services.bots.settings import BotSettings
from services.common.auth import Tokens
from services.common.grpcserver import balanced_channel_options
from services.common.logging import get_logger
from tabletop.match.v1 import match_pb2_grpc

log = get_logger("bots.worker")

JOBS = "mm:bots"
GROUP = "bots"

MATCHES_PLAYED = Counter("bots_matches_total", "Matches the bot worker played", ["result"])
BOT_MOVES = Counter("bots_moves_total", "Moves the bot worker made")


class BotWorker:
    def __init__(self, settings: BotSettings) -> None:
        self.settings = settings
        self.redis = redis.from_url(settings.redis_url)
        # round_robin: every match pod behind the target gets calls.
        self.channel = grpc.aio.insecure_channel(
            settings.match_addr, options=balanced_channel_options()
        )
        self.stub = match_pb2_grpc.MatchServiceStub(self.channel)
        self.tokens = Tokens(settings.auth())
        self.active: dict[bytes, asyncio.Task[None]] = {}
        self.search_pool = ThreadPoolExecutor(
            max_workers=max(1, settings.search_threads), thread_name_prefix="search"
        )
        self.finished = 0
        self.failed = 0
        self._stop = asyncio.Event()
        self._task: asyncio.Task[None] | None = None

    async def start(self) -> BotWorker:
        with contextlib.suppress(ResponseError):  # BUSYGROUP: it exists
            await self.redis.xgroup_create(JOBS, GROUP, id="0", mkstream=True)
        self._task = asyncio.create_task(self._run())
        return self

    async def stop(self) -> None:
        self._stop.set()
        if self._task is not None:
            await self._task
        for t in self.active.values():
            t.cancel()
        for t in list(self.active.values()):
            with contextlib.suppress(BaseException):
                await t
        self.search_pool.shutdown(wait=False, cancel_futures=True)
        await self.channel.close()
        await self.redis.aclose()

    async def _run(self) -> None:
        s = self.settings
        touched = asyncio.get_running_loop().time()
        while not self._stop.is_set():
            try:
                free = s.max_matches - len(self.active)
                if free > 0:
                    for entry_id, fields in await self._take(free):
                        self._begin(entry_id, fields)
                else:
                    await asyncio.sleep(0.2)
                now = asyncio.get_running_loop().time()
                if self.active and now - touched > s.claim_idle_s / 3:
                    touched = now
                    await self.redis.xclaim(
                        JOBS, GROUP, s.consumer, 0, list(self.active), justid=True
                    )
            except Exception:
                if self._stop.is_set():
                    break
                log.exception("bot_worker_loop")
                await asyncio.sleep(0.5)

    async def _take(self, count: int) -> list[tuple[bytes, dict]]:
        s = self.settings
        # Entries of a worker that went away first, then new ones.
        _, stolen, *_ = await self.redis.xautoclaim(
            JOBS, GROUP, s.consumer, int(s.claim_idle_s * 1000), "0-0", count=count
        )
        got = [(eid, f) for eid, f in stolen if f and eid not in self.active]
        if got:
            return got
        res = await self.redis.xreadgroup(GROUP, s.consumer, {JOBS: ">"}, count=count, block=200)
        return [(eid, f) for _, entries in res or [] for eid, f in entries]

    def _begin(self, entry_id: bytes, fields: dict) -> None:
        f = {k.decode(): v.decode() for k, v in fields.items()}
        task = asyncio.create_task(self._play(entry_id, f["match_id"], f["game"], f["bots"]))
        self.active[entry_id] = task

    async def _play(self, entry_id: bytes, match_id: str, game: str, bots_json: str) -> None:
        s = self.settings
        try:
            moves = await play_match(
                self.stub,
                match_id,
                game,
                json.loads(bots_json),
                self.tokens,
                kind=s.kind,
                timeout_s=s.rpc_timeout_s,
                move_delay_s=s.move_delay_s,
                search_time_s=s.search_time_s,
                search_iterations=s.search_iterations,
                executor=self.search_pool,
            )
            BOT_MOVES.inc(moves)
            log.info("bot_match_finished", match=match_id, game=game, moves=moves)
            await self.redis.xack(JOBS, GROUP, entry_id)
            # counted once the job is settled too: a reader of ``finished``
            # (or of the metric) never sees a finished match still pending
            self.finished += 1
            MATCHES_PLAYED.labels("finished").inc()
        except asyncio.CancelledError:
            raise  # stopping: the entry stays pending for whoever runs next
        except Exception:
            self.failed += 1  # left pending: taken over again after claim_idle_s
            MATCHES_PLAYED.labels("failed").inc()
            log.exception("bot_match_failed", match=match_id, game=game)
        finally:
            self.active.pop(entry_id, None)
