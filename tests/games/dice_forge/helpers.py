"""Given/when/then helpers: build a state, put a task on the agenda, play moves."""

from __future__ import annotations

from typing import Any

import msgspec

from engine_core.decider import fold, start
from engine_core.games.dice_forge import GAME, Options, data
from engine_core.games.dice_forge.rules import Ctx, advance, new_bless
from engine_core.games.dice_forge.state import Action, State
from engine_core.rng import Rng

replace = msgspec.structs.replace
A, B, C, D = 0, 1, 2, 3


def fresh(players: int, options: Options | None = None, seed: bytes = b"seed") -> State:
    """A match right after setup, with the agenda cleared and every player's
    resources at zero (gold as dealt)."""
    state, _ = start(GAME, players, options or Options(), seed)
    players_ = tuple(
        replace(p, gold=data.STARTING_GOLD[i], sun=0, moon=0, glory=0, up=(0, 0))
        for i, p in enumerate(state.players)
    )
    return replace(state, players=players_, lanes=((),) * players, lane_order=(), flow=())


def with_player(state: State, seat: int, **fields: Any) -> State:
    p = replace(state.players[seat], **fields)
    return replace(state, players=(*state.players[:seat], p, *state.players[seat + 1 :]))


def die(face: str) -> tuple[str, ...]:
    return (face,) * 6


def dice(light: str, dark: str) -> tuple[tuple[str, ...], tuple[str, ...]]:
    return (die(light), die(dark))


def settle(state: State, *, flow=(), lanes=None, entropy: bytes = b"e") -> tuple[State, list]:
    """Put tasks on the agenda and work off what needs no decision."""
    n = len(state.players)
    state = replace(
        state,
        flow=tuple(flow),
        lanes=tuple(tuple(lane) for lane in (lanes or [()] * n)),
        lane_order=tuple((state.active + i) % n for i in range(n)),
    )
    ctx = Ctx(state, Rng(entropy))
    advance(ctx)
    events = ctx.finish()
    return fold(GAME, events, state), events


def bless(state: State, seat: int, faces: tuple[str, ...], **kw: Any) -> tuple[State, list]:
    """``seat`` resolves a blessing with these faces (as rolled)."""
    n = len(state.players)
    lanes = [()] * n
    lanes[seat] = (new_bless(seat, faces, kw.pop("kind", "divine"), **kw),)
    return settle(state, lanes=lanes)


def action(state: State, seat: int = A) -> tuple[State, list]:
    """``seat`` is active and about to take its phase-3 action (phase 4 may follow; the
    turn does not end, so that its effects can be inspected)."""
    state = replace(state, active=seat)
    return settle(state, flow=(Action(seat=seat), Action(seat=seat, extra=True)))


def play(state: State, seat: int, move: Any, entropy: bytes = b"m") -> tuple[State, list]:
    events = GAME.decide(state, seat, move, entropy)
    return fold(GAME, events, state), list(events)


def of(events: list, kind: type) -> list:
    return [e for e in events if isinstance(e, kind)]
