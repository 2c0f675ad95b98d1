"""The explicit registry of games: stable ids, no import side effects.

``default_registry()`` lists every shipped game by hand; adding a game is one
line there. A registry refuses duplicate ids and games that do not satisfy the
contract.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from functools import cache

from engine_core.decider import Game

_ID = re.compile(r"^[a-z][a-z0-9_]*$")


class UnknownGame(LookupError):
    """No game with that id is registered."""

    def __init__(self, name: str, known: list[str]) -> None:
        self.name = name
        super().__init__(f"unknown game {name!r}; known games: {', '.join(known)}")


class Registry:
    def __init__(self) -> None:
        self._games: dict[str, Game] = {}

    def register(self, game: Game) -> Game:
        if not isinstance(game, Game):
            raise TypeError(f"{game!r} does not implement the game contract")
        if not _ID.match(game.name):
            raise ValueError(f"game id {game.name!r} is not snake_case")
        if game.name in self._games:
            raise ValueError(f"game id {game.name!r} is already registered")
        if not game.rules_version:
            raise ValueError(f"game {game.name!r} has no rules version")
        if not 1 <= game.min_players <= game.max_players:
            raise ValueError(f"game {game.name!r} has bad player counts")
        self._games[game.name] = game
        return game

    def get(self, name: str) -> Game:
        try:
            return self._games[name]
        except KeyError:
            raise UnknownGame(name, self.names()) from None

    def names(self) -> list[str]:
        return sorted(self._games)

    def __iter__(self) -> Iterator[Game]:
        return iter(self._games[n] for n in self.names())

    def __contains__(self, name: object) -> bool:
        return name in self._games

    def __len__(self) -> int:
        return len(self._games)


@cache
def default_registry() -> Registry:
    """Every game Tabletop ships, by hand."""
    from engine_core.games.arcane_academy import GAME as arcane_academy
    from engine_core.games.assault_of_the_giants import GAME as assault_of_the_giants
    from engine_core.games.dice_forge import GAME as dice_forge
    from engine_core.games.dwarves_duel import GAME as dwarves_duel
    from engine_core.games.tic_tac_toe import GAME as tic_tac_toe

    registry = Registry()
    for game in (tic_tac_toe, dice_forge, dwarves_duel, arcane_academy, assault_of_the_giants):
        registry.register(game)
    return registry
