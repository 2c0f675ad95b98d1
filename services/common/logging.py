"""Structured logging for every service: one module, one line per RPC.

Usage::

    from services.common.logging import LoggingInterceptor, bind, configure_logging, get_logger

    configure_logging(service="rules")          # once, at start-up
    server = grpc.aio.server(interceptors=[LoggingInterceptor()])
    ...
    # inside a servicer method: add fields to this RPC's log line
    bind(game="tic_tac_toe", seat=1, move="place_mark")

Output is JSON lines when stdout is not a terminal (containers, supervisors) and
coloured key=value text on a terminal; ``TABLETOP_LOG_FORMAT=json|console``
forces one. ``LoggingInterceptor`` writes exactly one ``rpc`` line per call with
``method``, ``code`` (the gRPC status name), ``duration_ms`` and whatever the
handler ``bind``-ed (game, match, seat, version, move, outcome, ...), plus
``reason`` when ``services.common.errors`` refused the call. Observers
(``LoggingInterceptor(observers=[fn])``, e.g. Prometheus metrics) get
``fn(method, code, seconds, fields)`` right after the line.

Never bind secrets: no state bytes, no entropy, no tokens, no hidden hands.
"""

from __future__ import annotations

import inspect
import logging
import os
import sys
import time
from collections.abc import AsyncIterator, Awaitable, Callable, Iterable
from typing import Any, TextIO

import grpc
import structlog
from structlog.contextvars import bind_contextvars

__all__ = ["LoggingInterceptor", "RpcObserver", "bind", "configure_logging", "get_logger"]

#: Methods logged at debug level only (probes would drown the real traffic).
QUIET_PREFIXES: tuple[str, ...] = ("/grpc.health.v1.", "/grpc.reflection.")


def configure_logging(
    *,
    service: str,
    level: str | int | None = None,
    fmt: str | None = None,
    stream: TextIO | None = None,
) -> None:
    """Set structlog (and the stdlib root logger) up for a service process.

    ``level`` defaults to ``TABLETOP_LOG_LEVEL`` or INFO; ``fmt`` to
    ``TABLETOP_LOG_FORMAT`` or json/console by whether stdout is a terminal.
    Lines go to ``stream`` (default: ``sys.stdout``). Safe to call again
    (tests, worker processes).
    """
    stream = stream or sys.stdout
    level = level or os.environ.get("TABLETOP_LOG_LEVEL", "INFO")
    if isinstance(level, str):
        level = logging.getLevelNamesMapping().get(level.upper(), logging.INFO)
    fmt = (
        fmt
        or os.environ.get("TABLETOP_LOG_FORMAT")
        or ("console" if sys.stdout.isatty() else "json")
    )
    renderer: Any = (
        structlog.processors.JSONRenderer()
        if fmt == "json"
        else structlog.dev.ConsoleRenderer(colors=stream.isatty())
    )
    structlog.configure(
        processors=[
            structlog.contextvars.merge_contextvars,
            structlog.processors.add_log_level,
            structlog.processors.TimeStamper(fmt="iso", utc=True),
            structlog.processors.StackInfoRenderer(),
            structlog.processors.format_exc_info,
            renderer,
        ],
        wrapper_class=structlog.make_filtering_bound_logger(level),
        logger_factory=structlog.PrintLoggerFactory(stream),
        cache_logger_on_first_use=False,
    )
    structlog.contextvars.clear_contextvars()
    bind_contextvars(service=service, pid=os.getpid())
    logging.basicConfig(level=level, stream=sys.stderr, force=True)


def get_logger(name: str | None = None, **initial: Any) -> Any:
    """A structlog logger (``name`` becomes the ``component`` field). It reads
    the configuration when it logs, so module-level loggers are fine."""
    if name is not None:
        initial["component"] = name
    return structlog.get_logger(**initial)


def bind(**fields: Any) -> None:
    """Add fields to the current RPC's log line (and any line logged during it)."""
    bind_contextvars(**fields)


_log = get_logger("rpc")


def _code_name(context: Any, error: BaseException | None) -> str:
    code = None
    try:
        code = context.code()
    except Exception:  # pragma: no cover - context without code()
        code = None
    if isinstance(code, grpc.StatusCode):
        return code.name
    if isinstance(code, int):
        for c in grpc.StatusCode:
            if c.value[0] == code:
                return c.name
    if error is None:
        return "OK"
    try:
        if context.cancelled():  # the client went away (e.g. a stream it stopped reading)
            return "CANCELLED"
    except Exception:  # pragma: no cover - context without cancelled()
        pass
    if isinstance(error, GeneratorExit):
        return "CANCELLED"
    if isinstance(error, grpc.aio.AbortError):
        return "UNKNOWN"
    if isinstance(error, BaseException) and type(error).__name__ == "CancelledError":
        return "CANCELLED"
    return "UNKNOWN"


