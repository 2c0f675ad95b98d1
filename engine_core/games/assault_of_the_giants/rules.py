"""The rules: ``legal_moves``, ``awaiting`` and ``decide`` (one small function
per command and effect). ``decide`` emits events through a ``Ctx`` that folds
each one at once, so later steps of a move read the state they produced."""

from __future__ import annotations

from collections.abc import Callable
from itertools import combinations
from typing import Any

from engine_core.errors import IllegalMove
from engine_core.flow import Phase, Phases, next_seat
from engine_core.games.assault_of_the_giants import data as D
from engine_core.games.assault_of_the_giants.events import (
    ArcaneConverted,
    AttackerJoined,
    BattleDeclared,
    BattleEnded,
    BattleStep,
    BonusAdded,
    CardsGiven,
    CasualtyTaken,
    CommandPlayed,
    DeckShuffled,
    DiceRerolled,
    DiceRolled,
    DraftRevealed,
    EventClaimed,
    GameEnded,
    LynMoved,
    OfferAnswered,
    OpAwarded,
    PhaseEntered,
    PileCardTaken,
    RegionPlundered,
    ResourcesDiscarded,
    ResourcesDrawn,
    RestStage,
    RollFinalized,
    RowReturned,
    SpellCast,
    SpellsDiscarded,
    SpellsDrawn,
    StageBegan,
    TollDue,
    TollPaid,
    TradeChanged,
    TradeCompleted,
    TradeOffered,
    TurnBegan,
    TurnEnded,
    UnitHealed,
    UnitMoved,
    UnitPlaced,
    UnitRemoved,
    UnitWounded,
)
from engine_core.games.assault_of_the_giants.evolve import evolve
from engine_core.games.assault_of_the_giants.moves import (
    AddAttacker,
    Advance,
    AssignCasualty,
    CastMend,
    CastSpell,
    ClaimEvent,
    ConfirmTrade,
    ConvertArcane,
    DeclareBattle,
    DiscardSpell,
    EndAdvance,
    EndAttack,
    EndHeal,
    EndMove,
    EndPlunder,
    EndRecruit,
    EndRest,
    EndTrade,
    FinalizeRoll,
    GiveCard,
    GsAttack,
    GsMove,
    GsRecruit,
    HealUnit,
    LeaderAbility,
    LeaderPass,
    LeaderReturn,
    Maneuver,
    MoveLyn,
    PassMend,
    PayToll,
    PlayArmament,
    PlayCommand,
    Plunder,
    Recruit,
    RequestCard,
    Reroll,
    RespondOffer,
    ReturnCard,
    StartBattle,
    StartTrade,
)
from engine_core.games.assault_of_the_giants.state import Battle, Side, State, Trade
from engine_core.rng import Rng
from engine_core.types import Seat, ranks_from_keys

CLOUD = D.RACE_INDEX["cloud"]
STORM = D.RACE_INDEX["storm"]
FROST = D.RACE_INDEX["frost"]
STONE = D.RACE_INDEX["stone"]
FIRE = D.RACE_INDEX["fire"]
HILL = D.RACE_INDEX["hill"]
N_GIANTS = D.N_UNITS - 3
EVERMOORS = D.REGION_INDEX["Evermoors"]
TRACKLESS = D.REGION_INDEX["Trackless Sea"]
ICE_SPIRES = D.REGION_INDEX["Ice Spires"]
MIRABAR = D.REGION_INDEX["Mirabar"]
LIMIT = tuple(D.STACK_LIMIT[r] for r in D.RACES)
KINDS_OF_RACE = tuple(
    tuple(dict.fromkeys(D.UNITS[u].kind for u in D.RACE_UNITS[r])) for r in range(6)
)
UNITS_OF_KIND = tuple(
    {k: tuple(u for u in D.RACE_UNITS[r] if D.UNITS[u].kind == k) for k in KINDS_OF_RACE[r]}
    for r in range(6)
)
"""Per race, per unit kind: its units, in ``RACE_UNITS`` order."""
SPELL_SOURCES = frozenset({"lightning_bolt", "stoneskin", "arcane_surge", "fortune", "armament"})
F1_REGIONS = tuple(D.REGION_INDEX[n] for n in ("Luskan", "Neverwinter", "Waterdeep"))


class Ctx:
    """Collects events and keeps the state they lead to."""

    __slots__ = ("events", "rng", "s")

    def __init__(self, state: State, rng: Rng) -> None:
        self.s = state
        self.rng = rng
        self.events: list[Any] = []

    def emit(self, event: Any) -> None:
        self.events.append(event)
        self.s = evolve(self.s, event)


# ================================================================ queries
def board(s: State) -> tuple[list[int], list[int]]:
    """Per region: the race of its giants (-1 none) and how many there are.
    A giant in transit is not counted: it is passing through."""
    race = [-1] * 22
    cnt = [0] * 22
    loc = s.unit_loc
    skip = s.transit
    for u in range(N_GIANTS):
        g = loc[u]
        if g >= 0 and u != skip:
            race[g] = D.UNIT_RACE[u]
            cnt[g] += 1
    return race, cnt


def race_of(s: State, seat: Seat) -> int:
    return s.seat_race[seat]


def forbidden(s: State, race: int, g: int) -> bool:
    """Another race's Starting Region before the Final Ordning."""
    sr = D.START_RACE[g]
    return not s.final_ordning and sr >= 0 and sr != race


def on_board(s: State, race: int) -> list[int]:
    loc = s.unit_loc
    return [u for u in D.RACE_UNITS[race] if loc[u] >= 0]


def giants_at(s: State, g: int) -> tuple[int, ...]:
    loc = s.unit_loc
    return tuple(u for u in range(N_GIANTS) if loc[u] == g)


def slayers_at(s: State, g: int) -> tuple[int, ...]:
    return tuple(u for u in D.GIANTSLAYERS if s.unit_loc[u] == g)


def leader_healthy(s: State, race: int) -> bool:
    u = D.LEADER_OF[race]
    return s.unit_loc[u] >= 0 and not s.unit_wounded[u]


def leader_active(s: State, race: int) -> bool:
    """A continuous leader ability: Leader Command in the row, leader healthy on board."""
    seat = s.race_seat[race]
    return seat >= 0 and "leader" in s.rows[seat] and leader_healthy(s, race)


def has_claimed(s: State, seat: Seat, ev: str) -> bool:
    return ev in s.claimed[seat]


def kinds(cards: tuple[str, ...], exclude: tuple[str, ...] = ()) -> list[str]:
    ex = set(exclude)
    return list(dict.fromkeys(D.RESOURCE_KIND[c] for c in cards if c not in ex))


def first_of(cards: tuple[str, ...], kind: str, exclude: tuple[str, ...] = ()) -> str:
    for c in cards:
        if D.RESOURCE_KIND[c] == kind and c not in exclude:
            return c
    raise IllegalMove("no_such_card", f"no {kind} card")


def regions_occupied(s: State, race: int) -> set[int]:
    loc = s.unit_loc
    return {loc[u] for u in D.RACE_UNITS[race] if loc[u] >= 0}


def unit_fort(s: State, u: int) -> int:
    return D.UNITS[u].fort[1 if s.unit_wounded[u] else 0]


def unit_dice(s: State, u: int) -> int:
    return D.UNITS[u].dice[1 if s.unit_wounded[u] else 0]


def row_pos(row: tuple[str, ...], card: str) -> int:
    return row.index(card) + 1 if card in row else 0


# ================================================================ awaiting
def awaiting(s: State) -> tuple[Seat, ...]:
    if s.outcome is not None or s.phase in ("over", "between", "setup"):
        return ()
    if s.phase == "battle" and s.battle is not None:
        return (battle_owner(s.battle),)
    if s.phase == "trade" and s.trade.mode in ("forced_return", "offer_answer"):
        return (s.trade.partner,)
    return (s.active,)


