"""Per-RPC Prometheus metrics for every service: one interceptor.

``tabletop_rpc_seconds{service, method, code}`` is a histogram of every call's
latency by its final gRPC status (its ``_count`` is the call count by status:
rates, error ratios and latency quantiles of every RPC of every service, the
streams included: a stream's latency is how long it stayed open).
``tabletop_rpc_in_flight{service, method}`` counts the calls running now.

``GrpcServer`` puts ``MetricsInterceptor`` first (outermost), so it sees the
status the error mapping chose and measures the whole call. The label
children are resolved once per method and status (``prepare`` creates them
for every method of the services at start-up, so ``/metrics`` lists every RPC
before its first call); a call costs two clock reads, one dict look-up and
the observation.
"""

from __future__ import annotations

import time
from collections.abc import AsyncIterator, Awaitable, Callable, Iterable
from typing import Any

import grpc
from google.protobuf import descriptor_pool
from prometheus_client import Gauge, Histogram

from services.common.logging import as_async_iter, code_name, wrap_handler

__all__ = ["IN_FLIGHT", "RPC_SECONDS", "MetricsInterceptor", "methods_of"]

RPC_SECONDS = Histogram(
    "tabletop_rpc_seconds",
    "gRPC calls handled, by service, method and final status code",
    ["service", "method", "code"],
    buckets=(0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 10, 60),
)
IN_FLIGHT = Gauge(
    "tabletop_rpc_in_flight",
    "gRPC calls running now, by service and method",
    ["service", "method"],
    multiprocess_mode="livesum",
)

_SKIPPED = ("/grpc.health.v1.", "/grpc.reflection.")


def methods_of(service_names: Iterable[str]) -> list[str]:
    """``/package.Service/Method`` of every method of the named services
    (those whose descriptors are loaded; others are skipped)."""
    pool = descriptor_pool.Default()
    out: list[str] = []
    for name in service_names:
        try:
            service = pool.FindServiceByName(name)
        except KeyError:
            continue
        out += [f"/{service.full_name}/{m.name}" for m in service.methods]
    return out


class _Method:
    """The label children of one method, resolved once, and the last handler
    wrapped for it."""

    __slots__ = ("by_code", "handler", "in_flight", "method", "service", "skip", "wrapped")

    def __init__(self, full: str) -> None:
        service, _, method = full.lstrip("/").rpartition("/")
        self.service = service
        self.method = method
        self.skip = full.startswith(_SKIPPED)
        self.by_code: dict[str, Any] = {}
        self.in_flight: Any = None
        if not self.skip:
            self.by_code["OK"] = RPC_SECONDS.labels(service, method, "OK")
            self.in_flight = IN_FLIGHT.labels(service, method)
        self.handler: Any = None
        self.wrapped: Any = None

    def observe(self, code: str, seconds: float) -> None:
        child = self.by_code.get(code)
        if child is None:
            child = self.by_code[code] = RPC_SECONDS.labels(self.service, self.method, code)
        child.observe(seconds)


class MetricsInterceptor(grpc.aio.ServerInterceptor):
    """Times every call and counts it by status (health and reflection are not
    counted). The wrapped handler is built once per method and reused while the
    handler below stays the same object."""

    def __init__(self) -> None:
        self._methods: dict[str, _Method] = {}

    def prepare(self, methods: Iterable[str]) -> None:
        """Create the series of these methods now (status OK, zero calls)."""
        for full in methods:
            self._method(full)

    def _method(self, full: str) -> _Method:
        m = self._methods.get(full)
        if m is None:
            m = self._methods[full] = _Method(full)
        return m

    async def intercept_service(
        self,
        continuation: Callable[[grpc.HandlerCallDetails], Awaitable[grpc.RpcMethodHandler]],
        handler_call_details: grpc.HandlerCallDetails,
    ) -> grpc.RpcMethodHandler:
        handler = await continuation(handler_call_details)
        if handler is None:
            return handler
        full = handler_call_details.method
        m = self._methods.get(full) or self._method(full)
        if m.skip:
            return handler
        if m.handler is handler:
            return m.wrapped
        if handler.unary_unary is not None:
            wrapped = handler._replace(unary_unary=_timed(handler.unary_unary, False, m))
        elif handler.unary_stream is not None:
            wrapped = handler._replace(unary_stream=_timed(handler.unary_stream, True, m))
        else:
            wrapped = wrap_handler(
                handler, lambda behavior, streaming: _timed(behavior, streaming, m)
            )
        m.handler, m.wrapped = handler, wrapped
        return wrapped


def _timed(behavior: Callable[..., Any], streaming: bool, m: _Method) -> Callable[..., Any]:
    perf_counter = time.perf_counter
    in_flight = m.in_flight
    if streaming:

        async def stream(request_or_iterator: Any, context: Any) -> AsyncIterator[Any]:
            started = perf_counter()
            in_flight.inc()
            error: BaseException | None = None
            try:
                async for item in as_async_iter(behavior(request_or_iterator, context)):
                    yield item
            except BaseException as e:
                error = e
                raise
            finally:
                in_flight.dec()
                m.observe(code_name(context, error), perf_counter() - started)

        return stream

    async def unary(request_or_iterator: Any, context: Any) -> Any:
        started = perf_counter()
        in_flight.inc()
        error: BaseException | None = None
        try:
            return await behavior(request_or_iterator, context)
        except BaseException as e:
            error = e
            raise
        finally:
            in_flight.dec()
            m.observe(code_name(context, error), perf_counter() - started)

    return unary
