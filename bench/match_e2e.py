"""End-to-end ``SubmitMove`` through the match service.

Starts its own nats-server (JetStream, file store) and valkey-server, runs the
match service as its own process (``python -m services.match``; the rules in
that process, or with ``--remote-rules`` the rules service as one more process),
and drives it over gRPC from this process:

* **sequential**: one match at a time, one move at a time; the latency of
  every ``SubmitMove`` as the client sees it (p50/p99);
* **sequential_play**: the same over ``PlayMatch`` (a stream per seat): from
  a move sent on its seat's stream until the frame answering it;
* **concurrent**: 64 matches played at once (one coroutine each, one move at
  a time per match); the moves per second over the whole run.

Tic-tac-toe is played with moves from seeded engine playouts (its moves do not
depend on the entropy the service draws), so the client needs no state.

``python -m bench.match_e2e [--quick] [--remote-rules]`` prints the figures as JSON; ``run()``
returns them to ``python -m bench``.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import socket
import subprocess
import sys
import time
from collections.abc import Sequence
from typing import Any

import grpc
import msgspec

from bench.stats import summary_ms
from engine_core.registry import default_registry
from engine_core.testing import playout
from services.common.auth import AuthSettings, Tokens, bearer_metadata
from services.common.servers import NatsServer, ValkeyServer, free_port
from tabletop.match.v1 import match_pb2, match_pb2_grpc

GAME = "tic_tac_toe"
SECRET = "bench-secret-0123456789abcdef0123456789abcdef"
_json = msgspec.json.Encoder()


def _scripts(n: int) -> list[list[tuple[int, str]]]:
    """``n`` whole tic-tac-toe games as (seat, move JSON) lists."""
    game = default_registry().get(GAME)
    out = []
    for seed in range(n):
        p = playout(game, 2, seed)
        out.append([(s.seat, _json.encode(s.move).decode()) for s in p.steps])
    return out


class _Client:
    def __init__(self, address: str) -> None:
        self.channel = grpc.aio.insecure_channel(address)
        self.stub = match_pb2_grpc.MatchServiceStub(self.channel)
        tokens = Tokens(AuthSettings(secret=SECRET))
        self.players = ["guest:bench-x", "guest:bench-o"]
        self.meta = [bearer_metadata(tokens.issue(p)) for p in self.players]

    async def play(self, script: list[tuple[int, str]], samples: list[int] | None) -> int:
        created = await self.stub.CreateMatch(
            match_pb2.CreateMatchRequest(game=GAME, players=self.players), metadata=self.meta[0]
        )
        for seat, move in script:
            t = time.perf_counter_ns()
            await self.stub.SubmitMove(
                match_pb2.SubmitMoveRequest(match_id=created.match_id, move_json=move),
                metadata=self.meta[seat],
            )
            if samples is not None:
                samples.append(time.perf_counter_ns() - t)
        return len(script)


class _PlayClient(_Client):
    """The same games over ``PlayMatch``: one stream per seat; a move's
    latency is from sending it on its seat's stream until the frame that
    answers it (sent once its commit is in JetStream, as SubmitMove's reply)."""

    async def play(self, script: list[tuple[int, str]], samples: list[int] | None) -> int:
        created = await self.stub.CreateMatch(
            match_pb2.CreateMatchRequest(game=GAME, players=self.players), metadata=self.meta[0]
        )
        calls = [self.stub.PlayMatch(metadata=self.meta[s]) for s in (0, 1)]
        for call in calls:
            await call.write(
                match_pb2.PlayRequest(open=match_pb2.PlayOpen(match_id=created.match_id))
            )
        for i, (seat, move) in enumerate(script):
            ref = str(i)
            t = time.perf_counter_ns()
            await calls[seat].write(
                match_pb2.PlayRequest(move=match_pb2.PlayMove(ref=ref, move_json=move))
            )
            while (frame := await calls[seat].read()).ref != ref:
                if frame is grpc.aio.EOF:
                    raise RuntimeError("the stream ended before the move's answer")
            if samples is not None:
                samples.append(time.perf_counter_ns() - t)
            if frame.WhichOneof("kind") == "error":
                raise RuntimeError(f"move refused: {frame.error.reason}")
        for call in calls:  # each stream ends with the match
            await call.done_writing()
            while await call.read() is not grpc.aio.EOF:
                pass
        return len(script)


async def _sequential(
    address: str,
    moves: int,
    client_type: type[_Client] | None = None,
    scripts: list[list[tuple[int, str]]] | None = None,
) -> dict[str, Any]:
    """``scripts``: the games to play in turn (default: seeded playouts)."""
    client = (client_type or _Client)(address)
    scripts = scripts or _scripts(max(8, moves // 5))
    await client.play(scripts[0], None)  # warm up
    samples: list[int] = []
    i = 1
    while len(samples) < moves:
        await client.play(scripts[i % len(scripts)], samples)
        i += 1
    await client.channel.close()
    return {"moves": len(samples), "matches": i - 1, **summary_ms(samples)}


async def _concurrent(address: str, matches: int, seconds: float) -> dict[str, Any]:
    client = _Client(address)
    scripts = _scripts(64)
    latencies: list[int] = []
    deadline = time.perf_counter() + seconds

    async def worker(k: int) -> None:
        i = k
        while time.perf_counter() < deadline:
            await client.play(scripts[i % len(scripts)], latencies)
            i += matches

    started = time.perf_counter()
    await asyncio.gather(*(worker(k) for k in range(matches)))
    elapsed = time.perf_counter() - started
    moves = len(latencies)
    await client.channel.close()
    return {
        "matches_at_once": matches,
        "moves": moves,
        "seconds": elapsed,
        "moves_per_s": moves / elapsed,
        "latency": summary_ms(latencies),
    }


def _wait_listening(proc: subprocess.Popen[str], port: int, what: str) -> None:
    """Until ``port`` accepts connections (the services log their start-up line
    at info, which the benchmarks turn off: they watch the port instead)."""
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise RuntimeError(f"the {what} exited before listening")
        with socket.socket() as s:
            s.settimeout(0.2)
            if s.connect_ex(("127.0.0.1", port)) == 0:
                return
        time.sleep(0.05)
    proc.kill()
    raise RuntimeError(f"the {what} did not listen on port {port} within 60 s")


def start_module(args: list[str], port: int, what: str) -> subprocess.Popen[str]:
    """``python -m <args> --port <port>`` (quiet) once it listens there."""
    proc = subprocess.Popen(
        [sys.executable, "-m", *args, "--port", str(port)],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        text=True,
    )
    _wait_listening(proc, port, what)
    return proc


def _start_rules(
    workers: int, cwd: str | None = None, launcher: Sequence[str] = ()
) -> tuple[subprocess.Popen[str], str]:
    """The rules service as its own process(es) on a free port (the code in
    ``cwd``, default this checkout); ``launcher``: a module (and its
    arguments) that runs the service's (``bench.marks``)."""
    port = free_port()
    command = [sys.executable, "-m", *launcher, "services.rules", "--host", "127.0.0.1"]
    proc = subprocess.Popen(
        [*command, "--port", str(port), "--workers", str(workers)],
        env={**os.environ, "TABLETOP_LOG_LEVEL": "WARNING", **_source_env(cwd)},
        cwd=cwd,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        text=True,
    )
    _wait_listening(proc, port, "rules service")
    return proc, f"127.0.0.1:{port}"


def _source_env(cwd: str | None) -> dict[str, str]:
    return {} if cwd is None else {"PYTHONPATH": cwd}


def _start_service(
    nats: NatsServer,
    valkey: ValkeyServer,
    rules_addr: str = "",
    cwd: str | None = None,
    launcher: Sequence[str] = (),
) -> tuple[subprocess.Popen[str], str]:
    """The match service on a free port (``cwd``, ``launcher``: as ``_start_rules``)."""
    port = free_port()
    env = {
        **os.environ,
        "TABLETOP_NATS_URL": nats.url,
        "TABLETOP_REDIS_URL": valkey.url,
        "TABLETOP_JWT_SECRET": SECRET,
        "TABLETOP_MATCH_HOST": "127.0.0.1",
        "TABLETOP_MATCH_PORT": str(port),
        "TABLETOP_LOG_LEVEL": "WARNING",
        "TABLETOP_RULES_ADDR": rules_addr,
        # Two guests play every move of the load: per-caller limits are off.
        "TABLETOP_LIMITS_ENABLED": "0",
        **_source_env(cwd),
    }
    proc = subprocess.Popen(
        [sys.executable, "-m", *launcher, "services.match"],
        env=env,
        cwd=cwd,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        text=True,
    )
    _wait_listening(proc, port, "match service")
    return proc, f"127.0.0.1:{port}"


def _cpu_s(pid: int | None) -> float:
    """User + system CPU seconds of a process so far (Linux; 0 elsewhere)."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            fields = f.read().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
    except (OSError, ValueError, IndexError):
        return 0.0


def run(
    moves: int = 2000,
    matches: int = 64,
    seconds: float = 10.0,
    *,
    remote_rules: bool = False,
    rules_workers: int = 1,
) -> dict[str, Any]:
    """The figures; ``cpu_ms_per_move`` is the CPU the match service process
    (and nats-server) spent per move, which the shared machine's load does not
    distort as much as wall-clock figures. ``remote_rules``: the rules service
    as its own process (as deployed) instead of the engine in process."""
    with NatsServer() as nats, ValkeyServer() as valkey:
        rules = _start_rules(rules_workers) if remote_rules else None
        proc, address = _start_service(nats, valkey, rules[1] if rules else "")
        try:
            p0, m0 = _cpu_s(proc.pid), _cpu_s(nats.pid)
            sequential_play = asyncio.run(_sequential(address, moves, _PlayClient))
            c0, n0 = _cpu_s(proc.pid), _cpu_s(nats.pid)
            sequential = asyncio.run(_sequential(address, moves))
            c1, n1 = _cpu_s(proc.pid), _cpu_s(nats.pid)
            concurrent = asyncio.run(_concurrent(address, matches, seconds))
            c2, n2 = _cpu_s(proc.pid), _cpu_s(nats.pid)
        finally:
            proc.terminate()
            proc.wait(15)
            if rules is not None:
                rules[0].terminate()
                rules[0].wait(15)
    # warm-up and creations are included in the CPU figures (about 1 in 8 calls)
    sequential["service_cpu_ms_per_move"] = (c1 - c0) * 1000 / sequential["moves"]
    sequential["nats_cpu_ms_per_move"] = (n1 - n0) * 1000 / sequential["moves"]
    sequential_play["service_cpu_ms_per_move"] = (c0 - p0) * 1000 / sequential_play["moves"]
    sequential_play["nats_cpu_ms_per_move"] = (n0 - m0) * 1000 / sequential_play["moves"]
    concurrent["service_cpu_ms_per_move"] = (c2 - c1) * 1000 / max(1, concurrent["moves"])
    concurrent["nats_cpu_ms_per_move"] = (n2 - n1) * 1000 / max(1, concurrent["moves"])
    return {
        "game": GAME,
        "rules": f"service ({rules_workers} process)" if remote_rules else "in process",
        "cpus": os.cpu_count(),
        "load_average": os.getloadavg(),
        "sequential": sequential,
        "sequential_play": sequential_play,
        "concurrent": concurrent,
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.match_e2e", description=__doc__)
    parser.add_argument("--quick", action="store_true", help="a short run (smoke test)")
    parser.add_argument(
        "--remote-rules", action="store_true", help="the rules service as its own process"
    )
    args = parser.parse_args(argv)
    short = {"moves": 200, "seconds": 2.0} if args.quick else {}
    figures = run(**short, remote_rules=args.remote_rules)
    print(json.dumps(figures, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