def battle_owner(b: Battle) -> Seat:
    if b.step in ("defender_roll", "defender_casualties"):
        return b.defender if b.defender >= 0 else b.controller
    if b.step == "defender_mend":
        return b.defender
    return b.attacker


# ============================================================ legal moves
def legal_moves(s: State, seat: Seat) -> tuple[Any, ...]:
    if seat not in awaiting(s):
        return ()
    return tuple(PHASE_OPTIONS[s.phase](s, seat))


def legal_moves_like(s: State, seat: Seat, move: Any) -> tuple[Any, ...] | list[Any]:
    """The part of ``legal_moves`` that holds every legal move equal to ``move``: at
    the start of a turn, a command is checked without listing the events (their
    requirements are the costly part), and an event without listing the commands;
    a Maneuver is checked against the maneuvers of its own giant only."""
    if seat not in awaiting(s):
        return ()
    if s.phase == "turn":
        return command_options(s, seat) if type(move) is PlayCommand else claim_options(s, seat)
    if s.phase == "move" and type(move) is Maneuver:
        units = movable(s, race_of(s, seat)) if s.budget > 0 else []
        if move.unit not in units:
            return ()
        rr, cnt = board(s)
        return unit_maneuvers(s, race_of(s, seat), rr, cnt, units[units.index(move.unit)])
    return legal_moves(s, seat)


def opts_turn(s: State, seat: Seat) -> list[Any]:
    return [*claim_options(s, seat), *command_options(s, seat)]


def command_options(s: State, seat: Seat) -> list[Any]:
    row = s.rows[seat]
    return [PlayCommand(command=c) for c in D.COMMANDS if c not in row]


# ------------------------------------------------------------------ events
def event_requirement(s: State, seat: Seat, ev: str) -> tuple[bool, bool]:
    """(requirement met, free condition met)."""
    race = race_of(s, seat)
    occ = regions_occupied(s, race)
    n_on = len(on_board(s, race))
    if ev == "H1":
        k = sum(1 for g in occ if D.IS_SMALL_FOLK[g])
        return k >= 3, k >= 4
    if ev == "S1":
        return len(occ) >= 5, len(occ) >= 6
    if ev == "F1":
        k = sum(1 for g in F1_REGIONS if g in occ)
        return k >= 2, k >= 3
    if ev == "F2":
        return n_on >= 8, n_on >= 10
    if ev == "R1":
        return len(occ - {ICE_SPIRES}) >= 3, False
    if ev == "R2":
        z = D.LEADER_OF[FIRE]
        ok = s.unit_loc[z] == ICE_SPIRES and not s.unit_wounded[z]
        return ok, ok and MIRABAR in occ
    if ev == "C1":
        lyn = s.lyn
        ok = (
            lyn != EVERMOORS
            and sum(1 for u in D.RACE_UNITS[CLOUD] if s.unit_loc[u] == lyn) >= 2
            and len(s.spells[seat]) >= 2
        )
        return ok, False
    if ev == "T1":
        return sum(1 for g in D.ADJ[TRACKLESS] if g in occ) >= 2, False
    if ev == "T2":
        return len(occ) >= 4, leader_healthy(s, STORM)
    if ev == "T3":
        h = D.HEKATON
        return s.unit_loc[h] >= 0 and not s.unit_wounded[h] and len(occ) >= 6, False
    if ev in D.SACK:
        name, k = D.SACK[ev]
        g = D.REGION_INDEX[name]
        return sum(1 for u in D.RACE_UNITS[race] if s.unit_loc[u] == g) >= k, False
    if ev == "U09":
        return len(occ) >= 6, len(occ) >= 8
    if ev == "U10":
        return n_on >= 10, False
    if ev == "U11":
        return len(s.spells[seat]) >= 4, False
    if ev == "U12":
        return True, False
    return False, False


def placement_removes(s: State, race: int, g: int) -> list[int] | None:
    """Units that may make room in ``g`` for a free placement: [-1] if there is
    room, the own giants there if full, None if enemies hold it."""
    rr, cnt = board(s)
    if rr[g] not in (-1, race):
        return None
    if cnt[g] < LIMIT[race] or rr[g] == -1:
        return [-1]
    return [u for u in D.RACE_UNITS[race] if s.unit_loc[u] == g]


def claim_options(s: State, seat: Seat) -> list[ClaimEvent]:
    race = race_of(s, seat)
    rname = D.RACES[race]
    cands: list[str] = []
    special = D.SPECIAL_EVENTS[rname]
    if s.special_done[race] < len(special):
        cands.append(special[s.special_done[race]])
    cands.extend(s.draft)
    held = kinds(s.resources[seat])
    out: list[ClaimEvent] = []
    for ev in cands:
        ok, free = event_requirement(s, seat, ev)
        if not ok:
            continue
        pays: list[str] = []
        if ev == "U12":
            if sum(1 for c in s.resources[seat] if D.RESOURCE_KIND[c] == "food") >= 4:
                pays.append("food")
        elif ev.startswith("U"):
            pays = [k for k in held if k.startswith("rune_")]
        else:
            rune = "rune_" + D.RUNE_OF_RACE[rname]
            if rune in held:
                pays.append(rune)
        if free:
            pays.append("free")
        if not pays:
            continue
        removes: list[int] | None = [-1]
        if ev == "R2":
            removes = placement_removes(s, race, ICE_SPIRES)
        elif ev == "T2":
            removes = placement_removes(s, race, TRACKLESS)
        if removes is None:
            continue
        out.extend(ClaimEvent(event=ev, payment=p, remove=r) for p in pays for r in removes)
    return out


# -------------------------------------------------------------------- move
class MoveCtx:
    """Stacking and destination checks for one moving giant."""

    __slots__ = ("cnt", "race", "rr", "s", "unit")

    def __init__(self, s: State, race: int, rr: list[int], cnt: list[int], unit: int) -> None:
        self.s, self.race, self.rr, self.unit = s, race, rr, unit
        if unit != s.transit:
            cnt = list(cnt)
            cnt[s.unit_loc[unit]] -= 1
        self.cnt = cnt

    def enterable(self, g: int) -> bool:
        if self.rr[g] == self.race and self.cnt[g] >= LIMIT[self.race]:
            return self.unit == D.HEKATON and self.s.unit_loc[D.STORM_CHAMPION] == g
        return True

    def end_ok(self, g: int) -> bool:
        return (
            (self.rr[g] == -1 or self.rr[g] == self.race or self.cnt[g] == 0)
            and not forbidden(self.s, self.race, g)
            and self.enterable(g)
        )

    def escapes(self, g: int, budget: int) -> bool:
        seen = {g}
        frontier = [g]
        for _ in range(budget):
            nxt = []
            for r in frontier:
                for n in D.ADJ[r]:
                    if n in seen or not self.enterable(n):
                        continue
                    if self.end_ok(n):
                        return True
                    seen.add(n)
                    nxt.append(n)
            frontier = nxt
        return False

    def can_step(self, g: int, budget: int) -> bool:
        if not self.enterable(g):
            return False
        return self.end_ok(g) or self.escapes(g, budget - 1)


def movable(s: State, race: int) -> list[int]:
    """The giants that may make the next Maneuver."""
    return [s.transit] if s.transit >= 0 else on_board(s, race)


def unit_maneuvers(s: State, race: int, rr: list[int], cnt: list[int], u: int) -> list[Any]:
    mc = MoveCtx(s, race, rr, cnt, u)
    return [Maneuver(unit=u, to=g) for g in D.ADJ[s.unit_loc[u]] if mc.can_step(g, s.budget)]


