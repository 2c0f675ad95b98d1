"""Typed rejections. Each maps to exactly one gRPC status in the services.

| error            | meaning                                              | gRPC status          |
|------------------|------------------------------------------------------|----------------------|
| MalformedMove    | the move cannot be understood (bad JSON, bad fields) | INVALID_ARGUMENT     |
| UnknownSeat      | the seat does not exist in this match                | INVALID_ARGUMENT     |
| NotYourTurn      | the game is not waiting for this seat                | FAILED_PRECONDITION  |
| IllegalMove      | understood, but the rules forbid it now              | FAILED_PRECONDITION  |
| GameOver         | the game has ended; no move is accepted              | FAILED_PRECONDITION  |
"""

from __future__ import annotations


class EngineError(Exception):
    """Base of every rejection the engine raises on purpose."""

    code: str = "engine_error"

    def __init__(self, code: str | None = None, message: str = "") -> None:
        if code is not None:
            self.code = code
        self.message = message or self.code
        super().__init__(f"{self.code}: {self.message}")


class MalformedMove(EngineError):
    """The move is not a well-formed move of this game."""

    code = "malformed_move"


class UnknownSeat(EngineError):
    """The seat number is outside this match."""

    code = "unknown_seat"


class NotYourTurn(EngineError):
    """The game is not waiting for input from this seat."""

    code = "not_your_turn"


class IllegalMove(EngineError):
    """A well-formed move that the rules forbid in the current state.

    ``code`` is a stable snake_case reason (``cannot_afford``, ``wrong_phase``,
    ``cell_taken``...) that clients may switch on; ``message`` is for people.
    """

    code = "illegal_move"


class GameOver(EngineError):
    """The game has ended; nothing more can be decided."""

    code = "game_over"
