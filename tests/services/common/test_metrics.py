"""The per-RPC metrics of the server's interceptor (``RpcInterceptor``): every
call timed and counted by its final status (what the error mapping chose),
streams included, calls in flight."""

from __future__ import annotations

import asyncio
import time

import grpc
import pytest
from grpc_health.v1 import health_pb2, health_pb2_grpc
from prometheus_client import REGISTRY

from services.common.grpcserver import GrpcServer, ServerConfig
from tests.services.common.test_grpcserver import SERVICE, _register


def count(method: str, code: str) -> float:
    labels = {"service": SERVICE, "method": method, "code": code}
    return REGISTRY.get_sample_value("tabletop_rpc_seconds_count", labels) or 0.0


def in_flight(method: str) -> float:
    labels = {"service": SERVICE, "method": method}
    return REGISTRY.get_sample_value("tabletop_rpc_in_flight", labels) or 0.0


async def until(condition, timeout: float = 10.0) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        assert time.monotonic() < deadline, "condition not met in time"
        await asyncio.sleep(0.01)


@pytest.fixture
async def channel():
    srv = GrpcServer(ServerConfig(host="127.0.0.1", port=0))
    srv.add_service(_register, None, SERVICE)
    await srv.start()
    async with grpc.aio.insecure_channel(srv.address) as ch:
        yield ch
    await srv.stop(0)


async def test_unary_calls_are_counted_by_their_final_status(channel) -> None:
    echo = channel.unary_unary(f"/{SERVICE}/Echo")
    ok, refused, bug = (
        count("Echo", "OK"),
        count("Echo", "FAILED_PRECONDITION"),
        count("Echo", "INTERNAL"),
    )
    await echo(b"hi")
    for payload in (b"illegal", b"bug"):
        with pytest.raises(grpc.aio.AioRpcError):
            await echo(payload)
    await until(lambda: count("Echo", "INTERNAL") == bug + 1)
    assert count("Echo", "OK") == ok + 1
    assert count("Echo", "FAILED_PRECONDITION") == refused + 1
    health = health_pb2_grpc.HealthStub(channel)
    await health.Check(health_pb2.HealthCheckRequest(service=""))
    samples = REGISTRY.collect()
    assert not any(
        s.labels.get("service") == "grpc.health.v1.Health"
        for metric in samples
        if metric.name == "tabletop_rpc_seconds"
        for s in metric.samples
    )


async def test_a_stream_is_in_flight_while_open_and_counted_cancelled(channel) -> None:
    follow = channel.unary_stream(f"/{SERVICE}/Follow")
    before = count("Follow", "CANCELLED")
    call = follow(b"")
    await call.read()
    await until(lambda: in_flight("Follow") == 1)
    call.cancel()
    await until(lambda: count("Follow", "CANCELLED") == before + 1)
    assert in_flight("Follow") == 0