def opts_move(s: State, seat: Seat) -> list[Any]:
    race = race_of(s, seat)
    out: list[Any] = []
    if s.budget > 0:
        rr, cnt = board(s)
        for u in movable(s, race):
            out += unit_maneuvers(s, race, rr, cnt, u)
        if race == CLOUD and s.transit < 0:
            for g in D.ADJ[s.lyn]:
                if rr[g] in (-1, CLOUD) and not forbidden(s, CLOUD, g):
                    out.append(MoveLyn(to=g))
    if s.transit < 0:
        out.append(EndMove())
    return out


def opts_toll(s: State, seat: Seat) -> list[Any]:
    return [*(PayToll(card=k) for k in kinds(s.resources[seat])), PayToll(card="wound")]


# ------------------------------------------------------------------ attack
def attack_targets(s: State, seat: Seat) -> list[int]:
    race = race_of(s, seat)
    rr, _ = board(s)
    ready = {s.unit_loc[u] for u in on_board(s, race) if u not in s.used_units}
    out = []
    for g in range(22):
        if rr[g] in (-1, race) or forbidden(s, race, g) or g in s.used_regions:
            continue
        if any(n in ready for n in D.ADJ[g]):
            out.append(g)
    return out


def opts_attack(s: State, seat: Seat) -> list[Any]:
    return [*(DeclareBattle(target=g) for g in attack_targets(s, seat)), EndAttack()]


def muster_candidates(s: State, b: Battle) -> list[int]:
    race = race_of(s, b.attacker)
    adj = D.ADJ_SET[b.target]
    return [u for u in on_board(s, race) if s.unit_loc[u] in adj and u not in s.used_units]


def arcane_left(sd: Side) -> list[int]:
    """One entry (die position) per unconverted arcane symbol, ascending."""
    out: list[int] = []
    for i, (die, f) in enumerate(zip(sd.dice, sd.faces, strict=True)):
        a = D.DIE_FACES[die][f - 1][2] - sd.to_block[i] - sd.to_hits[i] - sd.to_hit[i]
        out.extend([i] * a)
    return out


def symbol_choices(sd: Side, k: int) -> list[tuple[int, ...]]:
    """Every choice of 1..k unconverted arcane symbols, as ascending die positions
    (a die with two unconverted symbols may be named twice)."""
    arc = arcane_left(sd)
    out: list[tuple[int, ...]] = []
    for size in range(1, min(len(arc), k) + 1):
        out.extend(dict.fromkeys(combinations(arc, size)))
    return out


def subsets(n: int, k: int) -> list[tuple[int, ...]]:
    out: list[tuple[int, ...]] = []
    for size in range(1, min(n, k) + 1):
        out.extend(combinations(range(n), size))
    return out


def spell_options(s: State, seat: Seat, sd: Side) -> list[Any]:
    out: list[Any] = []
    surge = symbol_choices(sd, 2)
    for sp in s.spells[seat]:
        kind = D.SPELL_KIND[sp]
        if kind in ("lightning_bolt", "stoneskin"):
            out.append(CastSpell(spell=sp))
        elif kind == "arcane_surge":
            out.extend(CastSpell(spell=sp, dice=d) for d in surge)
        elif kind == "fortune":
            out.extend(CastSpell(spell=sp, dice=d) for d in subsets(len(sd.dice), 2))
    if any(D.RESOURCE_KIND[c] == "armament" for c in s.resources[seat]):
        out.append(PlayArmament(effect="hit"))
        out.append(PlayArmament(effect="block"))
    return out


def opts_battle(s: State, seat: Seat) -> list[Any]:
    b = s.battle
    assert b is not None
    step = b.step
    if step == "muster":
        out: list[Any] = [AddAttacker(unit=u) for u in muster_candidates(s, b)
                          if u not in b.attackers]  # fmt: skip
        if b.attackers:
            out.append(StartBattle())
        return out
    if step == "attacker_roll":
        sd = b.att
        row = s.rows[b.attacker]
        out = []
        # positional abilities first; once a spell or Armament is played they are over
        abilities = not any(u in SPELL_SOURCES for u in sd.used)
        p = row_pos(row, "leader") if abilities else 0
        if p and "leader" not in sd.used:
            out.extend(Reroll(dice=d) for d in subsets(len(sd.dice), len(row) - p))
        p = row_pos(row, "magic") if abilities else 0
        if p and "magic" not in sd.used:
            out.extend(
                ConvertArcane(into="block", dice=d) for d in symbol_choices(sd, len(row) - p)
            )
        p = row_pos(row, "attack") if abilities else 0
        if p and "attack" not in sd.used:
            out.extend(ConvertArcane(into="hits", dice=d) for d in symbol_choices(sd, p - 1))
        out.extend(spell_options(s, b.attacker, sd))
        out.append(FinalizeRoll())
        return out
    if step == "defender_roll":
        sd = b.dfn
        out = []
        if b.defender < 0:
            if "npc_reroll" not in sd.used:
                out.extend(Reroll(dice=d) for d in subsets(len(sd.dice), 2))
            if "npc_convert" not in sd.used:
                out.extend(ConvertArcane(into="block", dice=d) for d in symbol_choices(sd, 2))
        else:
            out.extend(spell_options(s, b.defender, sd))
        out.append(FinalizeRoll())
        return out
    if step == "defender_casualties":
        return [AssignCasualty(unit=u) for u in casualty_candidates(s, b, "defender")]
    if step == "attacker_casualties":
        return [AssignCasualty(unit=u) for u in casualty_candidates(s, b, "attacker")]
    if step in ("attacker_mend", "defender_mend"):
        side = "attacker" if step == "attacker_mend" else "defender"
        owner = b.attacker if side == "attacker" else b.defender
        units = mend_candidates(s, b, side)
        out = [
            CastMend(spell=sp, unit=u)
            for sp in s.spells[owner]
            if D.SPELL_KIND[sp] == "mend"
            for u in units
        ]
        out.append(PassMend())
        return out
    if step == "advance":
        return [*(Advance(unit=u) for u in advance_candidates(s, b)), EndAdvance()]
    raise AssertionError(step)


def casualty_candidates(s: State, b: Battle, side: str) -> list[int]:
    if side == "defender":
        return [u for u in b.defenders if s.unit_loc[u] == b.target]
    return [u for u in b.attackers if s.unit_loc[u] >= 0]


def mend_candidates(s: State, b: Battle, side: str) -> list[int]:
    return [u for u in casualty_candidates(s, b, side) if s.unit_wounded[u] and D.UNIT_RACE[u] >= 0]


def advance_candidates(s: State, b: Battle) -> list[int]:
    race = race_of(s, b.attacker)
    rr, cnt = board(s)
    out = []
    for u in b.attackers:
        a = s.unit_loc[u]
        if a < 0 or a == b.target:
            continue
        if rr[b.target] in (-1, race) and (
            cnt[b.target] < LIMIT[race]
            or (u == D.HEKATON and s.unit_loc[D.STORM_CHAMPION] == b.target)
        ):
            out.append(u)
    return out


# ----------------------------------------------------------------- recruit
def recruit_region(s: State, race: int) -> int:
    return s.lyn if race == CLOUD else D.START_OF[race]


def opts_recruit(s: State, seat: Seat) -> list[Any]:
    return [*recruit_options(s, seat), EndRecruit()]


def recruit_options(s: State, seat: Seat) -> list[Recruit]:
    race = race_of(s, seat)
    g = recruit_region(s, race)
    removes = placement_removes(s, race, g)
    if removes is None:
        return []
    out = []
    for kind in KINDS_OF_RACE[race]:
        u = supply_unit(s, race, kind)
        if u is None or D.UNITS[u].ov > s.budget:
            continue
        out.extend(Recruit(kind=kind, remove=r) for r in removes)
    return out


