"""Pairing: the pure part of the matchmaker.

Input: the tickets of one queue (one game, one set of options, one player
count ``n``), each with its size (a party has several players), its rating and
how long it has waited. Output: groups of tickets whose sizes add up to ``n``
(or less, padded with bots), to be claimed and turned into matches.

The rule of a group: the spread of its ratings (highest minus lowest) is at most
the rating window of *every* member; a ticket's window widens with the time it
has waited (``MatchmakingSettings.window``). Tickets are swept in rating order,
so a group is always a run of neighbours in rating. A ticket that allows bots
and has waited ``bot_fill_after_s`` may be seated with fewer players than
``n``; the rest of the seats go to bots. A ticket names the level of the bots
it accepts (``bot_level``): full groups of people ignore it, a bot-filled
group is formed only of tickets asking for the same level, so nobody gets
bots of another difficulty than the one they chose.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

# How far past the first ticket of a group the sweep looks for members.
_LOOKAHEAD = 64


@dataclass(frozen=True, slots=True)
class Candidate:
    """A ticket as the matchmaker sees it in a queue."""

    ticket_id: str
    size: int
    rating: float
    waited_s: float
    allow_bots: bool
    bot_level: str = ""  # the bots it accepts ("" = the matchmaker's setting)


@dataclass(frozen=True, slots=True)
class Group:
    """Tickets to seat in one match; ``bots`` seats are left for bots."""

    tickets: tuple[Candidate, ...]
    bots: int
    bot_level: str = ""  # the level of those bots (every ticket's; "" = the setting)

    @property
    def humans(self) -> int:
        return sum(t.size for t in self.tickets)


def form_groups(
    candidates: Sequence[Candidate],
    players: int,
    window: Callable[[float], float],
    bot_fill_after_s: float | None = None,
    skip: set[str] | frozenset[str] = frozenset(),
    *,
    full: bool = True,
) -> list[Group]:
    """Groups of ``players`` seats out of ``candidates`` (any order).

    ``window(waited_s)`` is the rating window of a ticket. With
    ``bot_fill_after_s`` set, the tickets left over that allow bots and waited
    that long are grouped among themselves (same window rule) and padded with
    bots; a bot-filled group holds only tickets of one ``bot_level`` (levels
    swept in name order). Tickets in ``skip`` are ignored (already grouped in
    another queue).
    ``full=False`` skips the full groups (only the bot-filled ones are formed).
    """
    cands = sorted(
        (c for c in candidates if c.ticket_id not in skip and 0 < c.size <= players),
        key=lambda c: (c.rating, -c.waited_s, c.ticket_id),
    )
    windows = [window(c.waited_s) for c in cands]
    used = [False] * len(cands)
    groups: list[Group] = []

    def sweep(
        eligible: Callable[[int], bool], complete: Callable[[int], bool], level: str = ""
    ) -> None:
        for i in range(len(cands)):
            if used[i] or not eligible(i):
                continue
            low = cands[i].rating
            allowed = windows[i]
            members = [i]
            total = cands[i].size
            j = i + 1
            while total < players and j < len(cands) and j - i <= _LOOKAHEAD:
                if not used[j] and eligible(j) and total + cands[j].size <= players:
                    w = min(allowed, windows[j])
                    if cands[j].rating - low > w:
                        break  # sorted: every later ticket is farther still
                    allowed = w
                    members.append(j)
                    total += cands[j].size
                j += 1
            if complete(total):
                for m in members:
                    used[m] = True
                groups.append(
                    Group(
                        tuple(cands[m] for m in members),
                        players - total,
                        level if total < players else "",
                    )
                )

    if full:
        sweep(lambda _i: True, lambda total: total == players)
    if bot_fill_after_s is not None:
        ready = [
            c.allow_bots and c.waited_s >= bot_fill_after_s and not used[i]
            for i, c in enumerate(cands)
        ]
        for level in sorted({c.bot_level for c, r in zip(cands, ready, strict=True) if r}):
            sweep(
                lambda i, level=level: ready[i] and cands[i].bot_level == level,
                lambda total: total >= 1,
                level,
            )
    return groups
