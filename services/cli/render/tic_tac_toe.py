"""Tic-tac-toe: the board with the cell numbers beside it."""

from __future__ import annotations

from typing import Any

from services.cli.render.base import Renderer, Section

MARK = {-1: ".", 0: "X", 1: "O"}


class TicTacToeRenderer(Renderer):
    def mark(self, seat: int) -> str:
        return MARK.get(seat, "?")

    def sections(self, view: Any) -> list[Section]:
        b = [MARK.get(c, "?") for c in view.board]
        rows = tuple(
            " ".join(b[r * 3 : r * 3 + 3]) + f"    {r * 3} {r * 3 + 1} {r * 3 + 2}"
            for r in range(3)
        )
        status = (
            f"{self.seat(view.to_move)} to move ({self.mark(view.to_move)})"
            if view.outcome is None
            else "game over"
        )
        return [Section("board", (*rows, status))]

    def move_words(self, move: Any, view: Any) -> str:
        if self.tag(move) == "place_mark":
            return f"mark cell {move.cell}"
        return super().move_words(move, view)

    def event_words(self, event: Any, view: Any) -> str | None:
        t = self.tag(event)
        if t == "mark_placed":
            return f"{self.Seat(event.seat)} marked cell {event.cell} ({self.mark(event.seat)})"
        if t == "game_started":
            return None
        return super().event_words(event, view)
