"""Bots: one small interface, ``choose(game, state, seat, rng) -> move``.

``RandomBot`` plays every game (a uniform legal move). Games add greedy bots
in ``engine_core/bots/<game>.py``; ``SearchBot`` (``engine_core/bots/search.py``)
plays every game by Information Set MCTS over the contract. ``bot_for(level,
game)`` finds the bot of a difficulty level (``LEVELS``); ``choose_from_view``
lets any of them decide on a seat's view alone (services hold only views).
"""

from __future__ import annotations

from collections.abc import Callable
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


LEVELS = ("random", "greedy", "search")
"""Difficulty levels, weakest first: a uniform legal move; the game's greedy
bot (one-step heuristics); the search bot (ISMCTS, ``engine_core.bots.search``)."""

TAKEOVER_LEVEL = "search"
"""The level that plays a seat whose player timed out."""


def bot_for(
    level: str,
    game: Game,
    *,
    iterations: int | None = None,
    time_s: float | None = None,
    clock: Callable[[], float] | None = None,
) -> Bot:
    """The bot of a difficulty level (``LEVELS``) for ``game``.

    ``greedy`` falls back to random where a game has no greedy bot. For
    ``search``: ``iterations`` per decision (``SEARCH_ITERATIONS`` if not
    given) and optionally ``time_s`` with a ``clock`` (the engine has none:
    pass ``time.monotonic``), whichever is spent first.
    """
    if level == "random":
        return RandomBot()
    if level == "greedy":
        return greedy_bots().get(game.name, RandomBot())
    if level == "search":
        from engine_core.bots.search import SearchBot

        return SearchBot(
            iterations=SEARCH_ITERATIONS if iterations is None else iterations,
            time_s=time_s,
            clock=clock,
        )
    raise ValueError(f"unknown bot level {level!r}; use one of {', '.join(LEVELS)}")


SEARCH_ITERATIONS = 200
"""The default iteration budget of a search decision."""


def takeover_bot(
    game: Game, *, time_s: float | None = None, clock: Callable[[], float] | None = None
) -> Bot:
    """The bot that plays for a seat whose turn clock ran out (``TAKEOVER_LEVEL``).
    Decide with ``choose_from_view``: it needs only that seat's view."""
    return bot_for(TAKEOVER_LEVEL, game, time_s=time_s, clock=clock)


def choose_from_view(bot: Bot, game: Game, view: Any, seat: Seat, rng: Rng) -> Any:
    """A move for ``seat`` from its view alone, with any bot.

    A bot that searches views (``choose_view``) gets the view; any other bot
    gets a state sampled from the view (``game.sample_state``): the hidden
    information it may read there is dealt at random, never the real one.
    """
    choose_view = getattr(bot, "choose_view", None)
    if choose_view is not None:
        return choose_view(game, view, seat, rng)
    return bot.choose(game, game.sample_state(view, seat, rng), seat, rng)
