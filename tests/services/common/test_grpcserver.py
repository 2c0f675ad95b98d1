"""The shared server: health, reflection, error mapping, one log line per RPC,
graceful shutdown. A tiny raw-bytes service stands in for a real one."""

import asyncio
import contextlib
import io
import json
import uuid

import grpc
import pytest
from grpc_health.v1 import health_pb2, health_pb2_grpc

from engine_core.errors import IllegalMove, MalformedMove
from engine_core.registry import UnknownGame
from services.common.errors import NotFound, Unauthenticated, Unavailable, error_info
from services.common.grpcserver import GrpcServer, ServerConfig
from services.common.logging import bind, configure_logging
from tests.waiting import until

SERVICE = "test.Echo"
SERVING = health_pb2.HealthCheckResponse.SERVING
NOT_SERVING = health_pb2.HealthCheckResponse.NOT_SERVING


async def _echo(request: bytes, context) -> bytes:
    bind(game="echo")
    if request[:1].isdigit():
        bind(seat=int(request[:1]))
    match request:
        case b"illegal":
            raise IllegalMove("cell_taken", "cell 4 already holds X")
        case b"malformed":
            raise MalformedMove(message="bad json")
        case b"unknown_game":
            raise UnknownGame("chess", ["tic_tac_toe"])
        case b"not_found":
            raise NotFound("unknown_match", "no match m1", match="m1")
        case b"bug":
            raise ZeroDivisionError("secret internals")
        case b"slow":
            await asyncio.sleep(0.5)
        case b"no_token":
            raise Unauthenticated("missing_token", "no token")
        case b"down":
            raise Unavailable("store_unavailable", "the event store is down")
    return request


async def _count(request: bytes, context):
    for i in range(int(request)):
        yield str(i).encode()
    if request == b"3":
        raise IllegalMove("too_many", "three is too many")


async def _follow(request: bytes, context):
    """Like a watch: one message, then waits for more that never come."""
    yield b"first"
    await asyncio.sleep(3600)


async def _flood(request: bytes, context):
    """More messages than flow control lets through before the client reads."""
    for i in range(1_000_000):
        yield b"%08d" % i


def _register(servicer, server):
    server.add_generic_rpc_handlers(
        (
            grpc.method_handlers_generic_handler(
                SERVICE,
                {
                    "Echo": grpc.unary_unary_rpc_method_handler(_echo),
                    "Count": grpc.unary_stream_rpc_method_handler(_count),
                    "Follow": grpc.unary_stream_rpc_method_handler(_follow),
                    "Flood": grpc.unary_stream_rpc_method_handler(_flood),
                },
            ),
        )
    )


class LogLines:
    """The JSON log lines written since the last ``take()``."""

    def __init__(self) -> None:
        self.buffer = io.StringIO()

    def take(self) -> list[dict]:
        text = self.buffer.getvalue()
        self.buffer.seek(0)
        self.buffer.truncate()
        return [json.loads(line) for line in text.splitlines()]

    async def rpc(self, count: int = 1) -> list[dict]:
        """The ``rpc`` lines, once ``count`` of them are written (the server
        logs after it has answered, so the client may see the answer first)."""
        lines: list[dict] = []
        for _ in range(1000):  # up to 10 s on a loaded machine; usually at once
            lines += [line for line in self.take() if line["event"] == "rpc"]
            if len(lines) >= count:
                break
            await asyncio.sleep(0.01)
        return lines


@pytest.fixture
def logs():
    lines = LogLines()
    configure_logging(service="test", fmt="json", level="INFO", stream=lines.buffer)
    yield lines
    configure_logging(service="test")


@pytest.fixture
async def server(logs):
    srv = GrpcServer(ServerConfig(host="127.0.0.1", port=0, max_message_bytes=64 * 1024))
    srv.add_service(_register, None, SERVICE)
    await srv.start()
    yield srv
    await srv.stop(0)


@pytest.fixture
async def channel(server):
    async with grpc.aio.insecure_channel(server.address) as ch:
        yield ch


