"""Bots: one small interface, ``choose(game, state, seat, rng) -> move``.

``RandomBot`` plays every game (a uniform legal move). Games add greedy bots
in ``engine_core/bots/<game>.py``; ``bot_for(name, game)`` finds them.
"""

from __future__ import annotations

from typing import Any, Protocol

from engine_core.decider import Game
from engine_core.rng import Rng
from engine_core.types import Seat


class Bot(Protocol):
    name: str

    def choose(self, game: Game, state: Any, seat: Seat, rng: Rng) -> Any: ...


class RandomBot:
    """A uniformly random legal move."""

    name = "random"

    def choose(self, game: Game, state: Any, seat: Seat, rng: Rng) -> Any:
        moves = game.legal_moves(state, seat)
        if not moves:
            raise ValueError(f"seat {seat} has no legal move")
        return rng.choice(moves)


def greedy_bots() -> dict[str, Bot]:
    """The greedy bot of each game that has one, by game id."""
    from engine_core.bots.arcane_academy import ArcaneAcademyGreedy
    from engine_core.bots.assault_of_the_giants import AssaultGreedy
    from engine_core.bots.dice_forge import DiceForgeGreedy
    from engine_core.bots.dwarves_duel import DwarvesDuelGreedy
    from engine_core.bots.tic_tac_toe import TicTacToeGreedy

    return {
        "tic_tac_toe": TicTacToeGreedy(),
        "dice_forge": DiceForgeGreedy(),
        "dwarves_duel": DwarvesDuelGreedy(),
        "arcane_academy": ArcaneAcademyGreedy(),
        "assault_of_the_giants": AssaultGreedy(),
    }


def bot_for(kind: str, game: Game) -> Bot:
    """``"random"`` or ``"greedy"`` (falls back to random where a game has none)."""
    if kind == "random":
        return RandomBot()
    if kind == "greedy":
        return greedy_bots().get(game.name, RandomBot())
    raise ValueError(f"unknown bot kind {kind!r}; use random or greedy")
