"""The gRPC baseline: a unary echo of a 4 KB message between two processes.

The server is a bare grpc.aio server with one generic bytes-in/bytes-out method
(no protobuf work), so the figure is the cost of the transport itself.
"""

from __future__ import annotations

import asyncio
import subprocess
import sys
import time

import grpc

from bench.stats import summary_ms

METHOD = "/tabletop.bench.Echo/Echo"


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
    else:
        print(run())
