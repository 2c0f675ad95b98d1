"""Matchmaking throughput: how long N queued tickets take to be matched.

Starts its own valkey, queues ``tickets`` solo tickets (ratings spread like a
real population) in the queues of every registered game and player count,
then starts ``replicas`` matchmakers and times until every ticket has a match.

Two figures:

- ``pairing``: match creation through the in-process engine adapter (each
  match is really set up by ``engine_core``): the matchmaker's own cost, i.e.
  Redis round trips, Lua claims, pairing. The 10,000-in-5-s goal is this one.
- ``with_match_service``: the same, with ``MatchService.CreateMatch`` of a real
  match service (its own process, its own nats-server) for every match: what
  an operator sees end to end; bounded by the match service's create rate.

``python -m bench.matchmaking [--tickets N] [--replicas R] [--no-match-service]``.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import os
import random
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import redis.asyncio as aioredis

from bench.match_e2e import _wait_listening
from engine_core.registry import default_registry
from services.common.logging import configure_logging
from services.common.servers import NatsServer, ValkeyServer, free_port
from services.matchmaking.inprocess import InProcessMatchCreator
from services.matchmaking.match_client import GrpcMatchCreator
from services.matchmaking.matchmaker import Matchmaker
from services.matchmaking.settings import MatchmakingSettings
from services.matchmaking.store import MATCHED, NewTicket, TicketStore

SECRET = "bench-secret-0123456789abcdef0123456789"


def _plan(n: int) -> list[tuple[str, int]]:
    """(game, player count) of each ticket: every queue of every registered game
    gets a share that is a multiple of its player count, so all can be matched."""
    queues = [
        (g.name, c) for g in default_registry() for c in range(g.min_players, g.max_players + 1)
    ]
    share = n // len(queues)
    plan = [(q, share - share % q[1]) for q in queues]
    rest = n - sum(k for _, k in plan)
    if rest % 2:  # n is even: give three tickets of a 3-player queue back
        three = next(i for i, (q, k) in enumerate(plan) if q[1] == 3 and k >= 3)
        plan[three] = (plan[three][0], plan[three][1] - 3)
        rest += 3
    two = next(i for i, (q, _) in enumerate(plan) if q[1] == 2)
    plan[two] = (plan[two][0], plan[two][1] + rest)
    return [q for q, k in plan for _ in range(k)]


async def _enqueue(store: TicketStore, n: int, seed: int) -> list[str]:
    rng = random.Random(seed)
    plan = _plan(n)
    rng.shuffle(plan)
    sem = asyncio.Semaphore(64)

    async def one(i: int, game: str, count: int) -> str:
        t = NewTicket(game, (f"p{i}",), (count,), "", False, rng.gauss(25.0, 5.0))
        async with sem:
            return await store.enqueue(t)

    return list(await asyncio.gather(*(one(i, g, c) for i, (g, c) in enumerate(plan))))


async def _bench(
    redis_url: str, tickets: int, replicas: int, seed: int, match_addr: str = ""
) -> dict[str, Any]:
    settings = MatchmakingSettings(
        redis_url=redis_url,
        ticket_ttl_s=600.0,
        tick_s=0.0,
        create_concurrency=256,
        # Everybody within the window from the start: the figure is throughput,
        # not how long the widening policy makes far-apart players wait.
        window_base=50.0,
        window_max=50.0,
        match_addr=match_addr,
        jwt_secret=SECRET,
    )
    client = aioredis.from_url(redis_url)
    await client.flushall()
    store = TicketStore(client, settings)
    t0 = time.perf_counter()
    ids = await _enqueue(store, tickets + tickets % 2, seed)
    enqueue_s = time.perf_counter() - t0
    creator: Any = (
        GrpcMatchCreator.from_settings(settings) if match_addr else InProcessMatchCreator()
    )
    makers = [Matchmaker(TicketStore(client, settings), creator, settings) for _ in range(replicas)]
    stop = asyncio.Event()
    rounds = 0

    last_match = time.perf_counter()

    async def loop(m: Matchmaker) -> None:
        nonlocal rounds, last_match
        while not stop.is_set():
            stats = await m.run_once()
            rounds += 1
            now = time.perf_counter()
            if stats.matches:
                last_match = now
            if stats.tickets_seen == 0 or now - last_match > 5:
                stop.set()

    started = time.perf_counter()
    await asyncio.gather(*(loop(m) for m in makers))
    elapsed = last_match - started
    recs = await store.get_many(ids)
    matched = sum(1 for r in recs if r is not None and r.state == MATCHED)
    made_ids = {r.match_id for r in recs if r is not None and r.state == MATCHED}
    await client.aclose()
    if match_addr:
        await creator.close()
    return {
        "tickets": len(ids),
        "replicas": replicas,
        "matched": matched,
        "rounds": rounds,
        "enqueue_s": enqueue_s,
        "match_all_s": elapsed,
        "tickets_per_s": matched / elapsed if elapsed else float("inf"),
        "matches_per_s": len(made_ids) / elapsed if elapsed else float("inf"),
    }


@contextlib.contextmanager
def _match_service(nats_url: str, redis_url: str) -> Iterator[str]:
    """``python -m services.match`` in its own process; yields its address."""
    port = free_port()
    env = {
        **os.environ,
        "TABLETOP_NATS_URL": nats_url,
        "TABLETOP_REDIS_URL": redis_url,
        "TABLETOP_MATCH_HOST": "127.0.0.1",
        "TABLETOP_MATCH_PORT": str(port),
        "TABLETOP_JWT_SECRET": SECRET,
        "TABLETOP_LOG_LEVEL": "WARNING",
    }
    with tempfile.TemporaryDirectory(prefix="bench-match-") as tmp:
        out = Path(tmp) / "stdout"
        with open(out, "wb") as f:
            proc = subprocess.Popen(
                [sys.executable, "-m", "services.match"],
                env=env,
                stdout=f,
                stderr=subprocess.STDOUT,
            )
        try:
            # logging at WARNING: the start is seen on the port (the
            # start-up line is info)
            _wait_listening(proc, port, "match service")  # type: ignore[arg-type]
            yield f"127.0.0.1:{port}"
        finally:
            proc.terminate()
            proc.wait(10)


def run(
    tickets: int = 10_000, replicas: int = 1, seed: int = 1, match_service: bool = True
) -> dict[str, Any]:
    """Both figures (``pairing`` and, unless switched off, ``with_match_service``)."""
    configure_logging(service="bench", level="WARNING")
    out: dict[str, Any] = {}
    with ValkeyServer() as v:
        out["pairing"] = asyncio.run(_bench(v.url, tickets, replicas, seed))
        out["pairing"]["goal_10k_under_5s"] = (
            "met" if out["pairing"]["match_all_s"] < 5.0 * tickets / 10_000 else "MISSED"
        )
        if match_service:
            with NatsServer() as n, _match_service(n.url, v.url[:-1] + "1") as addr:
                out["with_match_service"] = asyncio.run(
                    _bench(v.url, tickets, replicas, seed, addr)
                )
    return out


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m bench.matchmaking", description=__doc__)
    p.add_argument("--tickets", type=int, default=10_000)
    p.add_argument("--replicas", type=int, default=1)
    p.add_argument("--no-match-service", action="store_true")
    args = p.parse_args(argv)
    print(
        json.dumps(
            run(args.tickets, args.replicas, match_service=not args.no_match_service), indent=2
        )
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
