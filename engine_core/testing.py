"""Seeded playouts, shared by the conformance suite, golden files, bots,
benchmarks and ``make run``. Pure: everything random comes from the seed.

Entropy for setup is ``derive(seed, "setup")``; for the k-th move (from 0)
``derive(seed, f"move/{k}")``; the bots draw from ``derive(seed, "bots")``.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

import msgspec

from engine_core.bots import Bot, RandomBot
from engine_core.decider import Game, fold, start
from engine_core.rng import Rng, derive
from engine_core.types import Outcome, Seat


class PlayoutError(AssertionError):
    """A playout broke the contract (stuck, too long)."""


class Step(msgspec.Struct, frozen=True):
    index: int
    seat: Seat
    move: Any
    events: tuple[Any, ...]


class Playout(msgspec.Struct):
    game: str
    players: int
    seed: int
    setup_events: tuple[Any, ...]
    steps: list[Step]
    state: Any
    outcome: Outcome | None

    @property
    def events(self) -> list[Any]:
        out = list(self.setup_events)
        for step in self.steps:
            out.extend(step.events)
        return out


def seed_bytes(seed: int | bytes) -> bytes:
    return seed if isinstance(seed, bytes) else seed.to_bytes(16, "big", signed=True)


def setup_entropy(seed: int | bytes) -> bytes:
    return derive(seed_bytes(seed), "setup")


def move_entropy(seed: int | bytes, k: int) -> bytes:
    return derive(seed_bytes(seed), f"move/{k}")


OnStep = Callable[[Any, Step, Any], None]
"""Called with (state before, step, state after) after every move."""


def playout(
    game: Game,
    players: int,
    seed: int,
    *,
    bots: Mapping[Seat, Bot] | Bot | None = None,
    options: Any = None,
    on_step: OnStep | None = None,
    limit: int | None = None,
) -> Playout:
    """Play a whole match with bots (random by default) and return it.

    When several seats are awaited, the seat that moves next is drawn from
    the bots' stream, so simultaneous decisions are exercised in every order.
    Raises ``PlayoutError`` if the game gets stuck or exceeds ``max_moves``.
    """
    bot_rng = Rng(derive(seed_bytes(seed), "bots"))
    if bots is None:
        bots = RandomBot()
    per_seat: Mapping[Seat, Bot] = (
        bots if isinstance(bots, Mapping) else dict.fromkeys(range(players), bots)
    )
    state, setup_events = start(game, players, options, setup_entropy(seed))
    bound = game.max_moves(players) if limit is None else limit
    steps: list[Step] = []
    while game.outcome(state) is None:
        waiting = game.awaiting(state)
        if not waiting:
            raise PlayoutError(f"{game.name}: no outcome and nobody to move at step {len(steps)}")
        if len(steps) >= bound:
            raise PlayoutError(f"{game.name}: more than {bound} moves with {players} players")
        seat = waiting[0] if len(waiting) == 1 else bot_rng.choice(waiting)
        move = per_seat[seat].choose(game, state, seat, bot_rng)
        events = game.decide(state, seat, move, move_entropy(seed, len(steps)))
        after = fold(game, events, state)
        step = Step(len(steps), seat, move, events)
        if on_step is not None:
            on_step(state, step, after)
        steps.append(step)
        state = after
    return Playout(game.name, players, seed, setup_events, steps, state, game.outcome(state))
