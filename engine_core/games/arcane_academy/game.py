"""Arcane Academy on the engine contract (rules spec: docs/games/arcane-academy.md)."""

from __future__ import annotations

from collections.abc import Collection, Iterable, Mapping

from engine_core.decider import BaseGame
from engine_core.games.arcane_academy import rules, view
from engine_core.games.arcane_academy.events import ArcaneEvent
from engine_core.games.arcane_academy.evolve import evolve
from engine_core.games.arcane_academy.moves import ArcaneMove
from engine_core.games.arcane_academy.state import Options, State
from engine_core.rng import Rng
from engine_core.types import Outcome, Seat

# §6.2/§6.4: at most 41 normal turns per player, plus the two Time Dilations.
MAX_NORMAL_TURNS = 41
MAX_EXTRA_TURNS = 2
# One turn: Cast, then at most 5 tiles (activated + 4 linked) x 2 parts, each
# part at most 3 moves (the action, a granted choice, a nested one), 4
# ResolveLinked, 1 FinishCast, and one placement per part (each part adds at
# most one tile): 1 + 30 + 4 + 1 + 10.
MAX_MOVES_PER_TURN = 46


class ArcaneAcademy(BaseGame):
    name = "arcane_academy"
    title = "Arcane Academy"
    rules_version = "1"
    min_players = 2
    max_players = 4
    Options = Options
    State = State
    Move = ArcaneMove
    Event = ArcaneEvent
    View = view.View

    def setup(self, players: int, options: Options, entropy: bytes) -> tuple[ArcaneEvent, ...]:
        return tuple(rules.setup(players, Rng(entropy)))

    def evolve(self, state: State | None, event: ArcaneEvent) -> State:
        return evolve(state, event)

    def decide_move(self, state: State, seat: Seat, move: ArcaneMove, rng: Rng) -> Iterable:
        return rules.decide(state, seat, move, rng)

    def legal_moves(self, state: State, seat: Seat) -> tuple[ArcaneMove, ...]:
        return rules.legal_moves(state, seat)

    def awaiting(self, state: State) -> tuple[Seat, ...]:
        return () if state.outcome is not None else (state.current,)

    def view(self, state: State, seat: Seat | None) -> view.View:
        return view.view(state, seat)

    def redact(self, event: ArcaneEvent, seat: Seat | None) -> ArcaneEvent:
        return view.redact(event, seat)

    def secrets(self, state: State) -> Mapping[Seat | None, Collection[str]]:
        return view.secrets(state)

    def sample_state(self, v: view.View, seat: Seat, rng: Rng) -> State:
        return view.sample_state(v, seat, rng)

    def outcome(self, state: State) -> Outcome | None:
        return state.outcome

    def default_move(self, state: State, seat: Seat) -> ArcaneMove:
        return rules.default_move(state, seat)

    def max_moves(self, players: int) -> int:
        return MAX_MOVES_PER_TURN * (MAX_NORMAL_TURNS * players + MAX_EXTRA_TURNS)

    def seats(self, state: State) -> int:
        return len(state.players)


GAME = ArcaneAcademy()
