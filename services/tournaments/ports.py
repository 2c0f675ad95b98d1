"""The tournament application's ports.

``Matches``: creating a tournament's matches and asking how one ended (the
match service over gRPC, ``adapters.GrpcMatches``). ``BotJobs``: handing a
match's bot seats to the bot worker (the Redis stream ``mm:bots`` it reads,
``adapters.RedisBotJobs``). ``Seeding``: the ratings the seeds come from
(matchmaking's ratings in Redis). The event store is ``store.TournamentStore``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol

from services.tournaments.model import TimeControl


@dataclass(frozen=True, slots=True)
class MatchEnd:
    players: tuple[str, ...]
    ranks: tuple[int, ...]
    scores: tuple[float, ...]
    reason: str
    finished_at: str = ""


class Matches(Protocol):
    async def create(
        self,
        game: str,
        players: list[str],
        options_json: str,
        time_control: TimeControl,
        public_replay: bool,
        key: str,
    ) -> str:
        """The match id (the same for the same key, however often called)."""
        ...

    async def result(self, match_id: str) -> MatchEnd | None:
        """How the match ended, or None while it runs."""
        ...

    async def state(self, match_id: str) -> tuple[MatchEnd | None, tuple[int, ...]]:
        """How the match ended (None while it runs), and the seats the game
        waits for now."""
        ...

    async def snapshot(self, match_id: str) -> MatchNow:
        """The match now: how it ended (None while it runs), the seats the
        game waits for, its version and its players in seat order."""
        ...

    async def end(
        self,
        match_id: str,
        ranks: tuple[int, ...],
        scores: tuple[float, ...],
        reason: str,
        key: str,
        expected_version: int,
    ) -> str:
        """End a running match with this result (the match service's
        ``EndMatch``): ``END_DONE`` (ended, by this call or an earlier one
        under ``key``), ``END_FINISHED`` (it had ended otherwise: nothing
        changed), ``END_MOVED`` (it moved past ``expected_version``: look
        again), ``END_UNSUPPORTED`` (a match service without ``EndMatch``)."""
        ...


END_DONE = "done"
END_FINISHED = "finished"
END_MOVED = "moved"
END_UNSUPPORTED = "unsupported"


@dataclass(frozen=True, slots=True)
class MatchNow:
    end: MatchEnd | None
    awaiting: tuple[int, ...]
    version: int
    players: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class TicketEnd:
    state: str  # matched, cancelled, expired
    match_id: str = ""
    reason: str = ""


class QueuedElsewhere(Exception):
    """The entrant holds another open ticket (their own, in a public queue):
    not the race's, so never adopted; the entrant is queued once it ends."""

    def __init__(self, ticket_id: str) -> None:
        super().__init__(f"the entrant is searching with ticket {ticket_id}")
        self.ticket_id = ticket_id


class Queue(Protocol):
    """The matchmaker, for a score race that queues its entrants."""

    async def enqueue(
        self,
        game: str,
        player: str,
        counts: list[int],
        time_control: str,
        allow_bots: bool,
        pool: str,
        key: str = "",
    ) -> str:
        """The ticket id. ``key``: the Enqueue's idempotency key (the same
        key answers the ticket it made, whatever that ticket has become).
        ``QueuedElsewhere`` if the player searches with another ticket."""
        ...

    async def cancel(self, ticket_id: str) -> None:
        """Cancel a ticket if it still searches (else nothing)."""
        ...

    async def watch(self, ticket_id: str) -> TicketEnd:
        """Wait for the ticket's end."""
        ...


class BotJobs(Protocol):
    async def enqueue(self, match_id: str, game: str, bots: dict[str, int]) -> None: ...


class Seeding(Protocol):
    async def ratings(self, game: str, players: list[str]) -> list[float]: ...
