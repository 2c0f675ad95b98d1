"""Where the rules hop's time goes: one call at a time over an ``ApplyMoves``
stream, the same client against three servers, each its own process.

* ``echo``: the skeleton's rules (``bench.skeleton``): raw bytes echoed on a
  bare grpc.aio stream, with its own client; what the hop's transport costs;
* ``cached``: a grpc.aio ``RulesService`` whose ``ApplyMoves`` answers each
  call from a cache of the rules service's own answers (the first time a call
  is seen, the real work answers it): the same protobuf messages and stream
  bookkeeping as the rules service, without the engine, the log line or the
  metrics of each call;
* ``rules``: the rules service (``python -m services.rules --workers 1``).

``cached`` and ``rules`` are called through the match service's client
(``RulesClient`` over two streams), playing the benchmark's 9-move
tic-tac-toe draw over and over. Per server: the call's p50/p99 and the
server's CPU per call. And the same work in a warm loop in this process
(``in_process``: one stream call's whole handling, ``_one_call``, and the
engine's part of it, ``_apply_move``), so that what a served call costs
can be read against what its code takes when nothing else runs; and the
same again with the caches emptied before each call (``one_call_cold``,
``apply_move_cold``: 32 MB of other memory read first), what the code takes
in a process that other processes ran in between, as at G=1.

    python -m bench.rules_hop [--calls N]       # the figures, as JSON
"""

from __future__ import annotations

import argparse
import asyncio
import contextvars
import json
import subprocess
import sys
import time
from collections.abc import AsyncIterator, Callable, Coroutine
from typing import Any

import grpc

from bench import skeleton
from bench.match_e2e import _cpu_s, _start_rules, start_module
from bench.stats import summary_ms
from services.common.eventloop import run as run_loop
from services.common.logging import configure_logging
from services.common.servers import free_port
from services.rules.client import CALLS_HEADER, INSTANCE_HEADER, RulesClient
from services.rules.servicer import STREAM_CALLS, RulesServicer
from tabletop.rules.v1 import rules_pb2, rules_pb2_grpc

GAME = "tic_tac_toe"
SETUP_ENTROPY = b"s" * 32
MOVE_ENTROPY = b"m" * 32
COLD_BYTES = 32 << 20
"""What ``in_process`` reads before each cold call: many times a core's caches."""


class CachedRules(RulesServicer):
    """``ApplyMoves`` answered from a cache of this servicer's own answers,
    keyed by each call's request bytes."""

    def __init__(self) -> None:
        super().__init__()
        self.answers: dict[bytes, bytes] = {}

    async def ApplyMoves(
        self, requests: AsyncIterator[rules_pb2.ApplyMovesRequest], context: Any
    ) -> AsyncIterator[rules_pb2.ApplyMovesResponse]:
        await context.send_initial_metadata(
            ((INSTANCE_HEADER, self.instance), (CALLS_HEADER, STREAM_CALLS))
        )
        async for batch in requests:
            out = rules_pb2.ApplyMovesResponse()
            for call in batch.calls:
                kind = call.WhichOneof("call")
                key = kind.encode() + getattr(call, kind).SerializeToString()
                answer = self.answers.get(key)
                result = out.results.add()
                if answer is None:
                    work = rules_pb2.ApplyMovesResponse.Result()
                    contextvars.copy_context().run(self._one_call, call, time.perf_counter(), work)
                    answer = self.answers[key] = work.SerializeToString()
                result.MergeFromString(answer)
                result.id = call.id
            yield out


async def serve_cached(port: int) -> None:
    server = grpc.aio.server()
    rules_pb2_grpc.add_RulesServiceServicer_to_server(CachedRules(), server)
    server.add_insecure_port(f"127.0.0.1:{port}")
    await server.start()
    await server.wait_for_termination()


def _moves() -> list[str]:
    return [move for _, move in skeleton.DRAW]


Drive = Callable[[str, int, Callable[[], None]], Coroutine[Any, Any, tuple[list[int], int]]]
"""``drive(address, calls, start)``: warms up, calls ``start()``, then makes
at least ``calls`` timed calls (whole games); the timings, and every call
made after ``start``."""


async def _through_client(
    address: str, calls: int, start: Callable[[], None]
) -> tuple[list[int], int]:
    """At least ``calls`` timed ``apply_move`` calls (after 30 games of warm-up),
    each game set up with a ``new_game`` call (not timed)."""
    client = RulesClient(address, streams=2)
    timed: list[int] = []
    made = 0
    try:

        async def game(record: bool) -> int:
            state = (await client.new_game(GAME, 2, entropy=SETUP_ENTROPY)).state
            for i, move in enumerate(_moves()):
                started = time.perf_counter_ns()
                played = await client.apply_move("", state, i % 2, move, entropy=MOVE_ENTROPY)
                if record:
                    timed.append(time.perf_counter_ns() - started)
                state = played.state
            return 1 + len(_moves())

        for _ in range(30):
            await game(False)
        start()
        while len(timed) < calls:
            made += await game(True)
    finally:
        await client.close()
    return timed, made


