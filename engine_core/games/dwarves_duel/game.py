"""The Dwarves: The Duel on the engine contract (the ``GAME`` object)."""

from __future__ import annotations

from collections.abc import Collection, Iterable, Mapping
from typing import Literal

import msgspec

from engine_core.decider import BaseGame
from engine_core.errors import MalformedMove
from engine_core.games.dwarves_duel import rules
from engine_core.games.dwarves_duel import view as view_mod
from engine_core.games.dwarves_duel.data import DECKS, EVIL, GOOD, HAND_SIZE
from engine_core.games.dwarves_duel.events import (
    CardsDrawn,
    DeckShuffled,
    DwarvesEvent,
    GameStarted,
    TurnStarted,
)
from engine_core.games.dwarves_duel.evolve import evolve
from engine_core.games.dwarves_duel.moves import DwarvesMove
from engine_core.games.dwarves_duel.state import State
from engine_core.rng import Rng
from engine_core.types import Outcome, Seat


class Options(msgspec.Struct, frozen=True, kw_only=True):
    """Match configuration (spec §3, §5.6)."""

    seat0_side: Literal["GOOD", "EVIL"] = "GOOD"
    first_player: int | None = None  # a seat; drawn from the entropy when absent
    always_offer_windows: bool = False


# An honest bound on moves per match (see docs/games/dwarves-duel.md):
# at most 62 turns (62 cards in the piles after setup, each turn draws >= 1);
# per turn at most 9 fixed moves (draw, roll, 2 re-rolls, end dice phase,
# King, end turn, pass CP1, pass CP4) and 9 Ally activations (6 dice, 3 Wild
# Cards), each with a defender-window pass; over the match at most 72 card
# plays (70 cards + 2 recoveries), each with one more pass, and at most 72
# extra Wild Card units regained through EV_TAKEWILD, each with its pass.
MAX_TURNS = 62
MAX_MOVES = MAX_TURNS * (9 + 2 * 9) + 2 * 72 + 2 * 72


class DwarvesDuel(BaseGame):
    name = "dwarves_duel"
    title = "The Dwarves: The Duel"
    rules_version = "1"
    min_players = 2
    max_players = 2
    Options = Options
    State = State
    Move = DwarvesMove
    Event = DwarvesEvent
    View = view_mod.View

    def setup(self, players: int, options: Options, entropy: bytes) -> tuple[DwarvesEvent, ...]:
        if players != 2:
            raise MalformedMove("player_count", "The Dwarves: The Duel is for exactly 2 players")
        rng = Rng(entropy)
        first = options.first_player
        if first is None:
            first = rng.below(2)
        elif first not in (0, 1):
            raise MalformedMove("malformed_options", f"first_player must be 0 or 1, not {first}")
        sides = (GOOD, EVIL) if options.seat0_side == GOOD else (EVIL, GOOD)
        seat_of = {side: seat for seat, side in enumerate(sides)}
        events: list[DwarvesEvent] = [
            GameStarted(
                sides=sides,
                first_player=first,
                always_offer_windows=options.always_offer_windows,
            )
        ]
        orders = {side: rng.shuffle(DECKS[side]) for side in (GOOD, EVIL)}
        for side in (GOOD, EVIL):
            events.append(DeckShuffled(seat=seat_of[side], order=orders[side]))
        for seat in (0, 1):
            hand = orders[sides[seat]][:HAND_SIZE]
            events.append(CardsDrawn(seat=seat, count=len(hand), cards=hand))
        events.append(TurnStarted(seat=first, turn=1))
        return tuple(events)

    def evolve(self, state: State | None, event: DwarvesEvent) -> State:
        return evolve(state, event)

    def decide_move(self, state: State, seat: Seat, move: DwarvesMove, rng: Rng) -> Iterable:
        return rules.decide(state, seat, move, rng)

    def legal_moves(self, state: State, seat: Seat) -> tuple[DwarvesMove, ...]:
        return rules.legal_moves(state, seat)

    def awaiting(self, state: State) -> tuple[Seat, ...]:
        return () if state.outcome is not None else (rules.holder(state),)

    def view(self, state: State, seat: Seat | None) -> view_mod.View:
        return view_mod.view(state, seat, self.awaiting(state))

    def redact(self, event: DwarvesEvent, seat: Seat | None) -> DwarvesEvent:
        return view_mod.redact(event, seat)

    def secrets(self, state: State) -> Mapping[Seat | None, Collection[str]]:
        return view_mod.secrets(state)

    def sample_state(self, view: view_mod.View, seat: Seat, rng: Rng) -> State:
        return view_mod.sample_state(view, seat, rng)

    def outcome(self, state: State) -> Outcome | None:
        return state.outcome

    def default_move(self, state: State, seat: Seat) -> DwarvesMove:
        return rules.default_move(state, seat)

    def max_moves(self, players: int) -> int:
        return MAX_MOVES

    def seats(self, state: State) -> int:
        return 2


GAME = DwarvesDuel()
