"""Assault of the Giants on the engine contract."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

import msgspec

from engine_core.decider import BaseGame
from engine_core.games.assault_of_the_giants import data as D
from engine_core.games.assault_of_the_giants import rules
from engine_core.games.assault_of_the_giants.events import (
    AssaultEvent,
    DeckShuffled,
    DraftRevealed,
    GameStarted,
    ResourcesDrawn,
    SpellsDrawn,
    TurnBegan,
    UnitPlaced,
)
from engine_core.games.assault_of_the_giants.evolve import evolve
from engine_core.games.assault_of_the_giants.moves import (
    AssaultMove,
    AssignCasualty,
    ConfirmTrade,
    EndAdvance,
    EndAttack,
    EndHeal,
    EndMove,
    EndPlunder,
    EndRecruit,
    EndRest,
    EndTrade,
    FinalizeRoll,
    LeaderPass,
    PassMend,
    PayToll,
    PlayCommand,
    RespondOffer,
    ReturnCard,
    StartBattle,
)
from engine_core.games.assault_of_the_giants.state import State
from engine_core.games.assault_of_the_giants.view import (
    View,
    make_view,
    redact,
    sample_state,
    secrets,
)
from engine_core.rng import Rng
from engine_core.types import Outcome, Seat

MOVES_PER_TURN = 200  # an honest bound on decisions in one turn (docs: "Bounds")


class Options(msgspec.Struct, frozen=True, kw_only=True):
    """No variants."""


_DEFAULTS = (
    EndMove(), EndAttack(), EndRecruit(), EndTrade(), LeaderPass(), EndPlunder(), EndHeal(),
    EndRest(), FinalizeRoll(), PassMend(), EndAdvance(), RespondOffer(accept=False),
    PlayCommand(command="rest"), StartBattle(), ConfirmTrade(), ReturnCard(card="food"),
)  # fmt: skip
_TOLL_CARDS = ("food", "armament", *(f"rune_{r}" for r in D.RUNES))


def _default_toll(state: State, moves: tuple[Any, ...]) -> Any:
    """Pay a Food if possible; else wound a healthy giant; else any card (so a
    wounded giant is not killed); else wound."""
    for m in (PayToll(card="food"), PayToll(card="wound")):
        if m in moves and (m.card == "food" or not state.unit_wounded[state.toll_unit]):
            return m
    for k in _TOLL_CARDS:
        if PayToll(card=k) in moves:
            return PayToll(card=k)
    return PayToll(card="wound")


def _default_casualty(state: State, moves: tuple[Any, ...]) -> Any:
    """The unit whose loss costs least: a mere wound first, else the lowest OV."""
    b = state.battle
    assert b is not None

    def cost(m: AssignCasualty) -> tuple[int, int]:
        u = m.unit
        dies = state.unit_wounded[u] or rules.unit_fort(state, u) <= b.damage
        return (1, D.UNITS[u].ov) if dies else (0, D.UNITS[u].ov)

    return min((m for m in moves if isinstance(m, AssignCasualty)), key=cost)


class AssaultOfTheGiants(BaseGame):
    name = "assault_of_the_giants"
    title = "D&D Assault of the Giants"
    rules_version = "1"
    min_players = 3
    max_players = 6
    Options = Options
    State = State
    Move = AssaultMove
    Event = AssaultEvent
    View = View

    def setup(self, players: int, options: Any, entropy: bytes) -> tuple[Any, ...]:
        rng = Rng(entropy)
        npc = D.NPC_RACES[players]
        races = [r for r in D.RACES if r not in npc]
        start = rng.below(players)
        seat_races: list[str] = [""] * players
        for i, r in enumerate(races):
            seat_races[(start + i) % players] = r
        n_pool = D.POOL_PER_PLAYER * players
        ev: list[Any] = [
            GameStarted(
                players=players, seat_races=tuple(seat_races), npc_races=npc, start_seat=start,
                pool_a=n_pool, pool_b=n_pool,
            )
        ]  # fmt: skip
        for race in D.RACES:
            home = D.REGION_INDEX[D.START_REGION[race]]
            for u in D.initial_group(race):
                ev.append(UnitPlaced(unit=u, region=home, reason="setup"))
            if race in npc:
                out = D.REGION_INDEX[D.OUTPOST[race]]
                ev.append(UnitPlaced(unit=D.npc_outpost_elite(race), region=out, reason="setup"))
        order = [(start + i) % players for i in range(players)]
        deck = rng.shuffle(D.RESOURCE_IDS)
        ev.append(DeckShuffled(deck="resource", cards=deck, size=len(deck)))
        for k, p in enumerate(order):
            ev.append(ResourcesDrawn(seat=p, cards=deck[3 * k : 3 * k + 3]))
        spells = rng.shuffle(D.SPELL_IDS)
        ev.append(DeckShuffled(deck="spell", cards=spells, size=len(spells)))
        for k, p in enumerate(order):
            ev.append(SpellsDrawn(seat=p, cards=spells[k : k + 1], count=1))
        uni = rng.shuffle(D.UNIVERSAL_EVENTS)
        ev.append(DeckShuffled(deck="universal", cards=uni, size=len(uni)))
        ev.extend(DraftRevealed(card=c) for c in uni[: D.DRAFT_SIZE])
        ev.append(TurnBegan(seat=start, round=1))
        return tuple(ev)

    def evolve(self, state: State | None, event: Any) -> State:
        return evolve(state, event)

    def decide_move(self, state: State, seat: Seat, move: Any, rng: Rng) -> Iterable[Any]:
        return rules.decide(state, seat, move, rng)

    def legal_moves(self, state: State, seat: Seat) -> tuple[Any, ...]:
        if state.outcome is not None:
            return ()
        return rules.legal_moves(state, seat)

    def awaiting(self, state: State) -> tuple[Seat, ...]:
        return rules.awaiting(state)

    def view(self, state: State, seat: Seat | None) -> View:
        return make_view(state, seat, rules.awaiting(state))

    def redact(self, event: Any, seat: Seat | None) -> Any:
        return redact(event, seat)

    def secrets(self, state: State) -> dict[int | None, tuple[str, ...]]:
        return secrets(state)

    def sample_state(self, view: View, seat: Seat, rng: Rng) -> State:
        return sample_state(view, seat, rng)

    def outcome(self, state: State) -> Outcome | None:
        return state.outcome

    def default_move(self, state: State, seat: Seat) -> Any:
        moves = rules.legal_moves(state, seat)
        if state.phase == "toll":
            return _default_toll(state, moves)
        for m in _DEFAULTS:
            if m in moves:
                return m
        if isinstance(moves[0], AssignCasualty):
            return _default_casualty(state, moves)
        return moves[0]

    def max_moves(self, players: int) -> int:
        return (D.ROUND_LIMIT + 1) * players * MOVES_PER_TURN

    def seats(self, state: State) -> int:
        return state.players


GAME = AssaultOfTheGiants()
