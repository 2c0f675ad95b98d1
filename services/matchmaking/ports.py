"""The matchmaker's port to the match service."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol


@dataclass(frozen=True, slots=True)
class CreatedMatch:
    match_id: str
    seats: dict[str, int]  # player id -> seat


class MatchCreationFailed(Exception):
    """The match service refused (``transient=False``: counts against the
    tickets) or could not be reached (``transient=True``: the tickets go back
    as they were and the matchmaker backs off). ``player``: the player the
    refusal was about, when the match service named one (then only that
    player's ticket is to blame, and the others go back to the queue)."""

    def __init__(self, message: str, *, transient: bool = False, player: str = "") -> None:
        super().__init__(message)
        self.transient = transient
        self.player = player


class MatchCreator(Protocol):
    async def create_match(
        self,
        game: str,
        players: list[str],
        options_json: str,
        *,
        key: str = "",
        time_control: str = "",
    ) -> CreatedMatch:
        """Create a match with ``players`` in seat order. ``key`` is an
        idempotency key: the same key never makes two matches.
        ``time_control``: the turn clock's text form ("" = the default)."""
        ...
