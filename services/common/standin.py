"""The move the server makes for a seat nobody plays: the game's
``default_move`` when a turn clock runs out, or a bot's choice for a seat
handed over after too many timeouts. Used by the rules service (its
``DefaultMove`` RPC) and by the in-process rules adapter, so both answer
alike.

Bots by name: ``greedy`` (the game's greedy bot, random where it has none)
and ``random``. This is the one place to add the engine's other bots (a
search bot by level) once ``engine_core.bots`` names them.
"""

from __future__ import annotations

from typing import Any

from engine_core.bots import bot_for
from engine_core.decider import Game
from engine_core.errors import NotYourTurn
from engine_core.rng import Rng
from engine_core.types import Seat
from services.common.errors import InvalidArgument

BOTS = ("greedy", "random")


def known_bot(name: str) -> bool:
    """Whether ``name`` names a bot the server can play a seat with."""
    return name in BOTS


def stand_in_move(game: Game, state: Any, seat: Seat, bot: str, entropy: bytes) -> Any:
    """The default move of ``seat`` (``bot=""``), or ``bot``'s choice (its
    randomness from ``entropy``)."""
    if seat not in game.awaiting(state):
        raise NotYourTurn("not_awaited", f"the game does not wait for seat {seat}")
    if not bot:
        return game.default_move(state, seat)
    if not known_bot(bot):
        raise InvalidArgument("unknown_bot", f"no bot named {bot!r}; use one of {', '.join(BOTS)}")
    return bot_for(bot, game).choose(game, state, seat, Rng(entropy))
