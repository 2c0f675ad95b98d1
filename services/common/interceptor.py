"""The one interceptor of every service: metrics, log line, error mapping,
guards and bounds in a single wrapper per method.

``RpcInterceptor`` times and counts every call (``tabletop_rpc_seconds``,
``tabletop_rpc_in_flight``, by the final status: ``services.common.metrics``),
writes its one ``rpc`` line at the level that status calls for and hands it
to the observers (``services.common.logging``), turns the exceptions of the
guards, the bounds and the handler into rich statuses
(``services.common.errors``), runs the guards (rate limits, the service-token
gate) and checks the request's bounds (``services.common.bounds``), last, so
the guards see a request before its fields are checked. A call passes through
one async wrapper; the wrapper, its Prometheus label children and its log
decisions are built once per method.

A guard takes part when it offers ``unary_check(method)`` (an async check run
before a unary handler, or None) and ``stream_wrapper(method)`` (a wrapper of
a response-streaming behaviour, or None); ``RateLimitInterceptor`` and
``ServiceTokenInterceptor`` do.
"""

from __future__ import annotations

import time
from collections.abc import AsyncIterator, Awaitable, Callable, Iterable, Sequence
from typing import Any, Protocol

import grpc

from services.common.bounds import DEFAULT_LIMITS, Limits, _checked, _safe
from services.common.errors import _PASS_THROUGH, abort
from services.common.logging import (
    QUIET_PREFIXES,
    READ_METHODS,
    RpcObserver,
    _Sampler,
    bind,
    code_name,
    default_sample,
    log_rpc,
    notify,
    responses,
)
from services.common.metrics import _Method

__all__ = ["Guard", "RpcInterceptor"]

Check = Callable[[Any, Any], Awaitable[None]]
StreamWrapper = Callable[[Callable[..., Any]], Callable[..., Any]]


class Guard(Protocol):
    """What ``RpcInterceptor`` asks of a guard, once per method."""

    def unary_check(self, method: str) -> Check | None: ...

    def stream_wrapper(self, method: str) -> StreamWrapper | None: ...


class RpcInterceptor(grpc.aio.ServerInterceptor):
    """Metrics, the ``rpc`` line, error mapping, ``guards`` and bounds
    (``limits``) in one wrapper per method.

    ``observers`` are called after each line (``RpcObserver``). Methods under
    ``quiet_prefixes`` (health, reflection) are logged at debug; a successful
    call of one of ``read_methods`` at debug too, one in ``sample`` of them
    (default ``TABLETOP_LOG_SAMPLE``, else 100) at info."""

    def __init__(
        self,
        *,
        guards: Sequence[Guard] = (),
        observers: Iterable[RpcObserver] = (),
        limits: Limits = DEFAULT_LIMITS,
        quiet_prefixes: Iterable[str] = QUIET_PREFIXES,
        read_methods: Iterable[str] = READ_METHODS,
        sample: int | None = None,
    ) -> None:
        self._guards = tuple(guards)
        self._observers = tuple(observers)
        self.limits = limits
        self._quiet = tuple(quiet_prefixes)
        self._reads = frozenset(read_methods)
        self._sample = default_sample() if sample is None else max(0, sample)
        self._metrics: dict[str, _Method] = {}
        self._samplers: dict[str, _Sampler] = {}
        self._wrapped: dict[str, tuple[grpc.RpcMethodHandler, grpc.RpcMethodHandler]] = {}

    def prepare(self, methods: Iterable[str]) -> None:
        """Create the metric series of these methods now (status OK, zero calls)."""
        for full in methods:
            self._method(full)

    def _method(self, full: str) -> _Method:
        m = self._metrics.get(full)
        if m is None:
            m = self._metrics[full] = _Method(full)
        return m

    async def intercept_service(
        self,
        continuation: Callable[[grpc.HandlerCallDetails], Awaitable[grpc.RpcMethodHandler]],
        handler_call_details: grpc.HandlerCallDetails,
    ) -> grpc.RpcMethodHandler:
        handler = await continuation(handler_call_details)
        if handler is None:
            return handler
        method = handler_call_details.method
        cached = self._wrapped.get(method)
        if cached is not None and cached[0] is handler:
            return cached[1]  # wrapped once per method, not once per call
        wrapped = self._wrap(method, handler)
        self._wrapped[method] = (handler, wrapped)
        return wrapped

    def _wrap(self, method: str, handler: grpc.RpcMethodHandler) -> grpc.RpcMethodHandler:
        m = self._method(method)
        counted = None if m.skip else m  # health and reflection: logged, not counted
        quiet: Any = method.startswith(self._quiet)
        if not quiet and method in self._reads:
            quiet = self._samplers.get(method) or self._samplers.setdefault(
                method, _Sampler(self._sample)
            )
        checks = tuple(c for g in self._guards if (c := g.unary_check(method)) is not None)
        wrappers = [w for g in self._guards if (w := g.stream_wrapper(method)) is not None]
        limits = None if handler.request_streaming else self.limits
        plan = _Plan(method, counted, quiet, self._observers, checks, limits)
        if handler.unary_unary is not None:
            wrapped = handler._replace(unary_unary=_unary(handler.unary_unary, plan))
        else:
            name = ("unary_stream", "stream_unary", "stream_stream")
            field = next(n for n in name if getattr(handler, n) is not None)
            behavior = getattr(handler, field)
            if field.endswith("_stream"):
                if wrappers and limits is not None:
                    # the guards first, then the bounds
                    behavior = _bounded(behavior, limits)
                    plan.limits = None
                for wrap in reversed(wrappers):
                    behavior = wrap(behavior)
                wrapped = handler._replace(**{field: _stream(behavior, plan)})
            else:  # a request stream with a single answer: no bounds, no stream guard
                wrapped = handler._replace(**{field: _unary(behavior, plan)})
        # bytes that do not decode reach the handler as such (a request
        # stream's handler checks each message itself: ``check_message``)
        return wrapped._replace(request_deserializer=_safe(handler.request_deserializer))


