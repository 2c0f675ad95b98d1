"""The floor: what a move costs at the least in storage, with raw clients,
inline in one process: Redis GET of a state, a JetStream publish with the
``Nats-Expected-Last-Subject-Sequence`` header and its ack, Redis SET.
``python -m bench`` measures it right before the end-to-end sections and
again right after them, and compares them with the mean (``bracketed``).

Also the raw read rate of one subject with an ordered consumer (the bound that
the match service's replay is compared against).
"""

from __future__ import annotations

import asyncio
import os
import time
from typing import Any

import nats
import redis.asyncio as aioredis
from nats.js.api import StorageType, StreamConfig

from bench.stats import summary_ms
from services.common.servers import NatsServer, ValkeyServer

STATE_BYTES = 4096


async def _floor(nats_url: str, redis_url: str, moves: int) -> dict[str, Any]:
    nc = await nats.connect(nats_url)
    js = nc.jetstream()
    await js.add_stream(StreamConfig(name="FLOOR", subjects=["floor.>"], storage=StorageType.FILE))
    r = aioredis.from_url(redis_url)
    state = os.urandom(STATE_BYTES)
    await r.set("match:floor", state)
    seq = 0
    samples = []
    for i in range(moves + 100):
        t = time.perf_counter_ns()
        await r.get("match:floor")
        ack = await js.publish(
            "floor.m1",
            state,
            headers={
                "Nats-Expected-Last-Subject-Sequence": str(seq),
                "Nats-Msg-Id": f"floor-{i}",
            },
        )
        seq = ack.seq
        await r.set("match:floor", state)
        if i >= 100:
            samples.append(time.perf_counter_ns() - t)
    await r.aclose()
    await nc.close()
    return {"state_bytes": STATE_BYTES, **summary_ms(samples)}


async def _raw_read(nats_url: str, commits: int, size: int) -> dict[str, Any]:
    """Write ``commits`` messages on one subject, then time reading them back."""
    nc = await nats.connect(nats_url)
    js = nc.jetstream()
    await js.add_stream(StreamConfig(name="RAW", subjects=["raw.>"], storage=StorageType.FILE))
    payload = os.urandom(size)
    for _ in range(commits):
        await js.publish("raw.m1", payload)
    t = time.perf_counter()
    sub = await js.subscribe("raw.m1", ordered_consumer=True)
    for _ in range(commits):
        await sub.next_msg(timeout=10)
    elapsed = time.perf_counter() - t
    await sub.unsubscribe()
    await nc.close()
    return {"commits": commits, "seconds": elapsed, "commits_per_s": commits / elapsed}


def run(
    moves: int = 2000, commits: int = 1000, commit_bytes: int = 1024, *, raw: bool = True
) -> dict[str, Any]:
    """The floor, and with ``raw`` the raw read rate."""
    with NatsServer() as n, ValkeyServer() as v:
        out: dict[str, Any] = {"floor": asyncio.run(_floor(n.url, v.url, moves))}
        if raw:
            out["raw_read"] = asyncio.run(_raw_read(n.url, commits, commit_bytes))
    return out


def bracketed(before: dict[str, Any], after: dict[str, Any]) -> dict[str, Any]:
    """The floor measured before and after the sections compared with it
    (``run``'s results): its p50, p99 and mean are the means of the two
    runs' (both kept under ``bracket``), so that the machine's drift between
    the floor and those sections weighs on both sides alike."""
    b, a = before["floor"], after["floor"]
    floor = {
        "state_bytes": b["state_bytes"],
        "n": b["n"] + a["n"],
        **{key: (b[key] + a[key]) / 2 for key in ("p50_ms", "p99_ms", "mean_ms")},
        "bracket": [b, a],
    }
    return {**before, "floor": floor}


if __name__ == "__main__":
    print(run())
