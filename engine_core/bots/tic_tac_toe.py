"""A greedy tic-tac-toe bot: win now, else block, else centre, corner, side."""

from __future__ import annotations

from engine_core.games.tic_tac_toe.game import LINES, PlaceMark, State
from engine_core.rng import Rng
from engine_core.types import Seat

_PREFERENCE = (4, 0, 2, 6, 8, 1, 3, 5, 7)


class TicTacToeGreedy:
    name = "greedy"

    def choose(self, game, state: State, seat: Seat, rng: Rng) -> PlaceMark:
        board = state.board
        for who in (seat, 1 - seat):
            for line in LINES:
                marks = [board[c] for c in line]
                if marks.count(who) == 2 and marks.count(-1) == 1:
                    return PlaceMark(cell=line[marks.index(-1)])
        return PlaceMark(cell=next(c for c in _PREFERENCE if board[c] < 0))
