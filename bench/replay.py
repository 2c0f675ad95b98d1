"""Replay: rebuilding a 1,000-commit match from the stream, against the raw
read of the same subject with an ordered consumer.

A long match of Assault of the Giants (6 players, random legal moves) is
played through the match application until it has 1,000 commits. Then:

* **raw read**: an ordered consumer reads the match's subject, nothing else;
* **rebuild**: the projection is dropped from memory and from Redis and
  rebuilt from the stream (read every commit, fold every event);
* **replay stream**: ``ReplayMatch`` at full speed as a client sees it
  (commits decoded, redacted for the caller, sent over gRPC in-process).
"""

from __future__ import annotations

import asyncio
import os
import time
from typing import Any

import nats
import redis.asyncio as aioredis

from engine_core.rng import Rng
from services.common.auth import AuthSettings, Principal
from services.common.servers import NatsServer, ValkeyServer
from services.match.server import MatchServer
from services.match.settings import MatchSettings

GAME = "assault_of_the_giants"
PLAYERS = [f"guest:replay-{i}" for i in range(6)]


async def _build(app: Any, commits: int) -> str:
    """A match of ``commits`` commits (or fewer, if the game ends first: the
    longest of three seeds is kept): random legal moves through the app."""
    best: tuple[int, str] | None = None
    for attempt in range(3):
        rng = Rng(f"replay-bench/{attempt}".encode())
        match_id, version = await _play(app, commits, rng)
        if best is None or version > best[0]:
            best = (version, match_id)
        if version + 1 >= commits:
            break
    assert best is not None
    return best[1]


async def _play(app: Any, commits: int, rng: Rng) -> tuple[str, int]:
    owner = Principal(PLAYERS[0])
    match_id, version = await app.create(owner, game=GAME, players=PLAYERS)
    while version + 1 < commits:
        p = (await app.get(owner, match_id)).projection
        if p.outcome is not None:
            break
        seat = p.awaiting[0]
        view = await app.get(Principal(PLAYERS[seat]), match_id)
        move = rng.choice(view.legal_moves)
        version = (await app.submit(Principal(PLAYERS[seat]), match_id, move, seat=seat)).version
    await app.drain()
    return match_id, version


async def _raw(nats_url: str, subject: str, commits: int) -> float:
    nc = await nats.connect(nats_url)
    js = nc.jetstream()
    t = time.perf_counter()
    sub = await js.subscribe(subject, ordered_consumer=True)
    for _ in range(commits):
        await sub.next_msg(timeout=10)
    elapsed = time.perf_counter() - t
    await sub.unsubscribe()
    await nc.close()
    return elapsed


async def _measure(commits: int) -> dict[str, Any]:
    with NatsServer() as n, ValkeyServer() as v:
        settings = MatchSettings(
            nats_url=n.url,
            redis_url=v.url,
            auth=AuthSettings(secret="replay-bench-secret-0123456789abcdef0123"),
        )
        server = await MatchServer(settings).start()
        try:
            app = server.app
            match_id = await _build(app, commits)
            subject = f"match.{match_id}"
            total = (await app.get(Principal(PLAYERS[0]), match_id)).projection.version + 1
            commits = total
            raw_s = min([await _raw(n.url, subject, commits) for _ in range(3)])
            r = aioredis.from_url(v.url)
            rebuilds = []
            for _ in range(3):
                await app.drain()  # a background cache write must not refill Redis
                app.forget()
                await r.flushall()
                t = time.perf_counter()
                p = await app.load(match_id)
                rebuilds.append(time.perf_counter() - t)
                assert p.version >= commits - 1
            await r.aclose()
            rebuild_s = min(rebuilds)
            t = time.perf_counter()
            sent = 0
            async for _c in app.replay(Principal(PLAYERS[0]), match_id, speed=0.0):
                sent += 1
            stream_s = time.perf_counter() - t
        finally:
            await server.stop(0.5)
    return {
        "game": GAME,
        "commits": commits,
        "raw_read_s": raw_s,
        "raw_commits_per_s": commits / raw_s,
        "rebuild_s": rebuild_s,
        "rebuild_commits_per_s": commits / rebuild_s,
        "replay_stream_s": stream_s,
        "replay_stream_commits_per_s": sent / stream_s,
        "rebuild_over_raw": (commits / rebuild_s) / (commits / raw_s),
    }


def run(commits: int = 1000) -> dict[str, Any]:
    return asyncio.run(_measure(commits))


if __name__ == "__main__":
    import json

    print(json.dumps(run(int(os.environ.get("COMMITS", "1000"))), indent=2))
