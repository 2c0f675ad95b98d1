"""Structured logging for every service: one module, one line per RPC.

Usage::

    from services.common.logging import bind, configure_logging, get_logger

    configure_logging(service="rules")          # once, at start-up
    server = GrpcServer(ServerConfig())         # its RpcInterceptor writes the rpc lines
    ...
    # inside a servicer method: add fields to this RPC's log line
    bind(game="tic_tac_toe", seat=1, move="place_mark")

Output is JSON lines when stdout is not a terminal (containers, supervisors) and
coloured key=value text on a terminal; ``TABLETOP_LOG_FORMAT=json|console``
forces one. The server's ``RpcInterceptor`` (``services.common.interceptor``)
writes exactly one ``rpc`` line per call (``log_rpc``) with ``method``,
``code`` (the gRPC status name), ``duration_ms`` and whatever the handler
``bind``-ed (game, match, seat, version, move, outcome, ...), plus ``reason``
when ``services.common.errors`` refused the call. Its level says who is at
fault (``LEVEL_OF_CODE``): refusals of client input at info, authentication
failures at warning, our own faults at error, calls the client cancelled at
debug; successful polled reads (``READ_METHODS``: GetMatch, ...) at debug,
one in ``TABLETOP_LOG_SAMPLE`` of them at info. Libraries' stdlib logging and
Python warnings are rendered the same way. Observers
(``RpcInterceptor(observers=[fn])``, e.g. Prometheus metrics) get
``fn(method, code, seconds, fields)`` right after the line (``notify``).

Never bind secrets: no state bytes, no entropy, no tokens, no hidden hands.
"""

from __future__ import annotations

import contextvars
import inspect
import json
import logging
import os
import sys
from collections.abc import AsyncIterator, Callable
from typing import Any, TextIO

import grpc
import structlog
from structlog.contextvars import bind_contextvars

__all__ = [
    "RpcObserver",
    "announce",
    "bind",
    "code_name",
    "configure_logging",
    "get_logger",
]

#: Methods logged at debug level only (probes would drown the real traffic).
QUIET_PREFIXES: tuple[str, ...] = ("/grpc.health.v1.", "/grpc.reflection.")

#: Reads that clients poll (and that each move or view causes in the rules
#: service): a successful one is logged at debug, and one in
#: ``TABLETOP_LOG_SAMPLE`` (default 100) at info with ``sample=N``. Refusals
#: and faults of these are logged like any other call. Metrics count them all.
READ_METHODS: frozenset[str] = frozenset(
    {
        "/tabletop.match.v1.MatchService/GetMatch",
        "/tabletop.match.v1.MatchService/ListMatches",
        "/tabletop.matchmaking.v1.MatchmakingService/GetRating",
        "/tabletop.matchmaking.v1.MatchmakingService/Leaderboard",
        "/tabletop.rules.v1.RulesService/LegalMoves",
        "/tabletop.rules.v1.RulesService/View",
        "/tabletop.rules.v1.RulesService/Outcome",
        "/tabletop.rules.v1.RulesService/Fold",
    }
)

