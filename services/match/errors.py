"""The match application's own rejections, on ``services.common.errors``
(each carries its gRPC status; ``reason`` is a stable code for clients)."""

from __future__ import annotations

import grpc

from services.common.errors import (
    Aborted,
    FailedPrecondition,
    InvalidArgument,
    NotFound,
    ServiceError,
    Unavailable,
)

__all__ = [
    "BadRequest",
    "IdempotencyKeyReused",
    "MatchExists",
    "MatchNotFound",
    "OutcomeUnknown",
    "StaleVersion",
    "TimeExpired",
    "TooMuchContention",
    "Unavailable",
]


class MatchNotFound(NotFound):
    def __init__(self, message: str) -> None:
        super().__init__("match_not_found", message)


class MatchExists(ServiceError):
    status = grpc.StatusCode.ALREADY_EXISTS

    def __init__(self, message: str) -> None:
        super().__init__("match_exists", message)


class BadRequest(InvalidArgument):
    def __init__(self, message: str, reason: str = "bad_request") -> None:
        super().__init__(reason, message)


class StaleVersion(Aborted):
    """``expected_version`` is not the current version (ABORTED)."""

    def __init__(self, message: str, current: int) -> None:
        super().__init__("stale_version", message, current_version=str(current))
        self.current = current


class TooMuchContention(Aborted):
    """The move lost the append race too many times in a row (ABORTED)."""

    def __init__(self, message: str, current: int) -> None:
        super().__init__("too_much_contention", message, current_version=str(current))
        self.current = current


class TimeExpired(FailedPrecondition):
    """The seat's turn clock ran out before its move arrived: the server plays
    for it (FAILED_PRECONDITION ``time_expired``)."""

    def __init__(self, seat: int, current: int) -> None:
        super().__init__(
            "time_expired",
            f"seat {seat}'s time ran out before the move arrived; the server moves for it",
            seat=str(seat),
            current_version=str(current),
        )


class IdempotencyKeyReused(FailedPrecondition):
    """A used idempotency key came with a different request (another move or
    seat; another game, players or options for a creation)."""

    def __init__(self, message: str) -> None:
        super().__init__("idempotency_key_reused", message)


class OutcomeUnknown(Unavailable):
    """The store did not acknowledge an append in time: the commit may still
    land (the client library sends buffered messages once it reconnects).
    Retrying the same request with the same idempotency key tells which: the
    first answer if it landed, else the move applied now (once)."""

    def __init__(self, message: str, **metadata: str) -> None:
        super().__init__("outcome_unknown", message, **metadata)
