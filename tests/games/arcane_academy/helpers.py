"""Building Given-states for the rule scenarios of the spec's §9."""

from __future__ import annotations

from typing import Any

from msgspec.structs import replace

from engine_core.decider import fold, start
from engine_core.games.arcane_academy import GAME
from engine_core.games.arcane_academy.data import COLS
from engine_core.games.arcane_academy.state import Space, State

A = GAME


def blank(players: int = 2, first: int = 0) -> State:
    """A fresh match with an empty market, bag, deck and hands, and a public
    row of four expensive cards nobody can afford at the start; ``first``
    starts round 1. Scenarios fill in what they need."""
    state, _ = start(GAME, players, None, b"scenario")
    seats = tuple(replace(p, hand=()) for p in state.players)
    return replace(
        state,
        players=seats,
        first_player=first,
        current=first,
        round=1,
        market=(None,) * 4,
        public=("I15a", "I15b", "I14a", "S14a"),
        bag=(),
        deck=(),
    )


def set_player(state: State, seat: int, **changes: Any) -> State:
    p = replace(state.players[seat], **changes)
    return replace(state, players=(*state.players[:seat], p, *state.players[seat + 1 :]))


def put(state: State, seat: int, tile: str, x: int, y: int, r: int = 0, exhausted: bool = False):
    """Stack ``tile`` on ``(x, y)`` at rotation ``r``."""
    p = state.players[seat]
    i = y * COLS + x
    sp = p.slate[i]
    sp = Space(stack=(*sp.stack, tile), rotations=(*sp.rotations, r), exhausted=exhausted)
    return set_player(state, seat, slate=(*p.slate[:i], sp, *p.slate[i + 1 :]))


def exhaust(state: State, seat: int, x: int, y: int, on: bool = True) -> State:
    p = state.players[seat]
    i = y * COLS + x
    sp = replace(p.slate[i], exhausted=on)
    return set_player(state, seat, slate=(*p.slate[:i], sp, *p.slate[i + 1 :]))


def space(state: State, seat: int, x: int, y: int) -> Space:
    return state.players[seat].slate[y * COLS + x]


def play(state: State, seat: int, *moves: Any) -> tuple[State, list[Any]]:
    """Apply ``moves`` by ``seat``; the final state and all events."""
    events: list[Any] = []
    for move in moves:
        new = GAME.decide(state, seat, move, b"entropy")
        events.extend(new)
        state = fold(GAME, new, state)
    return state, events


def kinds(events: list[Any]) -> list[str]:
    return [type(e).__name__ for e in events]