#: The level of an ``rpc`` line by its status: refusals of what a client sent
#: at info, authentication failures at warning, our own faults at error.
#: CANCELLED (the client went away, e.g. a watch it closed) is debug.
LEVEL_OF_CODE: dict[str, str] = {
    "OK": "info",
    "CANCELLED": "debug",
    "UNAUTHENTICATED": "warning",
    "PERMISSION_DENIED": "warning",
    "DEADLINE_EXCEEDED": "warning",
    "UNKNOWN": "error",
    "INTERNAL": "error",
    "DATA_LOSS": "error",
    "UNIMPLEMENTED": "error",
    "UNAVAILABLE": "error",
}
"""Any other status (INVALID_ARGUMENT, NOT_FOUND, FAILED_PRECONDITION, ABORTED,
ALREADY_EXISTS, OUT_OF_RANGE, RESOURCE_EXHAUSTED) is a refusal: info."""


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
    shared: list[Any] = [
        structlog.contextvars.merge_contextvars,
        structlog.processors.add_log_level,
        structlog.processors.TimeStamper(fmt="iso", utc=True),
    ]
    structlog.configure(
        processors=[
            *shared,
            structlog.processors.StackInfoRenderer(),
            structlog.processors.format_exc_info,
            renderer,
        ],
        wrapper_class=structlog.make_filtering_bound_logger(level),
        logger_factory=structlog.PrintLoggerFactory(stream),
        cache_logger_on_first_use=False,
    )
    structlog.contextvars.clear_contextvars()
    bind(service=service, pid=os.getpid())
    _RPC.reset()
    # Libraries' stdlib logging and Python's warnings become lines of the same
    # form (JSON in files), never plain text among the JSON lines.
    handler = logging.StreamHandler(stream)
    handler.setFormatter(
        structlog.stdlib.ProcessorFormatter(
            foreign_pre_chain=[*shared, structlog.stdlib.add_logger_name],
            processors=[
                structlog.stdlib.ProcessorFormatter.remove_processors_meta,
                structlog.processors.format_exc_info,
                renderer,
            ],
        )
    )
    logging.basicConfig(level=level, handlers=[handler], force=True)
    # Re-installed on every call: a second captureWarnings(True) is a no-op, and
    # whoever replaced warnings.showwarning since (a test runner) would keep it.
    logging.captureWarnings(False)
    logging.captureWarnings(True)


def announce(event: str, message: str, **fields: Any) -> None:
    """A start-up line that people and scripts read (``listening on ...``):
    the log line ``event`` with the text in ``message``, JSON like every
    other line in files."""
    structlog.get_logger().info(event, message=message, **fields)


def listening_address(line: str) -> str | None:
    """The address in a service's ``listening`` start-up line (JSON, or the
    console's ``listening on <address>``), or None for any other line."""
    line = line.strip()
    if line.startswith("{"):
        try:
            record = json.loads(line)
        except ValueError:
            return None
        if isinstance(record, dict) and record.get("event") == "listening":
            address = record.get("address")
            return address if isinstance(address, str) else None
        return None
    if "listening on " in line:
        return line.rsplit(" ", 1)[1]
    return None


def get_logger(name: str | None = None, **initial: Any) -> Any:
    """A structlog logger (``name`` becomes the ``component`` field). It reads
    the configuration when it logs, so module-level loggers are fine."""
    if name is not None:
        initial["component"] = name
    return structlog.get_logger(**initial)


_VARS: dict[str, contextvars.ContextVar[Any]] = {}
"""The context variable of each field ever bound with ``bind``: structlog's
own (made by ``bind_contextvars`` the first time), so its
``merge_contextvars`` puts them on every line as before."""


def bind(**fields: Any) -> None:
    """Add fields to the current RPC's log line (and any line logged during it).

    The same as structlog's ``bind_contextvars``, at a fraction of its cost
    (the rules service binds five fields a move): after a field's first
    binding, one ``ContextVar.set``."""
    for key, value in fields.items():
        var = _VARS.get(key)
        if var is None:
            _VARS[key] = bind_contextvars(**{key: value})[key].var
        else:
            var.set(value)


def bound() -> dict[str, Any]:
    """The fields bound with ``bind`` in the current context (what
    ``structlog.contextvars.get_contextvars`` gives of them, without copying
    the context and looking at every variable in it)."""
    out = {}
    for key, var in _VARS.items():
        value = var.get(Ellipsis)
        if value is not Ellipsis:  # structlog's mark of a field not bound (or cleared)
            out[key] = value
    return out


_log = get_logger("rpc")


def code_name(context: Any, error: BaseException | None) -> str:
    """The final status name of a call (``OK``, ``CANCELLED``, ...)."""
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