def supply_unit(s: State, race: int, kind: str) -> int | None:
    for u in UNITS_OF_KIND[race].get(kind, ()):
        if s.unit_loc[u] == D.SUPPLY:
            return u
    return None


# ------------------------------------------------------------------- trade
def opts_trade(s: State, seat: Seat) -> list[Any]:
    t = s.trade
    mine = s.resources[s.active]
    out: list[Any] = []
    if t.mode == "":
        if mine:
            out.append(StartTrade(mode="deck"))
        for p in range(s.players):
            if p == s.active:
                continue
            if mine and s.resources[p]:
                out.append(StartTrade(mode="forced", partner=p))
            if not t.offer_used and (mine or s.resources[p]):
                out.append(StartTrade(mode="offer", partner=p))
        out.append(EndTrade())
        return out
    if t.mode == "forced_return":
        return [ReturnCard(card=k) for k in kinds(t.pool)]
    if t.mode == "offer_answer":
        return [RespondOffer(accept=True), RespondOffer(accept=False)]
    cap = s.budget
    if t.mode == "forced":
        cap = min(cap, len(s.resources[t.partner]))
    if len(t.give) < cap:
        out.extend(GiveCard(card=k) for k in kinds(mine, t.give))
    if t.mode == "offer":
        out.extend(RequestCard(card=k) for k in kinds(s.resources[t.partner], t.request))
    if t.give or t.request:
        out.append(ConfirmTrade())
        if t.mode == "deck":
            out.extend(ConfirmTrade(take=k) for k in kinds(s.res_discard + t.give))
    out.append(EndTrade())  # legal whenever no answer is pending: drops an unsent trade
    return out


# ------------------------------------------------------------------ leader
def lyn_targets(s: State) -> list[int]:
    rr, _ = board(s)
    return [g for g in range(22) if rr[g] == CLOUD and g != s.lyn and not forbidden(s, CLOUD, g)]


def opts_leader(s: State, seat: Seat) -> list[Any]:
    race = race_of(s, seat)
    out: list[Any] = []
    if leader_healthy(s, race):
        out.append(LeaderAbility())
        if race == CLOUD:
            out.extend(LeaderAbility(lyn_to=g) for g in lyn_targets(s))
    if s.unit_loc[D.LEADER_OF[race]] == D.SUPPLY:
        removes = placement_removes(s, race, D.START_OF[race])
        if removes is not None:
            out.extend(LeaderReturn(remove=r) for r in removes)
    out.append(LeaderPass())
    return out


def opts_discard(s: State, seat: Seat) -> list[Any]:
    return [DiscardSpell(spell=sp) for sp in s.spells[seat]]


# ----------------------------------------------------------- plunder, heal
def plunder_options(s: State, seat: Seat) -> list[Plunder]:
    if s.budget <= 0:
        return []
    race = race_of(s, seat)
    occ = regions_occupied(s, race)
    slay = {s.unit_loc[u] for u in D.GIANTSLAYERS}
    return [
        Plunder(region=g)
        for g in D.SMALL_FOLK
        if g in occ and g not in slay and g not in s.used_regions
    ]


def opts_plunder(s: State, seat: Seat) -> list[Any]:
    return [*plunder_options(s, seat), EndPlunder()]


def heal_options(s: State, seat: Seat) -> list[HealUnit]:
    race = race_of(s, seat)
    wounded = [u for u in on_board(s, race) if s.unit_wounded[u]]
    if s.budget > 0:
        return [HealUnit(unit=u) for u in wounded]
    if any(D.RESOURCE_KIND[c] == "food" for c in s.resources[seat]):
        return [HealUnit(unit=u, food=True) for u in wounded]
    return []


def opts_heal(s: State, seat: Seat) -> list[Any]:
    return [*heal_options(s, seat), EndHeal()]


# -------------------------------------------------------------------- rest
def slayer_escapes(s: State, g: int, budget: int) -> bool:
    """A giantslayer in ``g`` can reach a non-forbidden region in ``budget`` steps."""
    seen = {g}
    frontier = [g]
    for _ in range(budget):
        nxt = []
        for r in frontier:
            for n in D.ADJ[r]:
                if n in seen:
                    continue
                if D.START_RACE[n] < 0 or s.final_ordning:
                    return True
                seen.add(n)
                nxt.append(n)
        frontier = nxt
    return False


def opts_rest(s: State, seat: Seat) -> list[Any]:
    race = race_of(s, seat)
    out: list[Any] = []
    if s.transit >= 0:
        units = [s.transit]
    else:
        units = [u for u in D.GIANTSLAYERS if s.unit_loc[u] >= 0]
        if (
            s.gs_stage == 0
            and s.budget >= 2
            and any(s.unit_loc[u] == D.SUPPLY for u in D.GIANTSLAYERS)
        ):
            out.extend(GsRecruit(region=g) for g in D.SMALL_FOLK)
    if s.gs_stage <= 1 and s.budget >= 1:
        for u in units:
            for g in D.ADJ[s.unit_loc[u]]:
                if D.START_RACE[g] < 0 or s.final_ordning or slayer_escapes(s, g, s.budget - 1):
                    out.append(GsMove(slayer=u, to=g))
    if s.transit < 0:
        if s.budget >= 1:
            rr, _ = board(s)
            by_region: dict[int, list[int]] = {}
            for u in D.GIANTSLAYERS:
                g = s.unit_loc[u]
                if g >= 0 and u not in s.used_units and rr[g] not in (-1, race):
                    by_region.setdefault(g, []).append(u)
            for g in sorted(by_region):
                sl = by_region[g]
                for idx in subsets(len(sl), s.budget):
                    out.append(GsAttack(region=g, slayers=tuple(sl[i] for i in idx)))
        out.append(EndRest())
    return out


PHASE_OPTIONS: dict[str, Callable[[State, Seat], list[Any]]] = {
    "turn": opts_turn,
    "command": command_options,
    "move": opts_move,
    "toll": opts_toll,
    "attack": opts_attack,
    "battle": opts_battle,
    "recruit": opts_recruit,
    "trade": opts_trade,
    "leader": opts_leader,
    "discard": opts_discard,
    "plunder": opts_plunder,
    "heal": opts_heal,
    "rest": opts_rest,
}


# The turn structure as data: phase -> the move types allowed in it -> what
# follows when the command (or step) is over. ``decide`` checks a move against
# this table first (code ``wrong_phase``), then against ``legal_moves``.
PHASES = Phases(
    Phase("turn", frozenset({"claim_event", "play_command"}), "command"),
    Phase("command", frozenset({"play_command"}), None),
    Phase("move", frozenset({"maneuver", "move_lyn", "end_move"}), "turn"),
    Phase("toll", frozenset({"pay_toll"}), "move"),
    Phase("attack", frozenset({"declare_battle", "end_attack"}), "turn"),
    Phase(
        "battle",
        frozenset(
            {
                "add_attacker",
                "start_battle",
                "reroll",
                "convert_arcane",
                "cast_spell",
                "play_armament",
                "finalize_roll",
                "assign_casualty",
                "cast_mend",
                "pass_mend",
                "advance",
                "end_advance",
            }
        ),
        "attack",
    ),
    Phase("recruit", frozenset({"recruit", "end_recruit"}), "turn"),
    Phase(
        "trade",
        frozenset(
            {
                "start_trade",
                "give_card",
                "request_card",
                "confirm_trade",
                "return_card",
                "respond_offer",
                "end_trade",
            }
        ),
        "turn",
    ),
    Phase("leader", frozenset({"leader_ability", "leader_return", "leader_pass"}), "turn"),
    Phase("discard", frozenset({"discard_spell"}), "turn"),
    Phase("plunder", frozenset({"plunder", "end_plunder"}), "turn"),
    Phase("heal", frozenset({"heal_unit", "end_heal"}), "turn"),
    Phase("rest", frozenset({"gs_recruit", "gs_move", "gs_attack", "end_rest"}), "turn"),
)