class _Plan:
    """What the wrapper of one method does around its handler."""

    __slots__ = ("checks", "limits", "method", "metrics", "observers", "quiet")

    def __init__(
        self,
        method: str,
        metrics: _Method | None,
        quiet: Any,
        observers: tuple[RpcObserver, ...],
        checks: tuple[Check, ...],
        limits: Limits | None,
    ) -> None:
        self.method = method
        self.metrics = metrics
        self.quiet = quiet
        self.observers = observers
        self.checks = checks
        self.limits = limits

    def finish(self, started: float, context: Any, error: BaseException | None) -> None:
        code = code_name(context, error)
        seconds = time.perf_counter() - started
        m = self.metrics
        if m is not None:
            m.in_flight.dec()
            m.observe(code, seconds)
        log_rpc(self.method, self.quiet, code, seconds)
        if self.observers:
            notify(self.observers, self.method, code, seconds)


def _unary(behavior: Callable[..., Any], plan: _Plan) -> Callable[..., Any]:
    method, limits, checks = plan.method, plan.limits, plan.checks
    in_flight = plan.metrics.in_flight if plan.metrics is not None else None
    perf_counter, finish = time.perf_counter, plan.finish

    async def unary(request: Any, context: Any) -> Any:
        bind(method=method)
        started = perf_counter()
        if in_flight is not None:
            in_flight.inc()
        error: BaseException | None = None
        try:
            for check in checks:
                await check(request, context)
            if limits is not None:
                _checked(request, limits)
            return await behavior(request, context)
        except _PASS_THROUGH as e:
            error = e
            raise
        except Exception as e:
            error = e
            await abort(context, e)
        except BaseException as e:
            error = e
            raise
        finally:
            finish(started, context, error)

    return unary


def _bounded(behavior: Callable[..., Any], limits: Limits) -> Callable[..., Any]:
    def stream(request: Any, context: Any) -> Any:
        _checked(request, limits)
        return behavior(request, context)

    return stream


def _stream(behavior: Callable[..., Any], plan: _Plan) -> Callable[..., Any]:
    method, limits = plan.method, plan.limits
    in_flight = plan.metrics.in_flight if plan.metrics is not None else None
    perf_counter, finish = time.perf_counter, plan.finish

    async def stream(request_or_iterator: Any, context: Any) -> AsyncIterator[Any]:
        bind(method=method)
        started = perf_counter()
        if in_flight is not None:
            in_flight.inc()
        error: BaseException | None = None
        try:
            if limits is not None:
                _checked(request_or_iterator, limits)
            async for item in responses(behavior(request_or_iterator, context)):
                yield item
        except _PASS_THROUGH as e:
            error = e
            raise
        except Exception as e:
            error = e
            await abort(context, e)
        except BaseException as e:
            error = e
            raise
        finally:
            finish(started, context, error)

    return stream
