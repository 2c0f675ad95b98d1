"""The tournament service's rejections (each carries its gRPC status and a
stable ``reason`` for clients; see services.common.errors)."""

from __future__ import annotations

import grpc

from services.common.errors import (
    FailedPrecondition,
    InvalidArgument,
    NotFound,
    PermissionDenied,
    ServiceError,
    Unavailable,
)

__all__ = [
    "AlreadyExists",
    "BadRequest",
    "FailedPrecondition",
    "NotFound",
    "PermissionDenied",
    "TournamentNotFound",
    "Unavailable",
]


class TournamentNotFound(NotFound):
    def __init__(self, tournament_id: str) -> None:
        super().__init__("tournament_not_found", f"no tournament {tournament_id}")


class AlreadyExists(ServiceError):
    status = grpc.StatusCode.ALREADY_EXISTS


class BadRequest(InvalidArgument):
    def __init__(self, reason: str, message: str) -> None:
        super().__init__(reason, message)
