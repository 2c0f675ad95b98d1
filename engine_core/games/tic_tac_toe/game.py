"""Tic-tac-toe on the engine contract.

Cells are numbered 0..8, row by row. Seat 0 plays X and moves first.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import assert_never

import msgspec

from engine_core.decider import BaseGame
from engine_core.errors import IllegalMove
from engine_core.rng import Rng
from engine_core.types import Event, Move, Outcome, Seat

# ------------------------------------------------------------------ data
LINES: tuple[tuple[int, int, int], ...] = (
    (0, 1, 2), (3, 4, 5), (6, 7, 8),
    (0, 3, 6), (1, 4, 7), (2, 5, 8),
    (0, 4, 8), (2, 4, 6),
)  # fmt: skip
MARKS = ("X", "O")


# ----------------------------------------------------------------- types
class Options(msgspec.Struct, frozen=True, kw_only=True):
    """Tic-tac-toe has no variants."""


class PlaceMark(Move):
    cell: int


TicTacToeMove = PlaceMark


class GameStarted(Event):
    players: int


class MarkPlaced(Event):
    seat: Seat
    cell: int


class GameEnded(Event):
    ranks: tuple[int, ...]
    scores: tuple[float, ...]
    reason: str


TicTacToeEvent = GameStarted | MarkPlaced | GameEnded


class State(msgspec.Struct, frozen=True, kw_only=True):
    board: tuple[int, ...]  # -1 empty, else the seat whose mark it is
    to_move: Seat
    outcome: Outcome | None = None


# ----------------------------------------------------------------- rules
def winner(board: tuple[int, ...]) -> Seat | None:
    for a, b, c in LINES:
        if board[a] >= 0 and board[a] == board[b] == board[c]:
            return board[a]
    return None


class TicTacToe(BaseGame):
    name = "tic_tac_toe"
    title = "Tic-tac-toe"
    rules_version = "1"
    min_players = 2
    max_players = 2
    Options = Options
    State = State
    Move = TicTacToeMove
    Event = TicTacToeEvent
    View = State

    def setup(self, players: int, options: Options, entropy: bytes) -> tuple[Event, ...]:
        return (GameStarted(players=players),)

    def evolve(self, state: State | None, event: Event) -> State:
        match event:
            case GameStarted():
                return State(board=(-1,) * 9, to_move=0)
            case MarkPlaced(seat=seat, cell=cell):
                assert state is not None
                board = (*state.board[:cell], seat, *state.board[cell + 1 :])
                return msgspec.structs.replace(state, board=board, to_move=1 - seat)
            case GameEnded(ranks=ranks, scores=scores, reason=reason):
                assert state is not None
                return msgspec.structs.replace(
                    state, outcome=Outcome(ranks=ranks, scores=scores, reason=reason)
                )
            case _:
                assert_never(event)

    def decide_move(self, state: State, seat: Seat, move: PlaceMark, rng: Rng) -> Iterable[Event]:
        if not 0 <= move.cell < 9:
            raise IllegalMove("no_such_cell", f"cell {move.cell} is not in 0..8")
        if state.board[move.cell] >= 0:
            raise IllegalMove(
                "cell_taken", f"cell {move.cell} already holds {MARKS[state.board[move.cell]]}"
            )
        yield MarkPlaced(seat=seat, cell=move.cell)
        board = (*state.board[: move.cell], seat, *state.board[move.cell + 1 :])
        if winner(board) == seat:
            ranks = (1, 2) if seat == 0 else (2, 1)
            yield GameEnded(
                ranks=ranks,
                scores=(float(ranks[0] == 1), float(ranks[1] == 1)),
                reason="three_in_a_row",
            )
        elif all(c >= 0 for c in board):
            yield GameEnded(ranks=(1, 1), scores=(0.5, 0.5), reason="board_full")

    def legal_moves(self, state: State, seat: Seat) -> tuple[PlaceMark, ...]:
        if state.outcome is not None or seat != state.to_move:
            return ()
        return tuple(PlaceMark(cell=c) for c in range(9) if state.board[c] < 0)

    def awaiting(self, state: State) -> tuple[Seat, ...]:
        return () if state.outcome is not None else (state.to_move,)

    def outcome(self, state: State) -> Outcome | None:
        return state.outcome

    def max_moves(self, players: int) -> int:
        return 9

    def seats(self, state: State) -> int:
        return 2


GAME = TicTacToe()
