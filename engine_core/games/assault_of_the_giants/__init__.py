"""D&D Assault of the Giants (3-6 players) on the engine contract."""

from engine_core.games.assault_of_the_giants.game import GAME, AssaultOfTheGiants

__all__ = ["GAME", "AssaultOfTheGiants"]