RpcObserver = Callable[[str, str, float, dict[str, Any]], None]
"""``observer(method, code, seconds, fields)``, called once per finished RPC with
the fields bound during it (e.g. to update Prometheus metrics)."""


class LoggingInterceptor(grpc.aio.ServerInterceptor):
    """Binds ``method`` for the call and logs one line when it ends; then
    calls each observer (errors in observers are logged, never raised)."""

    def __init__(
        self,
        quiet_prefixes: Iterable[str] = QUIET_PREFIXES,
        observers: Iterable[RpcObserver] = (),
    ) -> None:
        self._quiet = tuple(quiet_prefixes)
        self._observers = tuple(observers)
        self._wrapped: dict[str, tuple[grpc.RpcMethodHandler, grpc.RpcMethodHandler]] = {}

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
        quiet = method.startswith(self._quiet)
        observers = self._observers

        def wrapper(behavior: Callable[..., Any], streaming: bool) -> Callable[..., Any]:
            return _logged(behavior, streaming, method, quiet, observers)

        wrapped = wrap_handler(handler, wrapper)
        self._wrapped[method] = (handler, wrapped)
        return wrapped


def _finish(
    method: str,
    quiet: bool,
    started: float,
    context: Any,
    error: BaseException | None,
    observers: tuple[RpcObserver, ...],
) -> None:
    code = _code_name(context, error)
    seconds = time.perf_counter() - started
    duration_ms = round(seconds * 1000, 3)
    if quiet:
        level = "debug"
    elif code in ("UNKNOWN", "INTERNAL", "DATA_LOSS"):
        level = "error"
    else:
        level = "info"
    getattr(_log, level)("rpc", method=method, code=code, duration_ms=duration_ms)
    if observers:
        fields = structlog.contextvars.get_contextvars()
        for observe in observers:
            try:
                observe(method, code, seconds, fields)
            except Exception:
                _log.exception("rpc_observer_failed", method=method)


def _logged(
    behavior: Callable[..., Any],
    streaming: bool,
    method: str,
    quiet: bool,
    observers: tuple[RpcObserver, ...],
) -> Callable[..., Any]:
    if streaming:

        async def stream(request_or_iterator: Any, context: Any) -> AsyncIterator[Any]:
            bind_contextvars(method=method)
            started = time.perf_counter()
            error: BaseException | None = None
            try:
                async for item in as_async_iter(behavior(request_or_iterator, context)):
                    yield item
            except BaseException as e:
                error = e
                raise
            finally:
                _finish(method, quiet, started, context, error, observers)

        return stream

    async def unary(request_or_iterator: Any, context: Any) -> Any:
        bind_contextvars(method=method)
        started = time.perf_counter()
        error: BaseException | None = None
        try:
            return await behavior(request_or_iterator, context)
        except BaseException as e:
            error = e
            raise
        finally:
            _finish(method, quiet, started, context, error, observers)

    return unary


# ------------------------------------------------------- handler wrapping
# Shared with services.common.errors: wrap each behaviour of a method handler.

Wrapper = Callable[[Callable[..., Any], bool], Callable[..., Any]]
"""``wrapper(behaviour, streams_responses) -> behaviour``; a wrapper of a
response-streaming behaviour must be an async generator function."""
_BEHAVIOURS = ("unary_unary", "unary_stream", "stream_unary", "stream_stream")


def wrap_handler(handler: grpc.RpcMethodHandler, wrapper: Wrapper) -> grpc.RpcMethodHandler:
    """The handler with its one behaviour replaced by ``wrapper(behaviour, streaming)``."""
    for name in _BEHAVIOURS:
        behavior = getattr(handler, name, None)
        if behavior is not None:
            wrapped = wrapper(behavior, name.endswith("_stream"))
            return handler._replace(**{name: wrapped})  # type: ignore[attr-defined]
    return handler


async def as_async_iter(result: Any) -> AsyncIterator[Any]:
    """Responses of a streaming behaviour: an async generator, or a coroutine
    that writes with ``context.write`` (yields nothing), or a sync iterator."""
    if inspect.isawaitable(result):
        await result
        return
    if hasattr(result, "__aiter__"):
        async for item in result:
            yield item
        return
    if result is not None:
        for item in result:
            yield item
