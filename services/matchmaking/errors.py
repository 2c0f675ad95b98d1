"""The matchmaker's rejections: ``services.common.errors`` statuses with stable
reason codes (the server's ``RpcInterceptor`` turns them into rich statuses)."""

from __future__ import annotations

import grpc

from services.common.errors import (
    FailedPrecondition,
    InvalidArgument,
    NotFound,
    PermissionDenied,
    ServiceError,
    Unauthenticated,
)

BadRequest = InvalidArgument
Conflict = FailedPrecondition  # the ticket is not in a state that allows this
Forbidden = PermissionDenied
NotAuthenticated = Unauthenticated


class AlreadyQueued(ServiceError):
    """A player of the new ticket is already searching with another one."""

    status = grpc.StatusCode.ALREADY_EXISTS


__all__ = [
    "AlreadyQueued",
    "BadRequest",
    "Conflict",
    "Forbidden",
    "NotAuthenticated",
    "NotFound",
]