# ================================================================== decide
def decide(s: State, seat: Seat, move: Any, rng: Rng) -> tuple[Any, ...]:
    PHASES.check(s.phase, move)
    if move not in legal_moves_like(s, seat, move):
        raise IllegalMove("not_legal", f"{move!r} is not legal now")
    ctx = Ctx(s, rng)
    HANDLERS[type(move)](ctx, seat, move)
    return tuple(ctx.events)


# ---------------------------------------------------------- shared effects
def draw_resources(ctx: Ctx, seat: Seat, n: int) -> None:
    while n > 0:
        s = ctx.s
        if not s.res_deck:
            if not s.res_discard:
                return
            order = ctx.rng.shuffle(s.res_discard)
            ctx.emit(DeckShuffled(deck="resource", cards=order, size=len(order), from_discard=True))
            s = ctx.s
        k = min(n, len(s.res_deck))
        ctx.emit(ResourcesDrawn(seat=seat, cards=s.res_deck[:k]))
        n -= k


def draw_spells(ctx: Ctx, seat: Seat, n: int) -> None:
    while n > 0:
        s = ctx.s
        if not s.spell_deck:
            if not s.spell_discard:
                return
            order = ctx.rng.shuffle(s.spell_discard)
            ctx.emit(DeckShuffled(deck="spell", cards=order, size=len(order), from_discard=True))
            s = ctx.s
        k = min(n, len(s.spell_deck))
        ctx.emit(SpellsDrawn(seat=seat, cards=s.spell_deck[:k], count=k))
        n -= k


def award(ctx: Ctx, seat: Seat, amount: int, reason: str) -> None:
    if amount <= 0:
        return
    s = ctx.s
    fa = min(amount, s.pool_a)
    fb = min(amount - fa, s.pool_b)
    ctx.emit(OpAwarded(seat=seat, amount=amount, from_a=fa, from_b=fb, reason=reason))
    s = ctx.s
    if s.pool_a == 0 and not s.final_ordning:
        ctx.emit(StageBegan(stage="final_ordning"))
    if s.pool_b == 0 and not s.endgame:
        ctx.emit(StageBegan(stage="endgame", final_round=s.round + 1))


def place_free(ctx: Ctx, unit: int, region: int, remove: int, wounded: bool, reason: str) -> None:
    if remove >= 0:
        ctx.emit(UnitRemoved(unit=remove, to=D.SUPPLY, reason="making_room"))
    ctx.emit(UnitPlaced(unit=unit, region=region, wounded=wounded, reason=reason))


def end_command(ctx: Ctx) -> None:
    s = ctx.s
    seat = s.active
    ctx.emit(TurnEnded(seat=seat))
    n = s.players
    rnd = s.round
    if seat == (s.start_seat - 1) % n:
        if s.endgame and rnd >= s.final_round:
            finish_game(ctx, "endgame_completed")
            return
        if not s.endgame and rnd >= D.ROUND_LIMIT:
            ctx.emit(StageBegan(stage="endgame", final_round=rnd + 1))
        rnd += 1
    ctx.emit(TurnBegan(seat=next_seat(seat, n), round=rnd))


def board_ov(s: State, seat: Seat) -> int:
    return sum(D.UNITS[u].ov for u in on_board(s, race_of(s, seat)))


def finish_game(ctx: Ctx, reason: str) -> None:
    s = ctx.s
    keys = tuple(
        (s.op[p], board_ov(s, p), -D.ORDNING[D.RACES[s.seat_race[p]]]) for p in range(s.players)
    )
    ranks = ranks_from_keys(keys)
    ctx.emit(GameEnded(ranks=ranks, scores=tuple(float(x) for x in s.op), reason=reason))


# ----------------------------------------------------------- turn / events
def do_claim(ctx: Ctx, seat: Seat, m: ClaimEvent) -> None:
    s = ctx.s
    mine = s.resources[seat]
    if m.payment == "free":
        paid: tuple[str, ...] = ()
    elif m.payment == "food":
        paid = tuple(c for c in mine if D.RESOURCE_KIND[c] == "food")[:4]
    else:
        paid = (first_of(mine, m.payment),)
    ctx.emit(EventClaimed(seat=seat, event=m.event, paid=paid))
    award(ctx, seat, D.EVENT_OP[m.event], f"event {m.event}")
    if m.event == "R2":
        place_free(ctx, D.VONINDOD, ICE_SPIRES, m.remove, False, "event")
    elif m.event == "T2":
        place_free(ctx, D.HEKATON, TRACKLESS, m.remove, False, "event")
    if m.event.startswith("U") and ctx.s.uni_deck:
        ctx.emit(DraftRevealed(card=ctx.s.uni_deck[0]))


def command_strength(s: State, seat: Seat, cmd: str) -> int:
    race = race_of(s, seat)
    rname = D.RACES[race]
    left = len(s.rows[seat])
    if cmd == "move":
        return D.PRINTED[rname]["move"] + left + (1 if has_claimed(s, seat, "F2") else 0)
    if cmd == "attack":
        return D.PRINTED[rname]["attack"]
    if cmd == "recruit":
        zalto = 1 if race == FIRE and leader_active(s, FIRE) else 0
        return D.PRINTED[rname]["recruit"] + left + zalto
    if cmd == "magic":
        return D.PRINTED[rname]["magic"] + left + (1 if has_claimed(s, seat, "C1") else 0)
    if cmd in ("trade", "plunder", "heal"):
        return D.PRINTED[rname][cmd] + left
    if cmd == "rest":
        return left
    return 0  # leader


def do_play(ctx: Ctx, seat: Seat, m: PlayCommand) -> None:
    cmd = m.command
    n = command_strength(ctx.s, seat, cmd)
    phase = {"magic": "discard"}.get(cmd, cmd)
    ctx.emit(CommandPlayed(seat=seat, command=cmd, strength=n, phase=phase))
    if cmd == "magic":
        draw_spells(ctx, seat, n)
        if len(ctx.s.spells[seat]) <= D.HAND_LIMIT:
            end_command(ctx)
    elif cmd == "rest":
        maybe_finish_rest(ctx)
    elif cmd in ("recruit", "plunder", "heal", "attack"):
        auto_end(ctx, seat)


def auto_end(ctx: Ctx, seat: Seat) -> None:
    """Close a command whose only remaining choice is to end it."""
    s = ctx.s
    ph = s.phase
    if ph == "recruit" and not recruit_options(s, seat):
        end_command(ctx)
    elif ph == "plunder" and not plunder_options(s, seat):
        finish_plunder(ctx, seat)
    elif (ph == "heal" and not heal_options(s, seat)) or (
        ph == "attack" and (s.budget <= 0 or not attack_targets(s, seat))
    ):
        end_command(ctx)


