"""The Dwarves: The Duel (Pegasus Spiele, 2015): a two-player card and dice duel."""

from engine_core.games.dwarves_duel.game import GAME, DwarvesDuel, Options

__all__ = ["GAME", "DwarvesDuel", "Options"]
