"""What a seat sees. Dice Forge has no hidden information (spec 7): the view is the state."""

from __future__ import annotations

from engine_core.games.dice_forge.state import State

View = State


def view(state: State, seat: int | None) -> State:
    return state