# -------------------------------------------------------------------- move
def do_maneuver(ctx: Ctx, seat: Seat, m: Maneuver) -> None:
    s = ctx.s
    race = race_of(s, seat)
    rr, cnt = board(s)
    a = s.unit_loc[m.unit]
    b = m.to
    enemy = rr[b] not in (-1, race)
    if m.unit == D.HEKATON and rr[b] == race and cnt[b] >= LIMIT[race]:
        ctx.emit(UnitRemoved(unit=D.STORM_CHAMPION, to=D.SUPPLY, reason="making_room"))
    mc = MoveCtx(s, race, rr, cnt, m.unit)
    transit = not mc.end_ok(b)
    ctx.emit(UnitMoved(unit=m.unit, from_region=a, to_region=b, cost=1, transit=transit))
    if enemy and b not in s.used_regions:
        owner = s.race_seat[rr[b]]
        ctx.emit(TollDue(unit=m.unit, region=b, owner=owner))
        return
    after_maneuver(ctx)


def after_maneuver(ctx: Ctx) -> None:
    if ctx.s.budget <= 0 and ctx.s.transit < 0:
        end_command(ctx)


def do_move_lyn(ctx: Ctx, seat: Seat, m: MoveLyn) -> None:
    ctx.emit(LynMoved(from_region=ctx.s.lyn, to_region=m.to, cost=1))
    after_maneuver(ctx)


def do_pay_toll(ctx: Ctx, seat: Seat, m: PayToll) -> None:
    s = ctx.s
    rr, _ = board(s)
    owner_race = rr[s.toll_region]
    to = s.race_seat[owner_race]
    u = s.toll_unit
    if m.card == "wound":
        transit = s.transit
        if s.unit_wounded[u]:
            ctx.emit(UnitRemoved(unit=u, to=D.SUPPLY, reason="toll"))
            transit = -1
        else:
            ctx.emit(UnitWounded(unit=u))
        ctx.emit(TollPaid(seat=seat, region=s.toll_region, card="", to_seat=to, transit=transit))
    else:
        card = first_of(s.resources[seat], m.card)
        ctx.emit(TollPaid(seat=seat, region=s.toll_region, card=card, to_seat=to,
                          transit=s.transit))  # fmt: skip
    after_maneuver(ctx)


def do_end_move(ctx: Ctx, seat: Seat, m: EndMove) -> None:
    end_command(ctx)


# ------------------------------------------------------------------ attack
def do_declare(ctx: Ctx, seat: Seat, m: DeclareBattle) -> None:
    s = ctx.s
    rr, _ = board(s)
    dr = rr[m.target]
    dseat = s.race_seat[dr]
    ctx.emit(BattleDeclared(
        seat=seat, target=m.target, kind="giants", defender_race=dr, defender=dseat,
        controller=next_seat(seat, s.players) if dseat < 0 else -1,
        defenders=giants_at(s, m.target),
    ))  # fmt: skip


def do_add_attacker(ctx: Ctx, seat: Seat, m: AddAttacker) -> None:
    ctx.emit(AttackerJoined(unit=m.unit))


def roll(ctx: Ctx, race: int, count: int, cap: int) -> tuple[tuple[str, ...], tuple[int, ...]]:
    count = min(count, cap)
    if count <= 0:
        return (), ()
    dice = ("basic",) * count if race < 0 else (D.RACES[race],) + ("basic",) * (count - 1)
    faces = tuple(ctx.rng.between(1, 6) for _ in dice)
    return dice, faces


def do_start_battle(ctx: Ctx, seat: Seat, m: StartBattle) -> None:
    roll_attacker(ctx)


def roll_attacker(ctx: Ctx) -> None:
    s = ctx.s
    b = s.battle
    assert b is not None
    count = sum(unit_dice(s, u) for u in b.attackers)
    if b.kind == "giants":
        race = race_of(s, b.attacker)
        if race == STORM and leader_active(s, STORM):
            count += 1
        dice, faces = roll(ctx, race, count, D.POOL_CAP)
    else:
        dice, faces = roll(ctx, -1, count, D.SLAYER_POOL_CAP)
    ctx.emit(DiceRolled(side="attacker", dice=dice, faces=faces, step="attacker_roll"))


def battle_side(b: Battle, seat: Seat) -> str:
    return "attacker" if b.step == "attacker_roll" else "defender"


def do_reroll(ctx: Ctx, seat: Seat, m: Reroll) -> None:
    b = ctx.s.battle
    assert b is not None
    side = battle_side(b, seat)
    source = "leader" if side == "attacker" else "npc_reroll"
    faces = tuple(ctx.rng.between(1, 6) for _ in m.dice)
    ctx.emit(DiceRerolled(side=side, positions=m.dice, faces=faces, source=source))


def do_convert(ctx: Ctx, seat: Seat, m: ConvertArcane) -> None:
    b = ctx.s.battle
    assert b is not None
    side = battle_side(b, seat)
    if side == "defender":
        source = "npc_convert"
    else:
        source = "magic" if m.into == "block" else "attack"
    ctx.emit(ArcaneConverted(side=side, positions=m.dice, into=m.into, source=source))


def do_cast_spell(ctx: Ctx, seat: Seat, m: CastSpell) -> None:
    b = ctx.s.battle
    assert b is not None
    side = battle_side(b, seat)
    kind = D.SPELL_KIND[m.spell]
    ctx.emit(SpellCast(seat=seat, card=m.spell))
    if kind == "lightning_bolt":
        ctx.emit(BonusAdded(side=side, hits=2, blocks=0, source=kind))
    elif kind == "stoneskin":
        ctx.emit(BonusAdded(side=side, hits=0, blocks=2, source=kind))
    elif kind == "arcane_surge":
        ctx.emit(ArcaneConverted(side=side, positions=m.dice, into="hit", source=kind))
    elif kind == "fortune":
        faces = tuple(ctx.rng.between(1, 6) for _ in m.dice)
        ctx.emit(DiceRerolled(side=side, positions=m.dice, faces=faces, source=kind))


def do_armament(ctx: Ctx, seat: Seat, m: PlayArmament) -> None:
    b = ctx.s.battle
    assert b is not None
    side = battle_side(b, seat)
    card = first_of(ctx.s.resources[seat], "armament")
    ctx.emit(ResourcesDiscarded(seat=seat, cards=(card,)))
    hit = m.effect == "hit"
    ctx.emit(BonusAdded(side=side, hits=int(hit), blocks=int(not hit), source="armament"))


def totals(sd: Side) -> tuple[int, int]:
    h = sd.bonus_hits
    bl = sd.bonus_blocks
    for i, (die, f) in enumerate(zip(sd.dice, sd.faces, strict=True)):
        fh, fb, _ = D.DIE_FACES[die][f - 1]
        h += fh + 2 * sd.to_hits[i] + sd.to_hit[i]
        bl += fb + sd.to_block[i]
    return h, bl


def do_finalize(ctx: Ctx, seat: Seat, m: FinalizeRoll) -> None:
    s = ctx.s
    b = s.battle
    assert b is not None
    if b.step == "attacker_roll":
        h, bl = totals(b.att)
        ctx.emit(RollFinalized(side="attacker", hits=h, blocks=bl))
        roll_defender(ctx)
        return
    if b.defender >= 0 and b.defender_race == STONE and has_claimed(s, b.defender, "S1"):
        ctx.emit(BonusAdded(side="defender", hits=0, blocks=1, source="S1"))
    h, bl = totals(ctx.s.battle.dfn)  # type: ignore[union-attr]
    ctx.emit(RollFinalized(side="defender", hits=h, blocks=bl))
    begin_casualties(ctx, "defender")


def roll_defender(ctx: Ctx) -> None:
    s = ctx.s
    b = s.battle
    assert b is not None
    count = sum(unit_dice(s, u) for u in b.defenders if s.unit_loc[u] == b.target)
    if b.defender >= 0 and b.defender_race == FROST and leader_active(s, FROST):
        count += 1
    dice, faces = roll(ctx, b.defender_race, count, D.POOL_CAP)
    ctx.emit(DiceRolled(side="defender", dice=dice, faces=faces, step="defender_roll"))


