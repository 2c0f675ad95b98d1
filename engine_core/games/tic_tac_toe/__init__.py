"""Tic-tac-toe: the worked example of the engine contract (docs/writing-a-game.md)."""

from engine_core.games.tic_tac_toe.game import GAME, TicTacToe

__all__ = ["GAME", "TicTacToe"]