async def _through_echo(
    address: str, calls: int, start: Callable[[], None]
) -> tuple[list[int], int]:
    async with grpc.aio.insecure_channel(address) as channel:
        rules = skeleton._Rules(channel)
        try:
            for _ in range(300):
                await rules.apply()
            start()
            timed = []
            for _ in range(calls):
                started = time.perf_counter_ns()
                await rules.apply()
                timed.append(time.perf_counter_ns() - started)
            return timed, calls
        finally:
            rules.call.cancel()
            for task in rules.tasks:
                task.cancel()
            await asyncio.gather(*rules.tasks, return_exceptions=True)


def _served(proc: subprocess.Popen[str], address: str, drive: Drive, calls: int) -> dict[str, Any]:
    """The timed calls' latency, and the server's CPU per call over every
    call made once warm (a ``new_game`` per game among them)."""
    cpu = [0.0]

    def start() -> None:
        cpu[0] = _cpu_s(proc.pid)

    timed, made = run_loop(drive(address, calls, start))
    figures: dict[str, Any] = summary_ms(timed)
    figures["server_cpu_us_per_call"] = (_cpu_s(proc.pid) - cpu[0]) * 1e6 / made
    return figures


def in_process(calls: int, cold_calls: int = 200) -> dict[str, Any]:
    """The warm-loop cost of one stream call's handling and of its engine part
    (logging at warning, as the benchmarks run the rules service), and the
    same with the caches emptied before each of ``cold_calls`` calls
    (``one_call_cold``, ``apply_move_cold``)."""
    configure_logging(service="bench", level="WARNING")
    servicer = RulesServicer()
    new = servicer._new_game(rules_pb2.NewGameRequest(game=GAME, players=2, entropy=SETUP_ENTROPY))
    requests = []
    state = new.state
    for i, move in enumerate(_moves()):
        request = rules_pb2.ApplyMoveRequest(
            state=state, seat=i % 2, move=move, entropy=MOVE_ENTROPY
        )
        requests.append(request)
        state = servicer._apply_move(request).state
    stream_calls = []
    for i, request in enumerate(requests):
        call = rules_pb2.ApplyMovesRequest.Call(id=i + 1, timeout_ms=2000)
        call.request.CopyFrom(request)
        stream_calls.append(call)

    def one_call(i: int) -> None:
        result = rules_pb2.ApplyMovesResponse.Result()
        contextvars.copy_context().run(
            servicer._one_call, stream_calls[i % 9], time.perf_counter(), result
        )

    def apply_move(i: int) -> None:
        contextvars.copy_context().run(servicer._apply_move, requests[i % 9])

    far = bytearray(COLD_BYTES)  # memory nothing else uses, read before each cold call
    out = {}
    for name, work in (("one_call", one_call), ("apply_move", apply_move)):
        for i in range(500):
            work(i)
        timed = []
        for i in range(calls):
            started = time.perf_counter_ns()
            work(i)
            timed.append(time.perf_counter_ns() - started)
        out[name] = summary_ms(timed)
        # The same with the caches emptied before each call (a read of
        # ``far``, many times the per-core caches): what the work costs
        # a process that something else ran in between, as a served call's
        # does when the moves come one at a time.
        timed = []
        for i in range(cold_calls):
            far.count(1)
            started = time.perf_counter_ns()
            work(i)
            timed.append(time.perf_counter_ns() - started)
        out[f"{name}_cold"] = summary_ms(timed)
    return out


def run(calls: int = 3000) -> dict[str, Any]:
    """The figures (see the module)."""
    out: dict[str, Any] = {"game": GAME, "calls": calls}
    echo_port, cached_port = free_port(), free_port()
    echo = start_module(["bench.skeleton", "rules"], echo_port, "skeleton rules")
    cached = start_module(["bench.rules_hop", "cached"], cached_port, "cached rules")
    rules, rules_address = _start_rules(1)
    try:
        out["echo"] = _served(echo, f"127.0.0.1:{echo_port}", _through_echo, calls)
        out["cached"] = _served(cached, f"127.0.0.1:{cached_port}", _through_client, calls)
        out["rules"] = _served(rules, rules_address, _through_client, calls)
    finally:
        for proc in (echo, cached, rules):
            proc.terminate()
            proc.wait(15)
    out["in_process"] = in_process(calls, cold_calls=max(20, calls // 15))
    out["rules_over_cached_p50"] = out["rules"]["p50_ms"] / out["cached"]["p50_ms"]
    out["cached_over_echo_p50"] = out["cached"]["p50_ms"] / out["echo"]["p50_ms"]
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.rules_hop", description=__doc__)
    parser.add_argument("role", nargs="?", choices=("cached",), help="(internal)")
    parser.add_argument("--port", type=int)
    parser.add_argument("--calls", type=int, default=3000)
    args = parser.parse_args(argv)
    if args.role == "cached":
        run_loop(serve_cached(args.port))
        return 0
    print(json.dumps(run(args.calls), indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