def begin_casualties(ctx: Ctx, side: str) -> None:
    b = ctx.s.battle
    assert b is not None
    if side == "defender":
        dmg = max(0, b.att.hits - b.dfn.blocks)
    else:
        dmg = max(0, b.dfn.hits - b.att.blocks)
    if dmg > 0 and casualty_candidates(ctx.s, b, side):
        ctx.emit(BattleStep(step=f"{side}_casualties", damage=dmg))
    elif side == "defender":
        begin_casualties(ctx, "attacker")
    else:
        begin_mend(ctx, "attacker")


def do_casualty(ctx: Ctx, seat: Seat, m: AssignCasualty) -> None:
    s = ctx.s
    b = s.battle
    assert b is not None
    side = "defender" if b.step == "defender_casualties" else "attacker"
    u = m.unit
    f = unit_fort(s, u)
    dmg = b.damage
    wounded = s.unit_wounded[u]
    if f > dmg and not wounded:
        defeated, absorbed = False, dmg
    else:
        defeated, absorbed = True, min(f, dmg)
    race = D.UNIT_RACE[u]
    to = D.BOX if race >= 0 and s.npc[race] else D.SUPPLY
    ctx.emit(CasualtyTaken(unit=u, absorbed=absorbed, defeated=defeated, to=to))
    b = ctx.s.battle
    assert b is not None
    if b.damage <= 0 or not casualty_candidates(ctx.s, b, side):
        if side == "defender":
            begin_casualties(ctx, "attacker")
        else:
            begin_mend(ctx, "attacker")


def pay_rewards(ctx: Ctx) -> None:
    """Battle step 8: OP (or, for a defeated giantslayer, a Resource Card) for
    every unit defeated in the battle, in the order they fell."""
    b = ctx.s.battle
    assert b is not None
    for u in b.defeated:
        reward_defeat(ctx, b, u, "defender" if u in b.defenders else "attacker")


