"""Dice Forge (Libellud 2017), base game, 2 to 4 players."""

from engine_core.games.dice_forge.game import GAME, DiceForge, Options

__all__ = ["GAME", "DiceForge", "Options"]