async def test_ok_call_logs_one_line_with_bound_fields(channel, logs):
    echo = channel.unary_unary(f"/{SERVICE}/Echo")
    logs.take()
    assert await echo(b"1hello") == b"1hello"
    rpc = await logs.rpc()
    assert len(rpc) == 1
    assert rpc[0]["method"] == f"/{SERVICE}/Echo"
    assert rpc[0]["code"] == "OK"
    assert rpc[0]["game"] == "echo" and rpc[0]["seat"] == 1
    assert rpc[0]["duration_ms"] >= 0
    # fields bound by one call do not leak into the next call's line
    assert await echo(b"x") == b"x"
    (second,) = await logs.rpc()
    assert "seat" not in second and second["game"] == "echo"


@pytest.mark.parametrize(
    ("payload", "code", "reason"),
    [
        (b"illegal", grpc.StatusCode.FAILED_PRECONDITION, "cell_taken"),
        (b"malformed", grpc.StatusCode.INVALID_ARGUMENT, "malformed_move"),
        (b"unknown_game", grpc.StatusCode.NOT_FOUND, "unknown_game"),
        (b"not_found", grpc.StatusCode.NOT_FOUND, "unknown_match"),
        (b"bug", grpc.StatusCode.INTERNAL, "internal"),
    ],
)
async def test_errors_become_rich_statuses(channel, logs, payload, code, reason):
    echo = channel.unary_unary(f"/{SERVICE}/Echo")
    logs.take()
    with pytest.raises(grpc.aio.AioRpcError) as e:
        await echo(payload)
    assert e.value.code() == code
    info = error_info(e.value)
    assert info is not None and info.domain == "tabletop" and info.reason == reason
    assert "secret internals" not in (e.value.details() or "")
    rpc = await logs.rpc()
    assert [(line["code"], line["reason"]) for line in rpc] == [(code.name, reason)]
    # and the server still answers
    assert await echo(b"ok") == b"ok"


async def test_streaming_errors_and_log(channel, logs):
    logs.take()
    count = channel.unary_stream(f"/{SERVICE}/Count")
    assert [m async for m in count(b"2")] == [b"0", b"1"]
    call = count(b"3")
    got = []
    with pytest.raises(grpc.aio.AioRpcError) as e:
        async for m in call:
            got.append(m)
    assert got == [b"0", b"1", b"2"]
    assert e.value.code() == grpc.StatusCode.FAILED_PRECONDITION
    assert error_info(e.value).reason == "too_many"
    codes = [line["code"] for line in (await logs.rpc(2))]
    assert codes == ["OK", "FAILED_PRECONDITION"]


async def test_oversized_message_is_refused(channel):
    echo = channel.unary_unary(f"/{SERVICE}/Echo")
    with pytest.raises(grpc.aio.AioRpcError) as e:
        await echo(b"x" * (65 * 1024))
    assert e.value.code() == grpc.StatusCode.RESOURCE_EXHAUSTED
    assert await echo(b"ok") == b"ok"


async def test_health_serving_then_not_serving_on_stop(channel):
    health = health_pb2_grpc.HealthStub(channel)
    for name in ("", SERVICE):
        reply = await health.Check(health_pb2.HealthCheckRequest(service=name))
        assert reply.status == SERVING


async def test_stop_reports_not_serving_before_refusing_calls(logs):
    srv = GrpcServer(ServerConfig(host="127.0.0.1", port=0, drain_seconds=0.5, grace_seconds=2))
    srv.add_service(_register, None, SERVICE)
    await srv.start()
    async with grpc.aio.insecure_channel(srv.address) as ch:
        health = health_pb2_grpc.HealthStub(ch)
        echo = ch.unary_unary(f"/{SERVICE}/Echo")
        in_flight = asyncio.ensure_future(echo(b"slow"))
        await asyncio.sleep(0.1)
        stopping = asyncio.ensure_future(srv.stop())

        async def not_serving() -> bool:
            reply = await health.Check(health_pb2.HealthCheckRequest(service=SERVICE))
            return reply.status == NOT_SERVING

        await until(not_serving, timeout=2.0, what="NOT_SERVING while the slow call runs")
        assert await in_flight == b"slow"  # the call in flight finished
        await stopping


