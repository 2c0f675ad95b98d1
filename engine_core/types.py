"""Wire types every game shares: the bases of moves and events, and ``Outcome``.

Moves, events, states and views are frozen ``msgspec`` Structs. Moves and events
are tagged unions: the JSON field ``type`` holds the snake_case class name
(``PlaceMark`` -> ``"place_mark"``), so clients switch on it and the engine
decodes exactly one class per tag.
"""

from __future__ import annotations

import re

import msgspec

Seat = int
"""A seat number, ``0 .. players-1`` in turn order."""

_CAMEL = re.compile(r"(?<!^)(?=[A-Z])")


def snake_case(name: str) -> str:
    """``FaceForged`` -> ``face_forged``; the tag of every move and event."""
    return _CAMEL.sub("_", name).lower()


class Move(msgspec.Struct, frozen=True, kw_only=True, tag_field="type", tag=snake_case):
    """Base of every move (an imperative command: ``PlaceMark``, ``ForgeFace``)."""


class Event(msgspec.Struct, frozen=True, kw_only=True, tag_field="type", tag=snake_case):
    """Base of every event (a past-tense fact: ``MarkPlaced``, ``DiceRolled``)."""


class Outcome(msgspec.Struct, frozen=True, kw_only=True):
    """The result of a finished game, as data.

    ``ranks[s]`` is seat ``s``'s placing: 1 is first; seats that share a
    placing share a rank (1, 1, 3). ``scores[s]`` is the game's final score
    for the seat (points, glory, 1/0 for a win/loss game). ``reason`` says how
    the game ended (``"three_in_a_row"``, ``"rounds_completed"``, ...).
    """

    ranks: tuple[int, ...]
    scores: tuple[float, ...]
    reason: str

    @property
    def winners(self) -> tuple[Seat, ...]:
        return tuple(s for s, r in enumerate(self.ranks) if r == 1)


def ranks_from_keys(keys: tuple[tuple, ...] | list) -> tuple[int, ...]:
    """Competition ranks ("1224") from per-seat sort keys, higher key = better.

    Seats with equal keys share the placing; the next placing skips.
    Use a tuple key for tie-breaks, e.g. ``(score, tiebreak)``.
    """
    order = sorted(range(len(keys)), key=lambda s: keys[s], reverse=True)
    ranks = [0] * len(keys)
    for pos, seat in enumerate(order):
        if pos > 0 and keys[seat] == keys[order[pos - 1]]:
            ranks[seat] = ranks[order[pos - 1]]
        else:
            ranks[seat] = pos + 1
    return tuple(ranks)
