"""The state of a match (frozen; updated only by ``evolve``)."""

from __future__ import annotations

import msgspec

from engine_core.types import Outcome


class Side(msgspec.Struct, frozen=True, kw_only=True):
    """One side's dice in a battle.

    Per die (same position in every tuple): its kind, its face (1..6) and how
    many of its arcane symbols were converted to a block, to two hits (Attack
    ability) or to one hit (Arcane Surge).
    """

    dice: tuple[str, ...] = ()
    faces: tuple[int, ...] = ()
    to_block: tuple[int, ...] = ()
    to_hits: tuple[int, ...] = ()
    to_hit: tuple[int, ...] = ()
    bonus_hits: int = 0
    bonus_blocks: int = 0
    used: tuple[str, ...] = ()  # sources used: leader, magic, attack, npc_reroll, npc_convert,
    # and the spells / armaments played (after which no ability may be used)
    hits: int = 0  # final totals once finalized
    blocks: int = 0


class Battle(msgspec.Struct, frozen=True, kw_only=True):
    target: int
    kind: str  # "giants" (an Attack command) or "slayers" (giantslayers during Rest)
    attacker: int  # seat
    defender_race: int
    defender: int  # seat, or -1 for an NPC race
    controller: int  # the seat that runs an NPC defence (-1 for a player defender)
    step: str  # muster, attacker_roll, defender_roll, defender_casualties,
    # attacker_casualties, attacker_mend, defender_mend, advance
    attackers: tuple[int, ...] = ()
    defenders: tuple[int, ...] = ()
    att: Side = Side()
    dfn: Side = Side()
    damage: int = 0  # damage still to assign in a casualty step
    defeated: tuple[int, ...] = ()  # units defeated so far (rewarded at step 8)


class Trade(msgspec.Struct, frozen=True, kw_only=True):
    mode: str = ""  # "", deck, forced, offer, forced_return, offer_answer
    partner: int = -1
    give: tuple[str, ...] = ()  # own resource ids chosen
    request: tuple[str, ...] = ()  # partner resource ids asked for (offer)
    pool: tuple[str, ...] = ()  # partner cards held before a forced trade, not yet returned
    returned: int = 0
    offer_used: bool = False


class State(msgspec.Struct, frozen=True, kw_only=True):
    players: int
    seat_race: tuple[int, ...]  # race index per seat
    race_seat: tuple[int, ...]  # seat per race index, -1 for NPC or absent
    npc: tuple[bool, ...]  # per race index
    start_seat: int
    round: int = 1
    active: int = 0
    phase: str = "turn"  # turn, command, move, toll, attack, battle, recruit, trade,
    # leader, discard, plunder, heal, rest, over
    # board
    unit_loc: tuple[int, ...] = ()
    unit_wounded: tuple[bool, ...] = ()
    lyn: int = -1
    # cards
    rows: tuple[tuple[str, ...], ...] = ()
    resources: tuple[tuple[str, ...], ...] = ()
    spells: tuple[tuple[str, ...], ...] = ()
    res_deck: tuple[str, ...] = ()
    res_discard: tuple[str, ...] = ()
    spell_deck: tuple[str, ...] = ()
    spell_discard: tuple[str, ...] = ()
    uni_deck: tuple[str, ...] = ()
    draft: tuple[str, ...] = ()
    special_done: tuple[int, ...] = (0, 0, 0, 0, 0, 0)  # per race: claimed specials
    claimed: tuple[tuple[str, ...], ...] = ()  # per seat
    # scoring and stages
    op: tuple[int, ...] = ()
    pool_a: int = 0
    pool_b: int = 0
    final_ordning: bool = False
    endgame: bool = False
    final_round: int = 0
    # the command being resolved
    command: str = ""
    budget: int = 0  # maneuvers / battles / RP / plunders / free heals / actions left
    used_units: tuple[int, ...] = ()  # Move: none; Attack: giants that fought
    used_regions: tuple[int, ...] = ()  # tolls paid / targets attacked / plundered
    transit: int = -1  # unit (giant or giantslayer) that must move next
    toll_unit: int = -1
    toll_region: int = -1
    gs_stage: int = 0  # Rest: 0 recruit, 1 move, 2 attack
    trade: Trade = Trade()
    battle: Battle | None = None
    outcome: Outcome | None = None
