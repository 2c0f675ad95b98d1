"""The move the server makes for a seat nobody plays: the game's
``default_move`` when a turn clock runs out, or a bot's choice for a seat
handed over after too many timeouts. Used by the rules service (its
``DefaultMove`` RPC) and by the in-process rules adapter, so both answer
alike.

Bots are the engine's difficulty levels (``engine_core.bots.LEVELS``:
``random``, ``greedy``, ``search``). A bot decides on the seat's view alone
(``choose_from_view``): playing for a player who left never reads what that
player could not see. A search is bounded by ``SEARCH_TIME_S`` of this
process's clock as well as by its iterations, so the answer comes within the
match service's deadline for a rules call.
"""

from __future__ import annotations

import time
from typing import Any

from engine_core.bots import LEVELS, TAKEOVER_LEVEL, bot_for, choose_from_view
from engine_core.decider import Game
from engine_core.errors import NotYourTurn
from engine_core.rng import Rng
from engine_core.types import Seat
from services.common.errors import InvalidArgument

SEARCH_TIME_S = 0.5
DEFAULT_BOT = TAKEOVER_LEVEL  # the bot of a handed-over seat when the control names none


def known_bot(name: str) -> bool:
    """Whether ``name`` names a bot the server can play a seat with."""
    return name in LEVELS


def stand_in_move(game: Game, state: Any, seat: Seat, bot: str, entropy: bytes) -> Any:
    """The default move of ``seat`` (``bot=""``), or ``bot``'s choice on the
    seat's view (its randomness from ``entropy``)."""
    if seat not in game.awaiting(state):
        raise NotYourTurn("not_awaited", f"the game does not wait for seat {seat}")
    if not bot:
        return game.default_move(state, seat)
    if not known_bot(bot):
        raise InvalidArgument(
            "unknown_bot", f"no bot named {bot!r}; use one of {', '.join(LEVELS)}"
        )
    chooser = bot_for(bot, game, time_s=SEARCH_TIME_S, clock=time.monotonic)
    try:
        return choose_from_view(chooser, game, game.view(state, seat), seat, Rng(entropy))
    except NotImplementedError:
        # a game with secrets that cannot deal a state from a view: no bot can
        # play it fairly, so the seat keeps getting its default move
        return game.default_move(state, seat)
