"""What a seat may see: the public state plus its own spell hand.

Hidden (§7): the order of the Resource, Spell and Universal Event decks
(shown as counts) and other seats' spell hands (shown as counts)."""

from __future__ import annotations

from typing import Any

import msgspec
from msgspec.structs import replace

from engine_core.games.assault_of_the_giants import data as D
from engine_core.games.assault_of_the_giants.events import DeckShuffled, SpellsDrawn
from engine_core.games.assault_of_the_giants.state import Battle, State, Trade
from engine_core.types import Outcome, Seat


class View(msgspec.Struct, frozen=True, kw_only=True):
    seat: int  # the viewer, -1 for a spectator
    players: int
    seat_races: tuple[str, ...]
    npc_races: tuple[str, ...]
    start_seat: int
    round: int
    active: int
    phase: str
    awaiting: tuple[int, ...]
    unit_loc: tuple[int, ...]  # per unit of the unit table; -1 supply, -2 out, -3 box
    unit_wounded: tuple[bool, ...]
    leader_face_up: tuple[bool, ...]  # per seat
    lyn: int
    rows: tuple[tuple[str, ...], ...]
    resources: tuple[tuple[str, ...], ...]  # face up, public
    res_discard: tuple[str, ...]
    spell_discard: tuple[str, ...]
    my_spells: tuple[str, ...]
    spell_counts: tuple[int, ...]
    res_deck_count: int
    spell_deck_count: int
    uni_deck_count: int
    draft: tuple[str, ...]
    special_next: tuple[str, ...]  # per race: the top Special Event ("" when none left)
    claimed: tuple[tuple[str, ...], ...]
    op: tuple[int, ...]
    pool_a: int
    pool_b: int
    final_ordning: bool
    endgame: bool
    final_round: int
    command: str
    budget: int
    used_units: tuple[int, ...]
    used_regions: tuple[int, ...]
    transit: int
    toll_unit: int
    toll_region: int
    gs_stage: int
    trade: Trade
    battle: Battle | None
    outcome: Outcome | None


def make_view(s: State, seat: Seat | None, awaiting: tuple[int, ...]) -> View:
    me = -1 if seat is None else seat
    face_up = []
    for p in range(s.players):
        u = D.LEADER_OF[s.seat_race[p]]
        face_up.append(s.unit_loc[u] >= 0 and not s.unit_wounded[u])
    special = []
    for r, name in enumerate(D.RACES):
        stack = D.SPECIAL_EVENTS[name]
        special.append(stack[s.special_done[r]] if s.special_done[r] < len(stack) else "")
    return View(
        seat=me,
        players=s.players,
        seat_races=tuple(D.RACES[r] for r in s.seat_race),
        npc_races=tuple(D.RACES[r] for r in range(6) if s.npc[r]),
        start_seat=s.start_seat,
        round=s.round,
        active=s.active,
        phase=s.phase,
        awaiting=awaiting,
        unit_loc=s.unit_loc,
        unit_wounded=s.unit_wounded,
        leader_face_up=tuple(face_up),
        lyn=s.lyn,
        rows=s.rows,
        resources=s.resources,
        res_discard=s.res_discard,
        spell_discard=s.spell_discard,
        my_spells=s.spells[me] if 0 <= me < s.players else (),
        spell_counts=tuple(len(h) for h in s.spells),
        res_deck_count=len(s.res_deck),
        spell_deck_count=len(s.spell_deck),
        uni_deck_count=len(s.uni_deck),
        draft=s.draft,
        special_next=tuple(special),
        claimed=s.claimed,
        op=s.op,
        pool_a=s.pool_a,
        pool_b=s.pool_b,
        final_ordning=s.final_ordning,
        endgame=s.endgame,
        final_round=s.final_round,
        command=s.command,
        budget=s.budget,
        used_units=s.used_units,
        used_regions=s.used_regions,
        transit=s.transit,
        toll_unit=s.toll_unit,
        toll_region=s.toll_region,
        gs_stage=s.gs_stage,
        trade=s.trade,
        battle=s.battle,
        outcome=s.outcome,
    )


def redact(event: Any, seat: Seat | None) -> Any:
    match event:
        case DeckShuffled():
            return replace(event, cards=())
        case SpellsDrawn(seat=owner) if owner != seat:
            return replace(event, cards=())
        case _:
            return event


def secrets(s: State) -> dict[int | None, tuple[str, ...]]:
    out: dict[int | None, tuple[str, ...]] = {p: s.spells[p] for p in range(s.players)}
    out[None] = s.res_deck + s.spell_deck + s.uni_deck
    return out
