"""The matchmaker's port to the match service."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol


@dataclass(frozen=True, slots=True)
class CreatedMatch:
    match_id: str
    seats: dict[str, int]  # player id -> seat


class MatchCreationFailed(Exception):
    """The match service refused or could not be reached; the tickets go back."""


class MatchCreator(Protocol):
    async def create_match(
        self, game: str, players: list[str], options_json: str, *, key: str = ""
    ) -> CreatedMatch:
        """Create a match with ``players`` in seat order. ``key`` is an
        idempotency key: the same key never makes two matches."""
        ...