def rpc_quiet(method: str, sample: int | None = None) -> Any:
    """How ``log_rpc`` treats a successful call of ``method`` by default:
    True for probes (``QUIET_PREFIXES``), a ``_Sampler`` of one in ``sample``
    (default ``TABLETOP_LOG_SAMPLE``, else 100) for ``READ_METHODS``, else
    False. For a handler that logs calls itself (the rules service's calls
    on a stream), so they are logged as the unary calls they stand for."""
    if method.startswith(QUIET_PREFIXES):
        return True
    if method in READ_METHODS:
        return _Sampler(default_sample() if sample is None else max(0, sample))
    return False


def default_sample() -> int:
    """``TABLETOP_LOG_SAMPLE``: one in how many successful reads is logged at info."""
    return max(0, int(os.environ.get("TABLETOP_LOG_SAMPLE", "100")))


class _Sampler:
    """One in ``every`` successful calls of a read method is logged at info."""

    __slots__ = ("count", "every")

    def __init__(self, every: int) -> None:
        self.every = every
        self.count = 0

    def take(self) -> bool:
        if self.every <= 0:
            return False
        self.count += 1
        if self.count >= self.every:
            self.count = 0
            return True
        return False


class _RpcLog:
    """The logger of the ``rpc`` lines, resolved once per configuration.

    ``get_logger`` hands back a lazy proxy that builds a new bound logger on
    every call (so that ``configure_logging`` may be called again); per RPC
    that cost more than the line itself when the level is off. This one is
    built on first use after each ``configure_logging`` and asked whether a
    level is on before the line's fields are put together."""

    __slots__ = ("_logger", "_min_level")

    def __init__(self) -> None:
        self.reset()

    def reset(self) -> None:
        self._logger: Any = None
        self._min_level = 0

    def logger(self) -> Any:
        if self._logger is None:
            logger = _log.bind()
            enabled = getattr(logger, "get_effective_level", None)
            self._min_level = enabled() if enabled is not None else 0
            self._logger = logger
        return self._logger

    def write(self, level: str, method: str, code: str, seconds: float, **extra: Any) -> None:
        logger = self._logger or self.logger()
        if _LEVEL_NUMBERS[level] < self._min_level:
            return
        getattr(logger, level)(
            "rpc", method=method, code=code, duration_ms=round(seconds * 1000, 3), **extra
        )


_LEVEL_NUMBERS = {"debug": logging.DEBUG, "info": logging.INFO, "warning": logging.WARNING}
_LEVEL_NUMBERS["error"] = logging.ERROR
_RPC = _RpcLog()


def log_rpc(method: str, quiet: Any, code: str, seconds: float) -> None:
    """The ``rpc`` line of a finished call, at the level its status calls for
    (``quiet``: True for probes, a ``_Sampler`` for polled reads, else False)."""
    if quiet is True:
        level = "debug"
    else:
        level = LEVEL_OF_CODE.get(code, "info")
        if quiet and code == "OK":
            if quiet.take():
                _RPC.write("info", method, code, seconds, sample=quiet.every)
                return
            level = "debug"
    _RPC.write(level, method, code, seconds)


def notify(observers: tuple[RpcObserver, ...], method: str, code: str, seconds: float) -> None:
    """Call each observer with the fields bound during the call (``bind``;
    errors are logged, never raised)."""
    fields = bound()
    for observe in observers:
        try:
            observe(method, code, seconds, fields)
        except Exception:
            _log.exception("rpc_observer_failed", method=method)


# ------------------------------------------------------- handler wrapping
# For the guards run as interceptors of their own (``services.common.guard``,
# ``services.common.ratelimit``): wrap each behaviour of a method handler.

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


def responses(result: Any) -> AsyncIterator[Any]:
    """``as_async_iter(result)``, or ``result`` itself when it is an async
    iterator already (the usual case: no generator layer per response)."""
    if hasattr(result, "__anext__") and not inspect.isawaitable(result):
        return result  # type: ignore[no-any-return]
    return as_async_iter(result)


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
