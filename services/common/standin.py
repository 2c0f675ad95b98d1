"""The move the server makes for a seat nobody plays: the game's
``default_move`` when a turn clock runs out, or a bot's choice for a seat
handed over after too many timeouts. Used by the rules service (its
``DefaultMove`` RPC) and by the in-process rules adapter, so both answer
alike."""

from __future__ import annotations

from typing import Any

from engine_core.decider import Game
from engine_core.errors import NotYourTurn
from engine_core.rng import Rng
from engine_core.types import Seat
from services.common.errors import InvalidArgument

BASIC_BOTS = ("greedy", "random")


def _registry_bot(name: str, game: Game) -> Any | None:
    """A bot of the engine's bot registry, when the engine has one."""
    try:
        from engine_core.bots import registry  # type: ignore[attr-defined]
    except ImportError:
        return None
    make = getattr(registry, "make", None) or getattr(registry, "get", None)
    if make is None:
        return None
    try:
        return make(name, game)
    except (KeyError, ValueError, TypeError):
        return None


def known_bot(name: str) -> bool:
    """Whether ``name`` names a bot (``greedy``, ``random``, or the registry's)."""
    if name in BASIC_BOTS:
        return True
    try:
        from engine_core.bots import registry  # type: ignore[attr-defined]
    except ImportError:
        return False
    names = getattr(registry, "names", None)
    return bool(names) and name in names()


def stand_in_move(game: Game, state: Any, seat: Seat, bot: str, entropy: bytes) -> Any:
    """The default move of ``seat`` (``bot=""``), or ``bot``'s choice."""
    if seat not in game.awaiting(state):
        raise NotYourTurn("not_awaited", f"the game does not wait for seat {seat}")
    if not bot:
        return game.default_move(state, seat)
    from engine_core.bots import bot_for

    chooser = bot_for(bot, game) if bot in BASIC_BOTS else _registry_bot(bot, game)
    if chooser is None:
        raise InvalidArgument("unknown_bot", f"no bot named {bot!r}")
    return chooser.choose(game, state, seat, Rng(entropy))
