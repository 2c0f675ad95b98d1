"""The match application's own rejections (besides the engine's and auth's)."""

from __future__ import annotations


class MatchError(Exception):
    """Base: ``reason`` is a stable snake_case code for clients."""

    reason = "match_error"

    def __init__(self, message: str, reason: str | None = None) -> None:
        super().__init__(message)
        self.message = message
        if reason is not None:
            self.reason = reason


class MatchNotFound(MatchError):
    reason = "match_not_found"


class MatchExists(MatchError):
    reason = "match_exists"


class BadRequest(MatchError):
    reason = "bad_request"


class StaleVersion(MatchError):
    """``expected_version`` is not the current version (ABORTED)."""

    reason = "stale_version"

    def __init__(self, message: str, current: int) -> None:
        super().__init__(message)
        self.current = current


class TooMuchContention(MatchError):
    """The move lost the race too many times in a row (ABORTED)."""

    reason = "too_much_contention"

    def __init__(self, message: str, current: int) -> None:
        super().__init__(message)
        self.current = current


class Unavailable(MatchError):
    """A dependency (rules, JetStream) did not answer in time (UNAVAILABLE)."""

    reason = "unavailable"
