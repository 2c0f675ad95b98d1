"""Arcane Academy (Eric M. Lang, Kevin Wilson; 2016), 2-4 players."""

from engine_core.games.arcane_academy.game import GAME, ArcaneAcademy

__all__ = ["GAME", "ArcaneAcademy"]
