"""The bots by level name, for callers that name a bot by a string: the turn
clocks' stand-in (``services.common.standin``: ``then=bot:<name>``) and any
service that fills a seat.

``names()`` lists the levels (``engine_core.bots.LEVELS``); ``make(name,
game)`` builds one, the search bot with an iteration budget only
(``TAKEOVER_ITERATIONS``), so that a stand-in move is a pure function of the
state and the entropy passed in, like every other engine answer.
"""

from __future__ import annotations

from engine_core.bots import LEVELS, Bot, bot_for
from engine_core.decider import Game

TAKEOVER_ITERATIONS = 48
"""Iterations of a search decision made for a seat nobody plays."""


def names() -> tuple[str, ...]:
    return LEVELS


def make(name: str, game: Game) -> Bot:
    """The bot of level ``name`` for ``game``; ``ValueError`` for an unknown name."""
    return bot_for(name, game, iterations=TAKEOVER_ITERATIONS)
