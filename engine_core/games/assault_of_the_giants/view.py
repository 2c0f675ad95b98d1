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
from engine_core.rng import Rng
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


def sample_state(v: View, seat: Seat, rng: Rng) -> State:
    """A full state consistent with seat ``seat``'s view (for search bots).

    The hidden parts are the order of the three decks and the other seats'
    spell hands: the cards not in sight are dealt into them at random, in the
    counts the view shows.
    """
    if not 0 <= seat < v.players or v.seat != seat:
        raise ValueError(f"the view is not seat {seat}'s")
    race_index = {name: i for i, name in enumerate(D.RACES)}
    seat_race = tuple(race_index[r] for r in v.seat_races)
    race_seat = tuple(seat_race.index(r) if r in seat_race else -1 for r in range(6))
    npc = tuple(name in v.npc_races for name in D.RACES)
    special_done = tuple(
        D.SPECIAL_EVENTS[name].index(top) if top else len(D.SPECIAL_EVENTS[name])
        for name, top in zip(D.RACES, v.special_next, strict=True)
    )
    seen_res = {c for hand in v.resources for c in hand} | set(v.res_discard)
    res_deck = rng.shuffle([c for c in D.RESOURCE_IDS if c not in seen_res])
    if len(res_deck) != v.res_deck_count:
        raise ValueError(f"{len(res_deck)} unseen resources for a deck of {v.res_deck_count}")
    seen_spells = set(v.my_spells) | set(v.spell_discard)
    pool = list(rng.shuffle([c for c in D.SPELL_IDS if c not in seen_spells]))
    spells = []
    for p in range(v.players):
        if p == seat:
            spells.append(v.my_spells)
        else:
            spells.append(tuple(pool[: v.spell_counts[p]]))
            pool = pool[v.spell_counts[p] :]
    if len(pool) != v.spell_deck_count:
        raise ValueError(f"{len(pool)} unseen spells for a deck of {v.spell_deck_count}")
    seen_uni = set(v.draft) | {c for got in v.claimed for c in got}
    uni_deck = rng.shuffle([c for c in D.UNIVERSAL_EVENTS if c not in seen_uni])
    if len(uni_deck) != v.uni_deck_count:
        raise ValueError(f"{len(uni_deck)} unseen events for a deck of {v.uni_deck_count}")
    return State(
        players=v.players,
        seat_race=seat_race,
        race_seat=race_seat,
        npc=npc,
        start_seat=v.start_seat,
        round=v.round,
        active=v.active,
        phase=v.phase,
        unit_loc=v.unit_loc,
        unit_wounded=v.unit_wounded,
        lyn=v.lyn,
        rows=v.rows,
        resources=v.resources,
        spells=tuple(spells),
        res_deck=res_deck,
        res_discard=v.res_discard,
        spell_deck=tuple(pool),
        spell_discard=v.spell_discard,
        uni_deck=uni_deck,
        draft=v.draft,
        special_done=special_done,
        claimed=v.claimed,
        op=v.op,
        pool_a=v.pool_a,
        pool_b=v.pool_b,
        final_ordning=v.final_ordning,
        endgame=v.endgame,
        final_round=v.final_round,
        command=v.command,
        budget=v.budget,
        used_units=v.used_units,
        used_regions=v.used_regions,
        transit=v.transit,
        toll_unit=v.toll_unit,
        toll_region=v.toll_region,
        gs_stage=v.gs_stage,
        trade=v.trade,
        battle=v.battle,
        outcome=v.outcome,
    )