@pytest.mark.parametrize("method", ["Follow", "Flood"])
async def test_a_stream_the_client_stops_reading_is_logged_cancelled(channel, logs, method):
    """Waiting for more (Follow) or blocked writing (Flood) when the client
    cancels: either way the call is CANCELLED, at debug level (a client that
    closes its watch is normal and must not drown the log)."""
    configure_logging(service="test", fmt="json", level="DEBUG", stream=logs.buffer)
    logs.take()
    stream = channel.unary_stream(f"/{SERVICE}/{method}")
    call = stream(b"")
    async for _ in call:
        call.cancel()
        break
    lines = await logs.rpc()
    assert [line["code"] for line in lines] == ["CANCELLED"]
    assert [line["level"] for line in lines] == ["debug"]


@pytest.mark.parametrize(
    ("payload", "level"),
    [
        (b"ok", "info"),
        (b"illegal", "info"),  # a refusal of what the client sent
        (b"malformed", "info"),
        (b"not_found", "info"),
        (b"no_token", "warning"),  # an authentication failure
        (b"bug", "error"),  # our own fault
        (b"down", "error"),  # a dependency of ours is down
    ],
)
async def test_the_level_of_a_call_says_whose_fault_it_was(channel, logs, payload, level):
    echo = channel.unary_unary(f"/{SERVICE}/Echo")
    logs.take()
    with contextlib.suppress(grpc.aio.AioRpcError):
        await echo(payload)
    rpc = await logs.rpc()
    assert [line["level"] for line in rpc] == [level]


async def test_polled_reads_are_debug_with_one_in_n_sampled_at_info(logs):
    """GetMatch-like reads: OK calls at debug, every Nth at info with
    ``sample=N``; a refused read is logged like any other call."""
    from services.common.interceptor import RpcInterceptor

    configure_logging(service="test", fmt="json", level="INFO", stream=logs.buffer)
    method = f"/{SERVICE}/Echo"
    interceptor = RpcInterceptor(read_methods={method}, sample=5)
    srv = GrpcServer(ServerConfig(host="127.0.0.1", port=0), interceptors=(interceptor,))
    srv.add_service(_register, None, SERVICE)
    await srv.start()
    try:
        async with grpc.aio.insecure_channel(srv.address) as ch:
            echo = ch.unary_unary(method)
            logs.take()
            for _ in range(10):
                await echo(b"x")
            with pytest.raises(grpc.aio.AioRpcError):
                await echo(b"not_found")
            rpc = await logs.rpc(3)
            assert [(line["code"], line.get("sample")) for line in rpc] == [
                ("OK", 5),
                ("OK", 5),
                ("NOT_FOUND", None),
            ]
    finally:
        await srv.stop(0)


class _Recorder(grpc.aio.ServerInterceptor):
    """The outermost interceptor: keeps each handler of ``method`` that the
    interceptors below it hand to grpc."""

    def __init__(self, method: str) -> None:
        self.method = method
        self.handlers: list = []

    async def intercept_service(self, continuation, handler_call_details):
        handler = await continuation(handler_call_details)
        if handler_call_details.method == self.method:
            self.handlers.append(handler)
        return handler


