"""Errors to gRPC statuses with ``google.rpc.ErrorInfo`` details.

| error                                   | status              |
|-----------------------------------------|---------------------|
| MalformedMove, UnknownSeat, BadRequest  | INVALID_ARGUMENT    |
| UnknownGame, MatchNotFound              | NOT_FOUND           |
| IllegalMove, NotYourTurn, GameOver      | FAILED_PRECONDITION |
| StaleVersion, TooMuchContention         | ABORTED             |
| MatchExists                             | ALREADY_EXISTS      |
| Unauthenticated                         | UNAUTHENTICATED     |
| PermissionDenied                        | PERMISSION_DENIED   |
| Unavailable (rules, JetStream down)     | UNAVAILABLE         |

``reason`` is the engine's or the service's code (``cell_taken``,
``stale_version``...), ``domain`` is ``"tabletop"``; ``metadata`` carries
``current_version`` for ABORTED.
"""

from __future__ import annotations

import grpc
from google.protobuf import any_pb2
from google.rpc import error_details_pb2, status_pb2
from grpc_status import rpc_status

from engine_core.errors import EngineError, MalformedMove, UnknownSeat
from engine_core.registry import UnknownGame
from services.common.auth import PermissionDenied, Unauthenticated
from services.match.errors import (
    BadRequest,
    MatchError,
    MatchExists,
    MatchNotFound,
    StaleVersion,
    TooMuchContention,
    Unavailable,
)

DOMAIN = "tabletop"

_BAD_INPUT_CODES = {"player_count"}


def status_of(error: BaseException) -> tuple[grpc.StatusCode, str, str, dict[str, str]] | None:
    """``(code, reason, message, metadata)`` for a known error, else ``None``."""
    match error:
        case MalformedMove() | UnknownSeat():
            return grpc.StatusCode.INVALID_ARGUMENT, error.code, error.message, {}
        case EngineError() if error.code in _BAD_INPUT_CODES:
            return grpc.StatusCode.INVALID_ARGUMENT, error.code, error.message, {}
        case EngineError():
            return grpc.StatusCode.FAILED_PRECONDITION, error.code, error.message, {}
        case UnknownGame():
            return grpc.StatusCode.NOT_FOUND, "unknown_game", str(error), {}
        case StaleVersion() | TooMuchContention():
            meta = {"current_version": str(error.current)}
            return grpc.StatusCode.ABORTED, error.reason, error.message, meta
        case MatchNotFound():
            return grpc.StatusCode.NOT_FOUND, error.reason, error.message, {}
        case MatchExists():
            return grpc.StatusCode.ALREADY_EXISTS, error.reason, error.message, {}
        case BadRequest():
            return grpc.StatusCode.INVALID_ARGUMENT, error.reason, error.message, {}
        case Unavailable():
            return grpc.StatusCode.UNAVAILABLE, error.reason, error.message, {}
        case MatchError():
            return grpc.StatusCode.INTERNAL, error.reason, error.message, {}
        case Unauthenticated():
            return grpc.StatusCode.UNAUTHENTICATED, error.reason, error.message, {}
        case PermissionDenied():
            return grpc.StatusCode.PERMISSION_DENIED, error.reason, error.message, {}
    return None


def rich_status(
    code: grpc.StatusCode, reason: str, message: str, metadata: dict[str, str]
) -> grpc.Status:
    info = error_details_pb2.ErrorInfo(reason=reason, domain=DOMAIN, metadata=metadata)
    detail = any_pb2.Any()
    detail.Pack(info)
    status = status_pb2.Status(code=code.value[0], message=message, details=[detail])
    return rpc_status.to_status(status)


def error_info(error: grpc.aio.AioRpcError | grpc.RpcError) -> error_details_pb2.ErrorInfo | None:
    """The ``ErrorInfo`` of a failed call (clients, tests)."""
    status = rpc_status.from_call(error)  # type: ignore[arg-type]
    if status is None:
        return None
    for detail in status.details:
        if detail.Is(error_details_pb2.ErrorInfo.DESCRIPTOR):
            info = error_details_pb2.ErrorInfo()
            detail.Unpack(info)
            return info
    return None
