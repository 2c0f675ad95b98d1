"""Terminal renderers, one per game (``renderer_for(game)``); any other game
gets the generic ``Renderer``."""

from __future__ import annotations

from engine_core.decider import Game
from services.cli.render.arcane_academy import ArcaneAcademyRenderer
from services.cli.render.assault_of_the_giants import AssaultRenderer
from services.cli.render.base import Renderer, Section, changed
from services.cli.render.dice_forge import DiceForgeRenderer
from services.cli.render.dwarves_duel import DwarvesDuelRenderer
from services.cli.render.tic_tac_toe import TicTacToeRenderer

RENDERERS: dict[str, type[Renderer]] = {
    "tic_tac_toe": TicTacToeRenderer,
    "dice_forge": DiceForgeRenderer,
    "dwarves_duel": DwarvesDuelRenderer,
    "arcane_academy": ArcaneAcademyRenderer,
    "assault_of_the_giants": AssaultRenderer,
}


def renderer_for(game: Game, me: int | None = None) -> Renderer:
    return RENDERERS.get(game.name, Renderer)(game, me=me)


__all__ = ["Renderer", "Section", "changed", "renderer_for"]
