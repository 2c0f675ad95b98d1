"""Turn bookkeeping that every game needs, written once.

* seat order: ``next_seat``, ``seats_from``;
* ``Pending``: a decision owed by several seats at once (simultaneous choices,
  answers to an offer); the game waits for every seat still listed;
* ``ResponseWindow``: an out-of-turn window in which seats, one at a time in a
  fixed order, may respond or pass; it closes when all have passed, or reopens
  after a response when the game says so;
* ``Phases``: the turn structure as data (phase -> allowed move types -> next
  phase) with one check that rejects a move of the wrong phase.

All are frozen msgspec Structs so they live inside a game's state.
"""

from __future__ import annotations

from collections.abc import Mapping

import msgspec

from engine_core.errors import IllegalMove
from engine_core.types import Seat


def next_seat(seat: Seat, players: int, step: int = 1) -> Seat:
    """The seat ``step`` places after ``seat`` in turn order."""
    return (seat + step) % players


def seats_from(start: Seat, players: int) -> tuple[Seat, ...]:
    """All seats in turn order, beginning with ``start``."""
    return tuple((start + i) % players for i in range(players))


class Pending(msgspec.Struct, frozen=True, kw_only=True):
    """A decision owed by several seats at once.

    ``seats`` are those that still have to answer, in resolution order
    (``awaiting`` returns them all: they may answer in any order; where the
    order of effects matters the game resolves in ``seats`` order once all
    have answered, or by taking ``first`` when only the head may act).
    """

    kind: str
    seats: tuple[Seat, ...]

    @property
    def done(self) -> bool:
        return not self.seats

    @property
    def first(self) -> Seat | None:
        return self.seats[0] if self.seats else None

    def owes(self, seat: Seat) -> bool:
        return seat in self.seats

    def answered(self, seat: Seat) -> Pending:
        if seat not in self.seats:
            raise IllegalMove("not_pending", f"seat {seat} owes no {self.kind} answer")
        return msgspec.structs.replace(self, seats=tuple(s for s in self.seats if s != seat))


class ResponseWindow(msgspec.Struct, frozen=True, kw_only=True):
    """Seats that may respond out of turn, asked one at a time in ``order``.

    ``at`` is the index of the seat being asked now. ``passed()`` moves to the
    next seat and returns ``None`` when everybody has passed; after a response
    the game decides whether to open a new window (nested responses).
    """

    kind: str
    order: tuple[Seat, ...]
    at: int = 0

    @property
    def current(self) -> Seat:
        return self.order[self.at]

    def passed(self) -> ResponseWindow | None:
        nxt = self.at + 1
        return None if nxt >= len(self.order) else msgspec.structs.replace(self, at=nxt)


class Phase(msgspec.Struct, frozen=True):
    """One row of a turn-structure table: the move types allowed in it."""

    name: str
    moves: frozenset[str]
    next: str | None = None


class Phases:
    """A turn structure as data; ``check`` rejects moves of another phase."""

    def __init__(self, *rows: Phase) -> None:
        self.rows: Mapping[str, Phase] = {r.name: r for r in rows}
        if len(self.rows) != len(rows):
            raise ValueError("duplicate phase names")

    def allowed(self, phase: str) -> frozenset[str]:
        return self.rows[phase].moves

    def next(self, phase: str) -> str | None:
        return self.rows[phase].next

    def check(self, phase: str, move: msgspec.Struct) -> None:
        tag = type(move).__struct_config__.tag
        if tag not in self.rows[phase].moves:
            raise IllegalMove(
                "wrong_phase",
                f"{tag} is not allowed in phase {phase}; allowed: {sorted(self.rows[phase].moves)}",
            )