async def test_a_guard_of_its_own_after_the_one_interceptor(valkey_server) -> None:
    """A guard as an interceptor of its own (rate limits on), after
    ``RpcInterceptor``: grpc is handed the same wrapped handler on each call
    of a method, whoever calls (both cache their wrapping per method), and
    the guard's refusal leaves as a rich status."""
    from services.common.auth import AuthSettings, Tokens
    from services.common.errors import retry_info
    from services.common.interceptor import RpcInterceptor
    from services.common.ratelimit import (
        LimitSettings,
        Rate,
        RateLimiter,
        RateLimitInterceptor,
        _Rule,
    )

    method = f"/{SERVICE}/Echo"
    rule = f"own_guard_{uuid.uuid4().hex}"  # a key of its own in the shared store
    limiter = RateLimiter.connect(valkey_server.url, LimitSettings(enabled=True))
    guard = RateLimitInterceptor(
        limiter, Tokens(AuthSettings(secret="x" * 32)), {method: _Rule(rule, Rate(2, 60))}
    )
    recorder = _Recorder(method)
    srv = GrpcServer(
        ServerConfig(host="127.0.0.1", port=0), interceptors=(recorder, RpcInterceptor(), guard)
    )
    srv.add_service(_register, None, SERVICE)
    await srv.start()
    try:
        async with grpc.aio.insecure_channel(srv.address) as ch:
            echo = ch.unary_unary(method)
            # no valid token: each call is counted by the peer's address
            assert await echo(b"a", metadata=(("authorization", "Bearer a"),)) == b"a"
            assert await echo(b"b", metadata=(("authorization", "Bearer b"),)) == b"b"
            with pytest.raises(grpc.aio.AioRpcError) as e:
                await echo(b"c")
        assert e.value.code() == grpc.StatusCode.RESOURCE_EXHAUSTED
        info = error_info(e.value)
        assert info is not None and info.domain == "tabletop"
        assert info.reason == "rate_limited" and info.metadata["rule"] == rule
        assert retry_info(e.value) is not None
        first, second, third = recorder.handlers
        assert first is second and second is third
        assert first.unary_unary is not _echo
    finally:
        await srv.stop(0)
        await limiter.close()


async def test_the_one_interceptor_wraps_a_method_once_not_once_per_call(valkey_server) -> None:
    """``RpcInterceptor`` (the default, rate limits on as a guard) hands back
    the same wrapped handler on each call of a method."""
    from services.common.auth import AuthSettings, Tokens
    from services.common.interceptor import RpcInterceptor
    from services.common.ratelimit import (
        LimitSettings,
        Rate,
        RateLimiter,
        RateLimitInterceptor,
        _Rule,
    )

    method = f"/{SERVICE}/Echo"
    limiter = RateLimiter.connect(valkey_server.url, LimitSettings(enabled=True))
    try:
        guard = RateLimitInterceptor(
            limiter, Tokens(AuthSettings(secret="x" * 32)), {method: _Rule("r", Rate(5, 1))}
        )
        interceptor = RpcInterceptor(guards=[guard])
        handler = grpc.unary_unary_rpc_method_handler(_echo)

        async def lookup(details):
            return handler

        class Details(grpc.HandlerCallDetails):
            def __init__(self, metadata):
                self.method, self.invocation_metadata = method, metadata

        first = await interceptor.intercept_service(lookup, Details((("authorization", "a"),)))
        second = await interceptor.intercept_service(lookup, Details((("authorization", "b"),)))
        assert first is second
        assert first is not handler and first.unary_unary is not handler.unary_unary
    finally:
        await limiter.close()


async def test_the_rpc_line_follows_the_level_of_each_configuration(channel, logs) -> None:
    """The ``rpc`` line's logger is resolved once per configuration: a level
    turned off writes nothing, turned on again the line is back."""
    echo = channel.unary_unary(f"/{SERVICE}/Echo")
    configure_logging(service="test", fmt="json", level="WARNING", stream=logs.buffer)
    logs.take()
    assert await echo(b"quiet") == b"quiet"
    with pytest.raises(grpc.aio.AioRpcError):
        await echo(b"no_token")  # a warning: still written
    (line,) = await logs.rpc()
    assert line["code"] == "UNAUTHENTICATED" and line["level"] == "warning"
    configure_logging(service="test", fmt="json", level="INFO", stream=logs.buffer)
    assert await echo(b"loud") == b"loud"
    (line,) = await logs.rpc()
    assert line["code"] == "OK" and line["level"] == "info" and line["component"] == "rpc"
