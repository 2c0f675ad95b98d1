"""Dice Forge on the engine contract."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Literal

import msgspec

from engine_core.decider import BaseGame
from engine_core.errors import NotYourTurn
from engine_core.games.dice_forge import data, rules
from engine_core.games.dice_forge.events import DiceForgeEvent
from engine_core.games.dice_forge.evolve import evolve
from engine_core.games.dice_forge.moves import DiceForgeMove, ForgeFace
from engine_core.games.dice_forge.state import PlaceFace, State
from engine_core.rng import Rng, derive
from engine_core.types import Outcome, Seat

Pick = Literal["base", "alternate", "random"]


class Options(msgspec.Struct, frozen=True, kw_only=True):
    """Card configuration: for each alternable slot, the first-game card (``base``), its
    alternate, or a 50/50 ``random`` pick from the entropy. ``cards`` is the default for
    every slot whose own field is not set."""

    cards: Pick = "base"
    m3: Pick | None = None
    m4: Pick | None = None
    m5: Pick | None = None
    m7: Pick | None = None
    m8: Pick | None = None
    f3: Pick | None = None
    f4: Pick | None = None
    f5: Pick | None = None
    f7: Pick | None = None


def card_config(options: Options, rng: Rng) -> tuple[str, ...]:
    out = []
    for slot in data.SLOTS:
        if slot.base == slot.alternate:
            out.append(slot.base)
            continue
        pick = getattr(options, slot.id.lower()) or options.cards
        if pick == "random":
            pick = "alternate" if rng.below(2) else "base"
        out.append(slot.alternate if pick == "alternate" else slot.base)
    return tuple(out)


class DiceForge(BaseGame):
    name = "dice_forge"
    title = "Dice Forge"
    rules_version = "1"
    min_players = 2
    max_players = 4
    Options = Options
    State = State
    Move = DiceForgeMove
    Event = DiceForgeEvent
    View = State

    def setup(self, players: int, options: Options, entropy: bytes) -> tuple:
        cards = card_config(options, Rng(derive(entropy, "cards")))
        return tuple(rules.setup(players, cards, Rng(entropy)))

    evolve = staticmethod(evolve)  # no wrapper frame: folds call it once per event

    def decide_move(self, state: State, seat: Seat, move, rng: Rng) -> Iterable:
        return rules.decide(state, seat, move, rng)

    def legal_moves(self, state: State, seat: Seat) -> tuple:
        return rules.legal_moves(state, seat)

    def awaiting(self, state: State) -> tuple[Seat, ...]:
        return rules.awaiting(state)

    def outcome(self, state: State) -> Outcome | None:
        return state.outcome

    def default_move(self, state: State, seat: Seat):
        """The passive answer (pass, end, keep gold in the reserve, the first option);
        a face to forge goes over the least valuable face (``G1`` first)."""
        moves = self.legal_moves(state, seat)
        if not moves:
            raise NotYourTurn(message=f"seat {seat} has nothing to do")
        if isinstance(rules.seat_task(state, seat), PlaceFace):
            # a placement, never a token the seat holds (a Triton token is offered too)
            dice = state.players[seat].dice
            places = [m for m in moves if isinstance(m, ForgeFace)]
            if places:
                return min(places, key=lambda m: data.face_worth(dice[m.die][m.slot]))
        return moves[0]

    def max_moves(self, players: int) -> int:
        # At most ~22 blessings a turn (spec 4, plus Cerberus repeats), each with at most
        # 14 decisions, plus reinforcements, two actions and tokens: 500 per turn is generous.
        return data.ROUNDS[players] * players * 500

    def seats(self, state: State) -> int:
        return len(state.players)


GAME = DiceForge()
