"""Turn clocks: timer accuracy, the cost of a clock on a move, and many
running clocks on one replica.

Starts its own nats-server and valkey-server and the match service as its own
process (rules in process), and drives it over gRPC:

* **move cost**: tic-tac-toe matches played one move at a time, alternately
  without a clock and with a 60 s per-move clock, in the same run; the
  ``SubmitMove`` p50/p99 of each (a clocked move also publishes its schedule).
* **accuracy (idle)**: matches created one after the other with a 1 s clock
  and nobody moving; how long after its deadline each first timeout was
  committed (the commit's time minus the deadline its creation recorded).
* **1,000 silent matches**: created at once with a 3 s clock on one replica,
  nobody moving; every one must time out (a timeout commit for seat 0, at or
  after its deadline), and the lateness p50/p99/max under that load.

``python -m bench.clocks [--quick]`` prints the figures as JSON; ``run()``
returns them to ``python -m bench``.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import subprocess
import sys
import time
from typing import Any

import grpc
import nats
from nats.js.errors import NotFoundError

from bench.match_e2e import SECRET, _scripts, _wait_listening
from bench.stats import percentile, summary_ms
from services.common.auth import AuthSettings, Tokens, bearer_metadata
from services.common.servers import NatsServer, ValkeyServer, free_port
from services.match.model import decode_commit
from tabletop.match.v1 import match_pb2, match_pb2_grpc

GAME = "tic_tac_toe"
TC = match_pb2.TimeControl
PLAYERS = ["guest:clock-x", "guest:clock-o"]


def _options(per_move_ms: int) -> match_pb2.MatchOptions:
    return match_pb2.MatchOptions(time_control=TC(kind=TC.KIND_PER_MOVE, per_move_ms=per_move_ms))


def _start_service(nats_url: str, redis_url: str) -> tuple[subprocess.Popen[str], str]:
    # logging at WARNING: the start is seen on the port (the start-up line is info)
    port = free_port()
    env = {
        **os.environ,
        "TABLETOP_NATS_URL": nats_url,
        "TABLETOP_REDIS_URL": redis_url,
        "TABLETOP_JWT_SECRET": SECRET,
        "TABLETOP_MATCH_HOST": "127.0.0.1",
        "TABLETOP_MATCH_PORT": str(port),
        "TABLETOP_LOG_LEVEL": "WARNING",
        "TABLETOP_MATCH_HOT_CACHE": "4096",
    }
    proc = subprocess.Popen(
        [sys.executable, "-m", "services.match"],
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        text=True,
    )
    _wait_listening(proc, port, "match service")
    return proc, f"127.0.0.1:{port}"


class _Client:
    def __init__(self, address: str) -> None:
        self.channel = grpc.aio.insecure_channel(address)
        self.stub = match_pb2_grpc.MatchServiceStub(self.channel)
        tokens = Tokens(AuthSettings(secret=SECRET))
        self.meta = [bearer_metadata(tokens.issue(p)) for p in PLAYERS]

    async def create(self, options: match_pb2.MatchOptions | None = None) -> str:
        reply = await self.stub.CreateMatch(
            match_pb2.CreateMatchRequest(game=GAME, players=PLAYERS, match_options=options),
            metadata=self.meta[0],
        )
        return reply.match_id


async def _first_two(js: Any, match_id: str) -> list[Any]:
    out, seq = [], 0
    while len(out) < 2:
        try:
            msg = await js.get_msg("MATCHES", seq=seq + 1, subject=f"match.{match_id}", next=True)
        except NotFoundError:
            break
        seq = msg.seq
        out.append(decode_commit(msg.data))
    return out


async def _move_cost(address: str, moves: int) -> dict[str, Any]:
    client = _Client(address)
    scripts = _scripts(max(8, moves // 5))
    samples: dict[str, list[int]] = {"without": [], "with": []}
    i = 0
    while min(len(v) for v in samples.values()) < moves:
        kind = "with" if i % 2 else "without"
        match_id = await client.create(_options(60_000) if kind == "with" else None)
        for seat, move in scripts[i % len(scripts)]:
            t = time.perf_counter_ns()
            await client.stub.SubmitMove(
                match_pb2.SubmitMoveRequest(match_id=match_id, move_json=move),
                metadata=client.meta[seat],
            )
            if i >= 2:  # the first two matches warm up
                samples[kind].append(time.perf_counter_ns() - t)
        i += 1
    await client.channel.close()
    without, with_ = summary_ms(samples["without"]), summary_ms(samples["with"])
    return {
        "without_clock": without,
        "with_clock": with_,
        "p50_added_ms": with_["p50_ms"] - without["p50_ms"],
        "p50_ratio": with_["p50_ms"] / without["p50_ms"],
    }


async def _lateness(js: Any, matches: list[str], timeout_s: float) -> dict[str, Any]:
    """Wait until every match has its first timeout; its lateness figures."""
    pending = set(matches)
    late: dict[str, int] = {}
    wrong: list[str] = []
    first_due, last_done = None, 0
    deadline = time.monotonic() + timeout_s
    await asyncio.sleep(1.0)  # polling costs CPU the service needs: not too often
    while pending and time.monotonic() < deadline:
        for match_id in list(pending):
            commits = await _first_two(js, match_id)
            if len(commits) < 2:
                continue
            created, first = commits
            due = created.clocks.deadlines[0]
            if not (first.timeout and first.seat == 0 and first.time_ms >= due):
                wrong.append(match_id)
            late[match_id] = first.time_ms - due
            first_due = due if first_due is None else min(first_due, due)
            last_done = max(last_done, first.time_ms)
            pending.discard(match_id)
        if pending:
            await asyncio.sleep(1.0)
    values = sorted(float(v) for v in late.values())
    return {
        "matches": len(matches),
        "timed_out": len(late),
        "timed_out_correctly": len(late) - len(wrong),
        "missing": len(pending),
        "late_p50_ms": percentile(values, 50),
        "late_p99_ms": percentile(values, 99),
        "late_max_ms": values[-1] if values else float("nan"),
        # from the first deadline to the last of these timeouts committed
        "timeouts_per_s": len(late) * 1000 / max(1, last_done - (first_due or 0)),
    }


async def _idle_accuracy(address: str, js: Any, n: int) -> dict[str, Any]:
    client = _Client(address)
    matches = []
    for _ in range(n):
        matches.append(await client.create(_options(1000)))
        await asyncio.sleep(0.1)  # one deadline at a time
    figures = await _lateness(js, matches, 30)
    await client.channel.close()
    return figures


async def _many(address: str, js: Any, n: int, per_move_ms: int) -> dict[str, Any]:
    client = _Client(address)
    limit = asyncio.Semaphore(32)
    started = time.perf_counter()

    async def one() -> str:
        async with limit:
            return await client.create(_options(per_move_ms))

    matches = await asyncio.gather(*(one() for _ in range(n)))
    created_s = time.perf_counter() - started
    figures = await _lateness(js, list(matches), 120)
    await client.channel.close()
    return {"per_move_ms": per_move_ms, "create_all_s": created_s, **figures}


async def _measure(address: str, nats_url: str, quick: bool) -> dict[str, Any]:
    nc = await nats.connect(nats_url)
    js = nc.jetstream()
    try:
        cost = await _move_cost(address, 100 if quick else 600)
        idle = await _idle_accuracy(address, js, 10 if quick else 40)
        many = await _many(address, js, 200 if quick else 1000, 3000)
    finally:
        await nc.close()
    return {"move_cost": cost, "accuracy_idle": idle, "silent_matches": many}


def run(*, quick: bool = False) -> dict[str, Any]:
    with NatsServer() as n, ValkeyServer() as v:
        proc, address = _start_service(n.url, v.url)
        try:
            figures = asyncio.run(_measure(address, n.url, quick))
        finally:
            proc.terminate()
            proc.wait(30)
    return {"game": GAME, "load_average": os.getloadavg(), **figures}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.clocks", description=__doc__)
    parser.add_argument("--quick", action="store_true", help="a short run (smoke test)")
    args = parser.parse_args(argv)
    print(json.dumps(run(quick=args.quick), indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
