"""The matchmaker's rejections, each with a stable reason code and one status."""

from __future__ import annotations

import grpc


class MatchmakingError(Exception):
    status: grpc.StatusCode = grpc.StatusCode.INTERNAL

    def __init__(self, reason: str, message: str, **metadata: str) -> None:
        self.reason = reason
        self.message = message
        self.metadata = {k: str(v) for k, v in metadata.items()}
        super().__init__(f"{reason}: {message}")


class BadRequest(MatchmakingError):
    status = grpc.StatusCode.INVALID_ARGUMENT


class NotFound(MatchmakingError):
    status = grpc.StatusCode.NOT_FOUND


class Conflict(MatchmakingError):
    """The ticket or player is not in a state that allows this."""

    status = grpc.StatusCode.FAILED_PRECONDITION


class AlreadyQueued(MatchmakingError):
    status = grpc.StatusCode.ALREADY_EXISTS


class Forbidden(MatchmakingError):
    status = grpc.StatusCode.PERMISSION_DENIED


class NotAuthenticated(MatchmakingError):
    status = grpc.StatusCode.UNAUTHENTICATED
