"""Matchmaking throughput: how long N queued tickets take to be matched.

Starts its own valkey, queues ``tickets`` solo tickets (ratings spread like a
real population) in the queues of every registered game and player count,
then starts ``replicas`` matchmakers and times until every ticket has a match.
Match creation goes through the in-process engine adapter (each match is
really set up by ``engine_core``), so the figure is the matchmaker's own cost:
Redis round trips, Lua claims, pairing. ``python -m bench.matchmaking``.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import random
import time
from typing import Any

import redis.asyncio as aioredis

from engine_core.registry import default_registry
from services.common.logging import configure_logging
from services.common.servers import ValkeyServer
from services.matchmaking.inprocess import InProcessMatchCreator
from services.matchmaking.matchmaker import Matchmaker
from services.matchmaking.settings import MatchmakingSettings
from services.matchmaking.store import MATCHED, NewTicket, TicketStore


async def _enqueue(store: TicketStore, n: int, seed: int) -> list[str]:
    rng = random.Random(seed)
    queues = [
        (g.name, c) for g in default_registry() for c in range(g.min_players, g.max_players + 1)
    ]
    sem = asyncio.Semaphore(64)

    async def one(i: int) -> str:
        game, count = queues[i % len(queues)]
        t = NewTicket(game, (f"p{i}",), (count,), "", False, rng.gauss(25.0, 5.0))
        async with sem:
            return await store.enqueue(t)

    return list(await asyncio.gather(*(one(i) for i in range(n))))


async def _bench(redis_url: str, tickets: int, replicas: int, seed: int) -> dict[str, Any]:
    settings = MatchmakingSettings(
        redis_url=redis_url, ticket_ttl_s=600.0, tick_s=0.0, create_concurrency=256
    )
    client = aioredis.from_url(redis_url)
    await client.flushall()
    store = TicketStore(client, settings)
    t0 = time.perf_counter()
    ids = await _enqueue(store, tickets, seed)
    enqueue_s = time.perf_counter() - t0
    creator = InProcessMatchCreator()
    makers = [Matchmaker(TicketStore(client, settings), creator, settings) for _ in range(replicas)]
    stop = asyncio.Event()
    rounds = 0

    async def loop(m: Matchmaker) -> None:
        nonlocal rounds
        while not stop.is_set():
            stats = await m.run_once()
            rounds += 1
            if stats.tickets_seen == 0:
                stop.set()

    started = time.perf_counter()
    await asyncio.gather(*(loop(m) for m in makers))
    elapsed = time.perf_counter() - started
    states = [r.state if r else None for r in await store.get_many(ids)]
    matched = sum(1 for s in states if s == MATCHED)
    await client.aclose()
    return {
        "tickets": tickets,
        "replicas": replicas,
        "matched": matched,
        "matches": len(creator.matches),
        "rounds": rounds,
        "enqueue_s": enqueue_s,
        "match_all_s": elapsed,
        "tickets_per_s": matched / elapsed if elapsed else float("inf"),
        "goal_10k_under_5s": "met" if elapsed < 5.0 else "MISSED",
    }


def run(tickets: int = 10_000, replicas: int = 1, seed: int = 1) -> dict[str, Any]:
    configure_logging(service="bench", level="WARNING")
    with ValkeyServer() as v:
        return asyncio.run(_bench(v.url, tickets, replicas, seed))


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m bench.matchmaking", description=__doc__)
    p.add_argument("--tickets", type=int, default=10_000)
    p.add_argument("--replicas", type=int, default=1)
    args = p.parse_args(argv)
    print(json.dumps(run(args.tickets, args.replicas), indent=2))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
