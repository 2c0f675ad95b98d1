"""The browser's path: tic-tac-toe played through the gateway, as the web
client plays it, with what every process spends per move.

The whole stack as ``make run`` starts it (``services.cli.stack``, on free
ports, per-caller limits off: every player comes from this one address).
``G`` loops at once; each loop is two guests (``POST /api/v1/auth/guest``)
with a WebSocket each (``/api/v1/ws``), playing the benchmark's 9-move draw
one game after the other: the match is created with ``CreateMatch`` (the
one call not made through the gateway: a browser's matches come from
matchmaking), each page watches it on its socket, and the seat whose
``turn`` the socket's frame names sends its move on the socket (``op``
``move`` on the match's subscription, with ``expected_version``; its commit
comes back naming its ``ref``), as the web client does.

Per run: moves per second; the CPU per move of every process (``/proc``);
the rules service's calls per move by method (its ``/metrics``), which
show what one move through the gateway asks of the rules: the move itself,
the view of each watcher's frame, the legal moves of the seat to move; and
the match service's (its calls that ended, by method: the streams count
when they close).
``python -m bench.web [--loops 1,10] [--seconds 5]`` prints it as JSON.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import re
import sys
import tempfile
import time
import urllib.request
from pathlib import Path
from typing import Any

import grpc
import httpx
import websockets

from bench.match_e2e import _cpu_s
from services.cli.stack import Stack, StackSettings
from services.common.auth import bearer_metadata
from tabletop.match.v1 import match_pb2, match_pb2_grpc

DRAW = (0, 1, 2, 4, 3, 5, 7, 6, 8)  # X O X O X O X O X: no line, a draw
LOOPS = (1, 10)
_RULES_CALLS = re.compile(
    r'^tabletop_rules_rpc_seconds_count\{[^}]*method="(\w+)"[^}]*\} ([0-9.e+]+)$', re.M
)
_RPC_CALLS = re.compile(
    r'^tabletop_rpc_seconds_count\{[^}]*method="(\w+)"[^}]*\} ([0-9.e+]+)$', re.M
)


class _Page:
    """One guest's API client and socket."""

    def __init__(self, base: str) -> None:
        self.base = base
        self.http = httpx.AsyncClient(base_url=base, timeout=20)

    async def open(self) -> _Page:
        r = await self.http.post("/api/v1/auth/guest", json={"name": "bench"})
        r.raise_for_status()
        body = r.json()
        self.token, self.player_id = body["token"], body["player_id"]
        self.http.headers["authorization"] = f"Bearer {self.token}"
        self.ws = await websockets.connect(self.base.replace("http", "ws", 1) + "/api/v1/ws")
        await self.ws.send(json.dumps({"op": "auth", "token": self.token}))
        ready = json.loads(await self.ws.recv())
        if ready.get("type") != "ready":
            raise RuntimeError(f"the socket did not open: {ready}")
        return self

    async def close(self) -> None:
        await self.ws.close()
        await self.http.aclose()

    async def play(self, match_id: str, sub: str, seat: int) -> int:
        """Follow the match on the socket; move when the frame's turn says so.
        The moves this page made, once the match ended."""
        await self.ws.send(json.dumps({"op": "watch", "sub": sub, "match_id": match_id}))
        moves = 0
        while True:
            frame = json.loads(await self.ws.recv())
            kind = frame.get("type")
            if kind == "end" and frame.get("sub") == sub:
                return moves
            if kind == "error":
                raise RuntimeError(f"the socket said: {frame}")
            if kind != "commit" or frame.get("sub") != sub:
                continue
            turn = frame.get("turn")
            if frame["status"] == "finished" or turn is None or seat not in turn["awaiting"]:
                continue
            cell = DRAW[turn["version"]]
            await self.ws.send(
                json.dumps(
                    {
                        "op": "move",
                        "sub": sub,
                        "ref": f"v{turn['version']}",
                        "move": {"type": "place_mark", "cell": cell},
                        "expected_version": turn["version"],
                    }
                )
            )
            moves += 1


