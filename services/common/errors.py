"""Errors to gRPC statuses, with ``google.rpc.ErrorInfo`` rich details.

Every rejection a client can act on leaves a server as a status whose details
hold an ``ErrorInfo`` with ``domain="tabletop"``, ``reason`` = a stable
snake_case code (the engine error's ``code``: ``cell_taken``, ``not_your_turn``,
``malformed_move``, ``unknown_game``, ...) and ``metadata["error"]`` = the
error class. The mapping (one place, used by every service):

==============================================  ====================
error                                           status
==============================================  ====================
MalformedMove, UnknownSeat, ``InvalidArgument``  INVALID_ARGUMENT
UnknownGame, ``NotFound``                       NOT_FOUND
IllegalMove, NotYourTurn, GameOver,             FAILED_PRECONDITION
``FailedPrecondition``
``Aborted`` (stale expected version)            ABORTED
``Unauthenticated`` / ``PermissionDenied``      UNAUTHENTICATED / PERMISSION_DENIED
``Unavailable`` (a dependency is down)          UNAVAILABLE
``ResourceExhausted`` (a rate limit; RetryInfo)  RESOURCE_EXHAUSTED
anything else (a bug)                           INTERNAL, logged with its traceback
==============================================  ====================

Servicers simply ``raise``; the server's ``RpcInterceptor``
(``services.common.interceptor``) turns the exception into the status with
``abort``. Clients read the details back with ``error_info(rpc_error)``.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, NoReturn

import grpc
from google.protobuf import any_pb2, duration_pb2
from google.rpc import error_details_pb2, status_pb2
from grpc_status import rpc_status

from engine_core.errors import (
    EngineError,
    GameOver,
    IllegalMove,
    MalformedMove,
    NotYourTurn,
    UnknownSeat,
)
from engine_core.registry import UnknownGame
from services.common.logging import bind, get_logger

__all__ = [
    "DOMAIN",
    "Aborted",
    "FailedPrecondition",
    "InvalidArgument",
    "NotFound",
    "PermissionDenied",
    "ResourceExhausted",
    "ServiceError",
    "Unauthenticated",
    "Unavailable",
    "abort",
    "clip",
    "error_fields",
    "error_info",
    "retry_info",
    "rich_status",
    "status_of",
]

DOMAIN = "tabletop"
_log = get_logger("errors")


class ServiceError(Exception):
    """A rejection raised by service code (not the engine), with its status.

    ``reason`` is a stable snake_case code for clients to switch on,
    ``message`` is for people, ``metadata`` adds string facts to ErrorInfo.
    """

    status: grpc.StatusCode = grpc.StatusCode.INTERNAL

    def __init__(self, reason: str, message: str = "", **metadata: str) -> None:
        self.reason = reason
        self.message = message or reason
        self.metadata = {k: str(v) for k, v in metadata.items()}
        super().__init__(f"{reason}: {self.message}")


class InvalidArgument(ServiceError):
    status = grpc.StatusCode.INVALID_ARGUMENT


class NotFound(ServiceError):
    status = grpc.StatusCode.NOT_FOUND


class FailedPrecondition(ServiceError):
    status = grpc.StatusCode.FAILED_PRECONDITION


class Aborted(ServiceError):
    status = grpc.StatusCode.ABORTED


class Unauthenticated(ServiceError):
    status = grpc.StatusCode.UNAUTHENTICATED


class PermissionDenied(ServiceError):
    status = grpc.StatusCode.PERMISSION_DENIED


class Unavailable(ServiceError):
    status = grpc.StatusCode.UNAVAILABLE


class ResourceExhausted(ServiceError):
    """A limit of the caller was reached (RESOURCE_EXHAUSTED); the status also
    carries a ``google.rpc.RetryInfo`` saying when to try again."""

    status = grpc.StatusCode.RESOURCE_EXHAUSTED

    def __init__(self, reason: str, message: str = "", retry_after_s: float = 1.0, **metadata: str):
        super().__init__(reason, message, retry_after_ms=str(int(retry_after_s * 1000)), **metadata)
        self.retry_after_s = retry_after_s

    def extra_details(self) -> tuple[Any, ...]:
        delay = duration_pb2.Duration()
        delay.FromNanoseconds(int(max(0.0, self.retry_after_s) * 1e9))
        return (error_details_pb2.RetryInfo(retry_delay=delay),)


_ENGINE_STATUS: tuple[tuple[type[EngineError], grpc.StatusCode], ...] = (
    (MalformedMove, grpc.StatusCode.INVALID_ARGUMENT),
    (UnknownSeat, grpc.StatusCode.INVALID_ARGUMENT),
    (NotYourTurn, grpc.StatusCode.FAILED_PRECONDITION),
    (IllegalMove, grpc.StatusCode.FAILED_PRECONDITION),
    (GameOver, grpc.StatusCode.FAILED_PRECONDITION),
)


def status_of(exc: BaseException) -> tuple[grpc.StatusCode, str, str, Mapping[str, str]]:
    """``(status, reason, message, metadata)`` for an exception."""
    if isinstance(exc, ServiceError):
        return exc.status, exc.reason, exc.message, exc.metadata
    if isinstance(exc, EngineError):
        for cls, code in _ENGINE_STATUS:
            if isinstance(exc, cls):
                return code, exc.code, exc.message, {"error": cls.__name__}
        return grpc.StatusCode.FAILED_PRECONDITION, exc.code, exc.message, {"error": "EngineError"}
    if isinstance(exc, UnknownGame):
        return grpc.StatusCode.NOT_FOUND, "unknown_game", str(exc), {"game": exc.name}
    return grpc.StatusCode.INTERNAL, "internal", "internal error", {}


MAX_MESSAGE_CHARS = 512
"""Longest message a status carries, in UTF-8 bytes; longer ones are cut (with "...")."""
MAX_METADATA_CHARS = 128
"""Longest ErrorInfo metadata value, in UTF-8 bytes (and at most
``MAX_METADATA_ENTRIES`` entries): the whole status stays under 8 KiB."""
MAX_METADATA_ENTRIES = 16


def clip(text: str, limit: int) -> str:
    """``text``, or its first ``limit`` UTF-8 bytes (whole characters) and "...":
    never an echo of a whole input. A status travels in the trailers, which
    gRPC bounds (8 KiB by default, past which a client may refuse them), and
    the message is sent twice there (percent-encoded, and in the details)."""
    if len(text) <= limit // 4:
        return text  # short enough whatever its characters
    data = text.encode("utf-8", "replace")
    if len(data) <= limit:
        return text
    return data[: max(0, limit - 3)].decode("utf-8", "ignore") + "..."


def rich_status(
    code: grpc.StatusCode,
    reason: str,
    message: str,
    metadata: Mapping[str, str] | None = None,
    extra_details: Sequence[Any] = (),
) -> grpc.Status:
    """A ``grpc.Status`` carrying ``google.rpc.Status`` with one ErrorInfo (and
    ``extra_details``, e.g. a ``RetryInfo``). The message and every metadata
    value are clipped, so no status echoes a long input."""
    info = error_details_pb2.ErrorInfo(
        reason=clip(reason, 64), domain=DOMAIN, metadata=_clipped(metadata)
    )
    details = []
    for d in (info, *extra_details):
        detail = any_pb2.Any()
        detail.Pack(d)
        details.append(detail)
    return rpc_status.to_status(
        status_pb2.Status(
            code=code.value[0], message=clip(message, MAX_MESSAGE_CHARS), details=details
        )
    )


def _clipped(metadata: Mapping[str, str] | None) -> dict[str, str]:
    return {
        clip(str(k), 64): clip(str(v), MAX_METADATA_CHARS)
        for k, v in list((metadata or {}).items())[:MAX_METADATA_ENTRIES]
    }


def error_fields(exc: BaseException) -> tuple[grpc.StatusCode, str, str, dict[str, str]]:
    """``(status, reason, message, metadata)`` of ``exc`` exactly as ``abort``
    would send them (``status_of``, clipped as in ``rich_status``), for an
    error answered inside a stream's message rather than as the call's status
    (``PlayMatch``). An INTERNAL one is logged with its traceback, as there."""
    code, reason, message, metadata = status_of(exc)
    if code is grpc.StatusCode.INTERNAL:
        _log.error("unhandled_error", exc_info=exc)
    return code, clip(reason, 64), clip(message, MAX_MESSAGE_CHARS), _clipped(metadata)


async def abort(context: grpc.aio.ServicerContext, exc: BaseException) -> NoReturn:
    """End the RPC with the status for ``exc`` (raises ``grpc.aio.AbortError``)."""
    code, reason, message, metadata = status_of(exc)
    bind(reason=reason)
    if code is grpc.StatusCode.INTERNAL:
        _log.error("unhandled_error", exc_info=exc)
    extra = exc.extra_details() if isinstance(exc, ResourceExhausted) else ()
    await context.abort_with_status(rich_status(code, reason, message, metadata, extra))
    raise AssertionError("abort_with_status returned")  # pragma: no cover


def error_info(error: grpc.RpcError | grpc.aio.AioRpcError) -> error_details_pb2.ErrorInfo | None:
    """The ErrorInfo of a failed call (client side), or None if it has none."""
    try:
        status = rpc_status.from_call(error)  # type: ignore[arg-type]
    except ValueError:
        return None
    if status is None:
        return None
    for detail in status.details:
        if detail.Is(error_details_pb2.ErrorInfo.DESCRIPTOR):
            info = error_details_pb2.ErrorInfo()
            detail.Unpack(info)
            return info
    return None


def retry_info(error: grpc.RpcError | grpc.aio.AioRpcError) -> error_details_pb2.RetryInfo | None:
    """The RetryInfo of a failed call (client side), or None if it has none."""
    try:
        status = rpc_status.from_call(error)  # type: ignore[arg-type]
    except ValueError:
        return None
    for detail in status.details if status is not None else ():
        if detail.Is(error_details_pb2.RetryInfo.DESCRIPTOR):
            info = error_details_pb2.RetryInfo()
            detail.Unpack(info)
            return info
    return None


_PASS_THROUGH = (grpc.aio.AbortError, grpc.aio.UsageError)
"""What a wrapper of a handler lets through as it is rather than ``abort``-ing
with it: the call already ended with a status, or the context was misused."""