def reward_defeat(ctx: Ctx, b: Battle, u: int, side: str) -> None:
    ov = D.UNITS[u].ov
    if side == "defender":
        if b.kind == "giants":
            award(ctx, b.attacker, ov, f"defeated {D.UNIT_IDS[u]}")
        else:
            award(ctx, b.attacker, (ov + 1) // 2, f"giantslayers defeated {D.UNIT_IDS[u]}")
    elif b.defender >= 0:
        if D.UNIT_RACE[u] < 0:
            draw_resources(ctx, b.defender, 1)
        else:
            award(ctx, b.defender, ov, f"defeated {D.UNIT_IDS[u]}")


def begin_mend(ctx: Ctx, side: str) -> None:
    b = ctx.s.battle
    assert b is not None
    if side == "attacker":
        if mend_candidates(ctx.s, b, "attacker"):
            ctx.emit(BattleStep(step="attacker_mend"))
            return
        side = "defender"
    if b.defender >= 0 and mend_candidates(ctx.s, b, "defender"):
        ctx.emit(BattleStep(step="defender_mend"))
        return
    begin_advance(ctx)


def do_cast_mend(ctx: Ctx, seat: Seat, m: CastMend) -> None:
    ctx.emit(SpellCast(seat=seat, card=m.spell))
    ctx.emit(UnitHealed(unit=m.unit))


def do_pass_mend(ctx: Ctx, seat: Seat, m: PassMend) -> None:
    b = ctx.s.battle
    assert b is not None
    if b.step == "attacker_mend":
        begin_mend(ctx, "defender")
    else:
        begin_advance(ctx)


def begin_advance(ctx: Ctx) -> None:
    """Steps 8 (rewards) and 9 (advance)."""
    pay_rewards(ctx)
    s = ctx.s
    b = s.battle
    assert b is not None
    if b.kind == "giants" and not giants_at(s, b.target) and advance_candidates(s, b):
        ctx.emit(BattleStep(step="advance"))
        return
    end_battle(ctx)


def do_advance(ctx: Ctx, seat: Seat, m: Advance) -> None:
    s = ctx.s
    b = s.battle
    assert b is not None
    race = race_of(s, seat)
    _, cnt = board(s)
    if m.unit == D.HEKATON and cnt[b.target] >= LIMIT[race]:
        ctx.emit(UnitRemoved(unit=D.STORM_CHAMPION, to=D.SUPPLY, reason="making_room"))
    ctx.emit(UnitMoved(unit=m.unit, from_region=s.unit_loc[m.unit], to_region=b.target, cost=0))
    if not advance_candidates(ctx.s, b):
        end_battle(ctx)


def do_end_advance(ctx: Ctx, seat: Seat, m: EndAdvance) -> None:
    end_battle(ctx)


def end_battle(ctx: Ctx) -> None:
    s = ctx.s
    b = s.battle
    assert b is not None
    ctx.emit(BattleEnded(target=b.target, cost=1 if s.command == "attack" else 0))
    if ctx.s.command == "attack":
        auto_end(ctx, s.active)
    else:
        maybe_finish_rest(ctx)


def do_end_attack(ctx: Ctx, seat: Seat, m: EndAttack) -> None:
    end_command(ctx)


# ----------------------------------------------------------------- recruit
def do_recruit(ctx: Ctx, seat: Seat, m: Recruit) -> None:
    s = ctx.s
    race = race_of(s, seat)
    u = supply_unit(s, race, m.kind)
    assert u is not None
    if m.remove >= 0:
        ctx.emit(UnitRemoved(unit=m.remove, to=D.SUPPLY, reason="making_room"))
    ctx.emit(UnitPlaced(unit=u, region=recruit_region(s, race), cost=D.UNITS[u].ov,
                        reason="recruit"))  # fmt: skip
    auto_end(ctx, seat)


def do_end_simple(ctx: Ctx, seat: Seat, m: Any) -> None:
    end_command(ctx)


# ------------------------------------------------------------------- trade
def do_start_trade(ctx: Ctx, seat: Seat, m: StartTrade) -> None:
    t = ctx.s.trade
    ctx.emit(TradeChanged(trade=Trade(mode=m.mode, partner=m.partner, offer_used=t.offer_used)))


def do_give(ctx: Ctx, seat: Seat, m: GiveCard) -> None:
    t = ctx.s.trade
    card = first_of(ctx.s.resources[seat], m.card, t.give)
    ctx.emit(TradeChanged(trade=Trade(
        mode=t.mode, partner=t.partner, give=(*t.give, card), request=t.request,
        offer_used=t.offer_used,
    )))  # fmt: skip


def do_request(ctx: Ctx, seat: Seat, m: RequestCard) -> None:
    t = ctx.s.trade
    card = first_of(ctx.s.resources[t.partner], m.card, t.request)
    ctx.emit(TradeChanged(trade=Trade(
        mode=t.mode, partner=t.partner, give=t.give, request=(*t.request, card),
        offer_used=t.offer_used,
    )))  # fmt: skip


def do_confirm(ctx: Ctx, seat: Seat, m: ConfirmTrade) -> None:
    s = ctx.s
    t = s.trade
    if t.mode == "deck":
        ctx.emit(ResourcesDiscarded(seat=seat, cards=t.give))
        k = len(t.give)
        if m.take:
            ctx.emit(PileCardTaken(seat=seat, card=first_of(ctx.s.res_discard, m.take)))
            k -= 1
        draw_resources(ctx, seat, k)
        ctx.emit(TradeCompleted(seat=seat, kind="deck"))
        end_command(ctx)
    elif t.mode == "forced":
        pool = s.resources[t.partner]
        ctx.emit(CardsGiven(from_seat=seat, to_seat=t.partner, cards=t.give))
        ctx.emit(TradeChanged(trade=Trade(
            mode="forced_return", partner=t.partner, give=t.give, pool=pool,
            offer_used=t.offer_used,
        )))  # fmt: skip
    else:
        ctx.emit(TradeOffered(seat=seat, partner=t.partner, give=t.give, request=t.request))


def do_return(ctx: Ctx, seat: Seat, m: ReturnCard) -> None:
    t = ctx.s.trade
    card = first_of(t.pool, m.card)
    ctx.emit(CardsGiven(from_seat=seat, to_seat=ctx.s.active, cards=(card,)))
    pool = tuple(c for c in t.pool if c != card)
    ctx.emit(TradeChanged(trade=Trade(
        mode=t.mode, partner=t.partner, give=t.give, pool=pool, returned=t.returned + 1,
        offer_used=t.offer_used,
    )))  # fmt: skip
    if t.returned + 1 >= len(t.give):
        ctx.emit(TradeCompleted(seat=ctx.s.active, kind="forced"))
        end_command(ctx)


def do_respond(ctx: Ctx, seat: Seat, m: RespondOffer) -> None:
    s = ctx.s
    t = s.trade
    ctx.emit(OfferAnswered(seat=seat, accepted=m.accept))
    if not m.accept:
        return
    if t.give:
        ctx.emit(CardsGiven(from_seat=s.active, to_seat=seat, cards=t.give))
    if t.request:
        ctx.emit(CardsGiven(from_seat=seat, to_seat=s.active, cards=t.request))
    ctx.emit(TradeCompleted(seat=s.active, kind="offer"))
    end_command(ctx)


# ------------------------------------------------------------------ leader
def do_leader_ability(ctx: Ctx, seat: Seat, m: LeaderAbility) -> None:
    race = race_of(ctx.s, seat)
    if race == HILL:
        draw_resources(ctx, seat, 2)
    elif race == STONE:
        for u in on_board(ctx.s, race):
            if ctx.s.unit_wounded[u]:
                ctx.emit(UnitHealed(unit=u))
    elif race == CLOUD:
        draw_spells(ctx, seat, 2)
        if m.lyn_to >= 0:
            ctx.emit(LynMoved(from_region=ctx.s.lyn, to_region=m.lyn_to))
        if len(ctx.s.spells[seat]) > D.HAND_LIMIT:
            ctx.emit(PhaseEntered(phase="discard"))
            return
    end_command(ctx)


def do_leader_return(ctx: Ctx, seat: Seat, m: LeaderReturn) -> None:
    race = race_of(ctx.s, seat)
    place_free(ctx, D.LEADER_OF[race], D.START_OF[race], m.remove, True, "return")
    end_command(ctx)


def do_discard_spell(ctx: Ctx, seat: Seat, m: DiscardSpell) -> None:
    ctx.emit(SpellsDiscarded(seat=seat, cards=(m.spell,)))
    if len(ctx.s.spells[seat]) <= D.HAND_LIMIT:
        end_command(ctx)


# ----------------------------------------------------------- plunder, heal
def do_plunder(ctx: Ctx, seat: Seat, m: Plunder) -> None:
    ctx.emit(RegionPlundered(seat=seat, region=m.region))
    draw_resources(ctx, seat, 1)
    auto_end(ctx, seat)


def finish_plunder(ctx: Ctx, seat: Seat) -> None:
    if ctx.s.used_regions and has_claimed(ctx.s, seat, "H1"):
        draw_resources(ctx, seat, 1)
    end_command(ctx)


def do_end_plunder(ctx: Ctx, seat: Seat, m: EndPlunder) -> None:
    finish_plunder(ctx, seat)


def do_heal(ctx: Ctx, seat: Seat, m: HealUnit) -> None:
    if m.food:
        card = first_of(ctx.s.resources[seat], "food")
        ctx.emit(ResourcesDiscarded(seat=seat, cards=(card,)))
    ctx.emit(UnitHealed(unit=m.unit, cost=0 if m.food else 1))
    auto_end(ctx, seat)


# -------------------------------------------------------------------- rest
def do_gs_recruit(ctx: Ctx, seat: Seat, m: GsRecruit) -> None:
    u = next(u for u in D.GIANTSLAYERS if ctx.s.unit_loc[u] == D.SUPPLY)
    ctx.emit(UnitPlaced(unit=u, region=m.region, cost=2, reason="giantslayer"))
    maybe_finish_rest(ctx)


def do_gs_move(ctx: Ctx, seat: Seat, m: GsMove) -> None:
    s = ctx.s
    if s.gs_stage == 0:
        ctx.emit(RestStage(stage=1))
    transit = D.START_RACE[m.to] >= 0 and not s.final_ordning
    ctx.emit(UnitMoved(unit=m.slayer, from_region=s.unit_loc[m.slayer], to_region=m.to, cost=1,
                       transit=transit))  # fmt: skip
    maybe_finish_rest(ctx)


def do_gs_attack(ctx: Ctx, seat: Seat, m: GsAttack) -> None:
    s = ctx.s
    if s.gs_stage < 2:
        ctx.emit(RestStage(stage=2))
    rr, _ = board(s)
    dr = rr[m.region]
    dseat = s.race_seat[dr]
    ctx.emit(BattleDeclared(
        seat=seat, target=m.region, kind="slayers", defender_race=dr, defender=dseat,
        controller=next_seat(seat, s.players) if dseat < 0 else -1,
        defenders=giants_at(s, m.region),
    ))  # fmt: skip
    for u in m.slayers:
        ctx.emit(AttackerJoined(unit=u, cost=1))
    roll_attacker(ctx)


def maybe_finish_rest(ctx: Ctx) -> None:
    s = ctx.s
    if s.phase == "rest" and s.budget <= 0 and s.transit < 0:
        finish_rest(ctx)


def finish_rest(ctx: Ctx) -> None:
    seat = ctx.s.active
    ctx.emit(RowReturned(seat=seat, cards=ctx.s.rows[seat]))
    end_command(ctx)


def do_end_rest(ctx: Ctx, seat: Seat, m: EndRest) -> None:
    finish_rest(ctx)


HANDLERS: dict[type, Callable[[Ctx, Seat, Any], None]] = {
    ClaimEvent: do_claim,
    PlayCommand: do_play,
    Maneuver: do_maneuver,
    MoveLyn: do_move_lyn,
    PayToll: do_pay_toll,
    EndMove: do_end_move,
    DeclareBattle: do_declare,
    AddAttacker: do_add_attacker,
    StartBattle: do_start_battle,
    Reroll: do_reroll,
    ConvertArcane: do_convert,
    CastSpell: do_cast_spell,
    PlayArmament: do_armament,
    FinalizeRoll: do_finalize,
    AssignCasualty: do_casualty,
    CastMend: do_cast_mend,
    PassMend: do_pass_mend,
    Advance: do_advance,
    EndAdvance: do_end_advance,
    EndAttack: do_end_attack,
    Recruit: do_recruit,
    EndRecruit: do_end_simple,
    StartTrade: do_start_trade,
    GiveCard: do_give,
    RequestCard: do_request,
    ConfirmTrade: do_confirm,
    ReturnCard: do_return,
    RespondOffer: do_respond,
    EndTrade: do_end_simple,
    LeaderAbility: do_leader_ability,
    LeaderReturn: do_leader_return,
    LeaderPass: do_end_simple,
    DiscardSpell: do_discard_spell,
    Plunder: do_plunder,
    EndPlunder: do_end_plunder,
    HealUnit: do_heal,
    EndHeal: do_end_simple,
    GsRecruit: do_gs_recruit,
    GsMove: do_gs_move,
    GsAttack: do_gs_attack,
    EndRest: do_end_rest,
}