async def _loops(stack: Stack, loops: int, seconds: float) -> dict[str, Any]:
    base = stack.endpoints()["gateway"]
    pages = [await _Page(base).open() for _ in range(2 * loops)]
    channel = grpc.aio.insecure_channel(stack.endpoints()["match"])
    stub = match_pb2_grpc.MatchServiceStub(channel)
    games = 0

    async def loop(k: int, deadline: float) -> int:
        nonlocal games
        x, o = pages[2 * k], pages[2 * k + 1]
        moves = 0
        while time.perf_counter() < deadline:
            created = await stub.CreateMatch(
                match_pb2.CreateMatchRequest(
                    game="tic_tac_toe", players=[x.player_id, o.player_id]
                ),
                metadata=bearer_metadata(x.token),
            )
            sub = f"g{games}"
            done = await asyncio.gather(
                x.play(created.match_id, sub, 0), o.play(created.match_id, sub, 1)
            )
            moves += sum(done)
            games += 1
        return moves

    try:
        started = time.perf_counter()
        moves = sum(await asyncio.gather(*(loop(k, started + seconds) for k in range(loops))))
        elapsed = time.perf_counter() - started
    finally:
        await channel.close()
        for p in pages:
            await p.close()
    return {"loops": loops, "moves": moves, "games": games, "seconds": elapsed}


def _calls(stack: Stack, service: str, pattern: re.Pattern[str]) -> dict[str, float]:
    """A service's calls so far by method, from its /metrics."""
    text = urllib.request.urlopen(stack.metrics_address(service), timeout=5).read().decode()
    out: dict[str, float] = {}
    for method, count in pattern.findall(text):
        out[method] = out.get(method, 0.0) + float(count)
    return out


def _counts(stack: Stack) -> dict[str, dict[str, float]]:
    return {
        "rules_calls_per_move": _calls(stack, "rules", _RULES_CALLS),
        "match_calls_per_move": _calls(stack, "match", _RPC_CALLS),
    }


def run(loops: tuple[int, ...] = LOOPS, seconds: float = 5.0) -> list[dict[str, Any]]:
    rows = []
    with tempfile.TemporaryDirectory(prefix="tabletop-bench-web-") as tmp:
        settings = StackSettings.ephemeral(
            Path(tmp) / "data", extra_env={"TABLETOP_LIMITS_ENABLED": "0"}
        )
        stack = Stack(settings, echo=lambda _line: None)
        stack.start()
        try:
            pids = {c.name: c.proc.pid for c in stack.children if c.proc is not None}
            assert stack.nats is not None and stack.valkey is not None
            pids["nats"], pids["valkey"] = stack.nats.pid, stack.valkey.pid
            asyncio.run(_loops(stack, 1, 0.5))  # warm up
            for g in loops:
                cpu0, calls0 = {k: _cpu_s(p) for k, p in pids.items()}, _counts(stack)
                figures = asyncio.run(_loops(stack, g, seconds))
                cpu1, calls1 = {k: _cpu_s(p) for k, p in pids.items()}, _counts(stack)
                n = max(1, figures["moves"])
                figures["moves_per_s"] = figures["moves"] / figures["seconds"]
                figures["cpu_ms_per_move"] = {
                    k: (cpu1[k] - cpu0[k]) * 1000 / n for k in pids if cpu1[k] > cpu0[k]
                }
                for what, after in calls1.items():
                    before = calls0[what]
                    figures[what] = {
                        m: (after[m] - before.get(m, 0.0)) / n
                        for m in after
                        if after[m] > before.get(m, 0.0)
                    }
                rows.append(figures)
        finally:
            stack.stop()
    return rows


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.web", description=__doc__)
    parser.add_argument("--loops", default=",".join(map(str, LOOPS)), help="values of G")
    parser.add_argument("--seconds", type=float, default=5.0)
    args = parser.parse_args(argv)
    print(json.dumps(run(tuple(int(x) for x in args.loops.split(",")), args.seconds), indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
