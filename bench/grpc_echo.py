"""The gRPC baselines: a unary echo of a 4 KB message between two processes,
and a streamed echo's server CPU.

The server is a bare grpc.aio server with one generic bytes-in/bytes-out method
(no protobuf work), so the figure is the cost of the transport itself.

The streamed echo (``stream_echo``): a bare grpc.aio server on uvloop (as the
services run) echoing each 100-byte message of a bidi stream, driven by
``streams`` streams at once (one message in flight each) for a few seconds;
its figure is the server process's CPU per echo (one message read and one
written, from ``/proc/<pid>/stat``): what the transport alone costs a server
per message pair, at 1 stream and at 50 (the play benchmark's G=50 opens
about as many).
"""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import grpc
import uvloop

from bench.stats import summary_ms

METHOD = "/tabletop.bench.Echo/Echo"


STREAM_METHOD = "/tabletop.bench.Echo/Stream"


async def serve_stream() -> None:
    async def stream(requests: Any, context: grpc.aio.ServicerContext) -> Any:
        async for r in requests:
            yield r

    handler = grpc.method_handlers_generic_handler(
        "tabletop.bench.Echo", {"Stream": grpc.stream_stream_rpc_method_handler(stream)}
    )
    server = grpc.aio.server()
    server.add_generic_rpc_handlers((handler,))
    port = server.add_insecure_port("127.0.0.1:0")
    await server.start()
    print(port, flush=True)
    await server.wait_for_termination()


async def _drive_streams(port: int, streams: int, seconds: float) -> int:
    async with grpc.aio.insecure_channel(f"127.0.0.1:{port}") as channel:
        open_stream = channel.stream_stream(STREAM_METHOD)
        payload = b"x" * 100
        deadline = time.monotonic() + seconds
        count = 0

        async def one() -> None:
            nonlocal count
            call = open_stream()
            while time.monotonic() < deadline:
                await call.write(payload)
                assert await call.read() == payload
                count += 1
            await call.done_writing()

        await asyncio.gather(*(one() for _ in range(streams)))
        return count


def _cpu_s(pid: int) -> float:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def run_stream(streams: tuple[int, ...] = (1, 50), seconds: float = 3.0) -> list[dict[str, Any]]:
    proc = subprocess.Popen(
        [sys.executable, "-m", "bench.grpc_echo", "serve-stream"], stdout=subprocess.PIPE, text=True
    )
    try:
        port = int(proc.stdout.readline())  # type: ignore[union-attr]
        uvloop.run(_drive_streams(port, 4, 0.5))  # warm up
        out = []
        for n in streams:
            c0 = _cpu_s(proc.pid)
            echoes = uvloop.run(_drive_streams(port, n, seconds))
            c1 = _cpu_s(proc.pid)
            out.append(
                {
                    "streams": n,
                    "echoes_per_s": echoes / seconds,
                    "server_cpu_us_per_echo": (c1 - c0) * 1e6 / max(1, echoes),
                }
            )
        return out
    finally:
        proc.terminate()
        proc.wait(10)


async def serve() -> None:
    def echo(request: bytes, context: grpc.aio.ServicerContext) -> bytes:
        return request

    handler = grpc.method_handlers_generic_handler(
        "tabletop.bench.Echo", {"Echo": grpc.unary_unary_rpc_method_handler(echo)}
    )
    server = grpc.aio.server()
    server.add_generic_rpc_handlers((handler,))
    port = server.add_insecure_port("127.0.0.1:0")
    await server.start()
    print(port, flush=True)
    await server.wait_for_termination()


def run(calls: int = 3000, size: int = 4096) -> dict[str, float]:
    proc = subprocess.Popen(
        [sys.executable, "-m", "bench.grpc_echo", "serve"], stdout=subprocess.PIPE, text=True
    )
    try:
        port = int(proc.stdout.readline())  # type: ignore[union-attr]
        with grpc.insecure_channel(f"127.0.0.1:{port}") as channel:
            echo = channel.unary_unary(METHOD)
            payload = b"x" * size
            for _ in range(200):  # warm up
                echo(payload)
            samples = []
            for _ in range(calls):
                t = time.perf_counter_ns()
                assert echo(payload) == payload
                samples.append(time.perf_counter_ns() - t)
        return {"bytes": size, **summary_ms(samples)}
    finally:
        proc.terminate()
        proc.wait(10)


if __name__ == "__main__":
    if sys.argv[1:] == ["serve"]:
        asyncio.run(serve())
    elif sys.argv[1:] == ["serve-stream"]:
        uvloop.run(serve_stream())
    else:
        print(run(), run_stream())
