"""Rules of the spec that no numbered scenario covers (named after the section)."""

from __future__ import annotations

import pytest
from msgspec.structs import replace

from engine_core.games.assault_of_the_giants import data as D
from engine_core.games.assault_of_the_giants import moves as M
from engine_core.games.assault_of_the_giants import rules as R
from engine_core.games.assault_of_the_giants.events import BonusAdded, DiceRolled, SpellsDrawn
from engine_core.games.assault_of_the_giants.state import Battle, Side
from tests.games.assault_of_the_giants.helpers import (
    G,
    U,
    act,
    base,
    empty_board,
    legal,
    place,
    resources,
    row,
    seat,
    spells,
    turn,
)


# ------------------------------------------------------------------ §3 setup
@pytest.mark.parametrize("n", [3, 4, 5, 6])
def test_3_setup_for_every_player_count(n: int) -> None:
    s = base(players=n, seed=n)
    npc = set(D.NPC_RACES[n])
    assert {D.RACES[r] for r in range(6) if s.npc[r]} == npc
    assert sorted(D.RACES[r] for r in s.seat_race) == sorted(set(D.RACES) - npc)
    # seat order is descending Ordning Number from the starting seat
    order = [D.ORDNING[D.RACES[s.seat_race[(s.start_seat + i) % n]]] for i in range(n)]
    assert order == sorted(order, reverse=True) and s.active == s.start_seat
    for race in D.RACES:
        home = D.REGION_INDEX[D.START_REGION[race]]
        assert {u for u in range(D.N_UNITS) if s.unit_loc[u] == home} == set(D.initial_group(race))
        outpost = D.REGION_INDEX[D.OUTPOST[race]]
        there = [u for u in range(D.N_UNITS) if s.unit_loc[u] == outpost]
        assert there == ([D.npc_outpost_elite(race)] if race in npc else [])
    kinds = [D.UNITS[u].kind for u in D.initial_group("storm")]
    assert kinds == ["leader", "champion", "elite"]
    assert s.unit_loc[D.HEKATON] == D.OUT and s.unit_loc[D.VONINDOD] == D.OUT
    assert all(s.unit_loc[u] == D.SUPPLY for u in D.GIANTSLAYERS)
    assert not any(s.unit_wounded)
    assert s.lyn == G["Evermoors"]
    assert all(len(a) == 3 for a in s.resources) and all(len(h) == 1 for h in s.spells)
    assert len(s.draft) == 4 and len(s.uni_deck) == 8
    assert s.pool_a == s.pool_b == 12 * n
    assert s.rows == ((),) * n and not s.final_ordning and not s.endgame


# ---------------------------------------------------------- §2.10 events
def occupy(s, race: str, regions: list[str]):
    units = [u for u in D.RACE_UNITS[D.RACE_INDEX[race]] if D.UNITS[u].kind == "regular"]
    for u, g in zip(units, regions, strict=False):
        s = place(s, D.UNIT_IDS[u], g)
    return s


def test_2_10_requirements_and_free_conditions() -> None:
    s = empty_board(base())
    hill, stone, frost, fire = (seat(s, r) for r in ("hill", "stone", "frost", "fire"))
    cloud, storm = seat(s, "cloud"), seat(s, "storm")
    sf = ["Luskan", "Mirabar", "Yartar", "Triboar"]
    assert R.event_requirement(occupy(s, "hill", sf[:2]), hill, "H1") == (False, False)
    assert R.event_requirement(occupy(s, "hill", sf[:3]), hill, "H1") == (True, False)
    assert R.event_requirement(occupy(s, "hill", sf), hill, "H1") == (True, True)
    five = ["High Moor", "Lurkwood", "Triboar", "Yartar", "Luskan", "Mirabar"]
    assert R.event_requirement(occupy(s, "stone", five[:5]), stone, "S1") == (True, False)
    assert R.event_requirement(occupy(s, "stone", five), stone, "S1") == (True, True)
    coast = ["Luskan", "Neverwinter", "Waterdeep"]
    assert R.event_requirement(occupy(s, "frost", coast[:1]), frost, "F1") == (False, False)
    assert R.event_requirement(occupy(s, "frost", coast[:2]), frost, "F1") == (True, False)
    assert R.event_requirement(occupy(s, "frost", coast), frost, "F1") == (True, True)
    s8 = occupy(s, "frost", ["High Moor"] * 3 + ["Lurkwood"] * 3)  # 6 regulars
    s8 = place(place(s8, "frost_elite_1", "Lurkwood"), "frost_elite_2", "Lurkwood")
    assert R.event_requirement(s8, frost, "F2") == (True, False)  # 8 frost giants
    s10 = place(place(s8, "frost_elite_3", "Luskan"), "frost_leader", "Luskan")
    assert R.event_requirement(s10, frost, "F2") == (True, True)  # 10
    assert R.event_requirement(place(s8, "frost_elite_2", D.SUPPLY), frost, "F2")[0] is False
    r1 = occupy(s, "fire", ["Ice Spires", "Lurkwood", "Mirabar"])
    assert R.event_requirement(r1, fire, "R1") == (False, False)
    assert R.event_requirement(occupy(r1, "fire", ["Ice Spires", "Lurkwood", "Mirabar", "Luskan"]),
                               fire, "R1") == (True, False)  # fmt: skip
    z = place(s, "fire_leader", "Ice Spires")
    assert R.event_requirement(z, fire, "R2") == (True, False)
    assert R.event_requirement(occupy(z, "fire", ["Mirabar"]), fire, "R2") == (True, True)
    assert R.event_requirement(place(s, "fire_leader", "Ice Spires", True), fire, "R2")[0] is False
    c = place(place(s, "cloud_regular_1", "Triboar"), "cloud_regular_2", "Triboar")
    c = replace(c, lyn=G["Triboar"])
    c = spells(c, "cloud", ["fortune", "mend"])
    assert R.event_requirement(c, cloud, "C1") == (True, False)
    assert R.event_requirement(spells(c, "cloud", ["mend"]), cloud, "C1")[0] is False
    t1 = occupy(s, "storm", ["Luskan", "Trackless Sea", "Waterdeep"])
    assert R.event_requirement(t1, storm, "T1") == (True, False)
    t1b = occupy(s, "storm", ["Luskan", "Trackless Sea"])
    assert R.event_requirement(t1b, storm, "T1")[0] is False
    t2 = occupy(s, "storm", ["Luskan", "Trackless Sea", "Waterdeep", "High Moor"])
    assert R.event_requirement(t2, storm, "T2") == (True, False)
    assert R.event_requirement(place(t2, "storm_leader", "Luskan"), storm, "T2") == (True, True)
    assert R.event_requirement(t2, storm, "T3")[0] is False
    t3 = place(place(t2, "storm_elite_1", "Mirabar"), "storm_elite_2", "Lurkwood")
    t3 = place(t3, "storm_hekaton", "Luskan")
    assert R.event_requirement(t3, storm, "T3") == (True, False)
    w = occupy(s, "hill", ["Waterdeep", "Waterdeep"])
    assert R.event_requirement(w, hill, "U01")[0] is False
    assert R.event_requirement(occupy(s, "hill", ["Waterdeep"] * 3), hill, "U01")[0] is True
    assert R.event_requirement(w, hill, "U02")[0] is False
    six = occupy(s, "hill", ["High Moor", "Lurkwood", "Triboar", "Yartar", "Luskan", "Mirabar"])
    assert R.event_requirement(six, hill, "U09") == (True, False)
    eight8 = occupy(six, "hill", ["High Moor", "Lurkwood", "Triboar", "Yartar", "Luskan",
                                  "Mirabar", "Waterdeep", "Daggerford"])  # fmt: skip
    assert R.event_requirement(eight8, hill, "U09") == (True, True)
    assert R.event_requirement(eight8, hill, "U10")[0] is False  # 8 giants
    ten = place(place(eight8, "hill_elite_1", "Waterdeep"), "hill_elite_2", "Waterdeep")
    assert R.event_requirement(ten, hill, "U10")[0] is True
    assert (
        R.event_requirement(spells(s, "hill", ["fortune", "mend", "stoneskin"]), hill, "U11")[0]
        is False
    )
    assert (
        R.event_requirement(
            spells(s, "hill", ["fortune", "mend", "stoneskin", "lightning_bolt"]), hill, "U11"
        )[0]
        is True
    )
    assert R.event_requirement(s, hill, "U12") == (True, False)


def test_2_10_u12_takes_four_food_and_a_universal_card_is_replaced() -> None:
    s = turn(base(), "hill")
    p = seat(s, "hill")
    s = replace(s, draft=("U12", *s.draft[1:]))
    s = resources(s, "hill", ["food"] * 3 + ["rune_haug"])
    assert not [m for m in legal(s, p) if isinstance(m, M.ClaimEvent) and m.event == "U12"]
    s = resources(s, "hill", ["food"] * 5)
    deck = s.uni_deck
    s, _ = act(s, p, M.ClaimEvent(event="U12", payment="food"))
    assert [D.RESOURCE_KIND[c] for c in s.resources[p]] == ["food"]
    assert s.op[p] == 4 and "U12" not in s.draft and s.draft[-1] == deck[0]
    assert s.phase == "command"


def test_2_10_s1_stone_defends_with_one_more_block() -> None:
    s = turn(base(), "hill", phase="battle")
    p, st = seat(s, "hill"), seat(s, "stone")
    claimed = list(s.claimed)
    claimed[st] = ("S1",)
    s = replace(s, claimed=tuple(claimed))
    s = place(s, "stone_regular_5", "High Moor")
    b = Battle(
        target=G["High Moor"], kind="giants", attacker=p, defender_race=D.RACE_INDEX["stone"],
        defender=st, controller=-1, step="defender_roll", defenders=(U["stone_regular_5"],),
        dfn=Side(),
    )  # fmt: skip
    s = replace(s, battle=b, command="attack", budget=2)
    s, ev = act(s, st, M.FinalizeRoll())
    assert [(e.blocks, e.source) for e in ev if isinstance(e, BonusAdded)] == [(1, "S1")]
    assert s.battle is None or s.battle.dfn.blocks == 1


def test_2_10_f2_and_c1_raise_move_and_magic() -> None:
    s = base()
    f, c = seat(s, "frost"), seat(s, "cloud")
    claimed = list(s.claimed)
    claimed[f], claimed[c] = ("F1", "F2"), ("C1",)
    s = replace(s, claimed=tuple(claimed))
    assert R.command_strength(s, f, "move") == 5 + 1
    assert R.command_strength(s, c, "magic") == 2 + 1


def test_2_10_r2_places_vonindod_making_room_in_a_full_ice_spires() -> None:
    s = turn(base(), "fire")
    p = seat(s, "fire")
    s = replace(s, special_done=tuple(1 if r == D.RACE_INDEX["fire"] else 0 for r in range(6)))
    s = place(s, "fire_elite_1", "Ice Spires")  # leader, champion, 2 regulars + elite? limit 4
    s = place(s, "fire_elite_1", D.SUPPLY)
    s = resources(s, "fire", ["rune_ild"])
    claims = [m for m in legal(s, p) if isinstance(m, M.ClaimEvent) and m.event == "R2"]
    full = {m.remove for m in claims}
    assert full == set(D.initial_group("fire"))  # 4 of 4: one must make room
    s, _ = act(s, p, M.ClaimEvent(event="R2", payment="rune_ild", remove=U["fire_regular_1"]))
    assert s.unit_loc[D.VONINDOD] == G["Ice Spires"] and not s.unit_wounded[D.VONINDOD]
    assert s.unit_loc[U["fire_regular_1"]] == D.SUPPLY and s.op[p] == 6


# ----------------------------------------------------------- §2.8 leaders
def test_2_8_kayalithica_heals_every_wounded_stone_giant() -> None:
    s = turn(base(), "stone")
    p = seat(s, "stone")
    s = place(s, "stone_regular_1", "Greypeak Mountains", True)
    s = place(s, "stone_elite_1", "High Moor", True)
    s, _ = act(s, p, M.PlayCommand(command="leader"))
    s, _ = act(s, p, M.LeaderAbility())
    assert not any(s.unit_wounded[u] for u in D.RACE_UNITS[D.RACE_INDEX["stone"]])


def test_2_8_sansuri_draws_two_spells_then_may_move_lyn_armaal() -> None:
    s = turn(base(), "cloud")
    p = seat(s, "cloud")
    s = place(s, "cloud_regular_3", "Triboar")
    s = place(s, "hill_regular_1", "Yartar")
    s = spells(s, "cloud", [])
    s, _ = act(s, p, M.PlayCommand(command="leader"))
    targets = {m.lyn_to for m in legal(s, p) if isinstance(m, M.LeaderAbility)}
    assert targets == {-1, G["Triboar"]}  # only regions with cloud giants
    s, ev = act(s, p, M.LeaderAbility(lyn_to=G["Triboar"]))
    assert sum(e.count for e in ev if isinstance(e, SpellsDrawn)) == 2
    assert s.lyn == G["Triboar"] and len(s.spells[p]) == 2


def test_2_8_serissa_adds_a_die_to_storm_attacks() -> None:
    s = turn(base(), "storm")
    p = seat(s, "storm")
    s = row(s, "storm", ("leader",))
    s = place(s, "frost_regular_5", "Luskan")
    s, _ = act(s, p, M.PlayCommand(command="attack"))
    s, _ = act(s, p, M.DeclareBattle(target=G["Luskan"]))
    s, _ = act(s, p, M.AddAttacker(unit=U["storm_elite_1"]))
    s, ev = act(s, p, M.StartBattle())
    assert len(next(e for e in ev if isinstance(e, DiceRolled)).dice) == 2 + 1


# ------------------------------------------------------- §5.2 Lyn Armaal
def test_5_2_lyn_armaal_enters_only_empty_or_cloud_regions_never_forbidden() -> None:
    s = turn(base(), "cloud")
    p = seat(s, "cloud")
    s = place(s, "hill_regular_1", "Triboar")
    s, _ = act(s, p, M.PlayCommand(command="move"))
    lyn = {m.to for m in legal(s, p) if isinstance(m, M.MoveLyn)}
    # Evermoors' neighbours: Lurkwood, Silverymoon, Neverwinter Wood, Triboar (hill),
    # Yartar, Greypeak Mountains (stone's Starting Region)
    assert lyn == {G[n] for n in ("Lurkwood", "Silverymoon", "Neverwinter Wood", "Yartar")}


# --------------------------------------------- §5.7, §5.8, §5.10 commands
def test_5_7_magic_discards_down_to_four() -> None:
    s = turn(base(), "stone")
    p = seat(s, "stone")
    s = row(s, "stone", ("move", "trade"))
    s = spells(s, "stone", ["mend", "mend", "fortune"])
    s, _ = act(s, p, M.PlayCommand(command="magic"))  # 2 + 2 = 4 spells: 7 in hand
    assert s.phase == "discard" and len(s.spells[p]) == 7
    for _ in range(3):
        s, _ = act(s, p, legal(s, p)[0])
    assert len(s.spells[p]) == 4 and s.active != p


def test_5_8_plunder_skips_giantslayer_regions_and_h1_adds_one_card() -> None:
    s = turn(base(), "hill")
    p = seat(s, "hill")
    claimed = list(s.claimed)
    claimed[p] = ("H1",)
    s = replace(s, claimed=tuple(claimed))
    s = occupy(s, "hill", ["Yartar", "Daggerford", "Waterdeep"])
    s = place(s, "giantslayer_1", "Waterdeep")
    s, _ = act(s, p, M.PlayCommand(command="plunder"))
    assert {m.region for m in legal(s, p) if isinstance(m, M.Plunder)} == {
        G["Yartar"],
        G["Daggerford"],
    }
    n = len(s.resources[p])
    s, _ = act(s, p, M.Plunder(region=G["Yartar"]))
    s, _ = act(s, p, M.EndPlunder())
    assert len(s.resources[p]) == n + 1 + 1


def test_5_10_heal_uses_free_heals_then_food() -> None:
    s = turn(base(), "hill")
    p = seat(s, "hill")
    s = resources(s, "hill", ["food"])
    for name in ("hill_regular_1", "hill_regular_2", "hill_champion_1"):
        s = place(s, name, "Sumber Hills", True)
    s, _ = act(s, p, M.PlayCommand(command="heal"))  # 2 free heals
    s, _ = act(s, p, M.HealUnit(unit=U["hill_regular_1"]))
    s, _ = act(s, p, M.HealUnit(unit=U["hill_regular_2"]))
    assert legal(s, p) == (M.HealUnit(unit=U["hill_champion_1"], food=True), M.EndHeal())
    s, _ = act(s, p, M.HealUnit(unit=U["hill_champion_1"], food=True))
    assert not any(s.unit_wounded) and s.resources[p] == () and s.active != p


# ------------------------------------------------------------ §5.9 Rest
def test_5_9_giantslayers_recruit_only_into_small_folk_regions_for_two_actions() -> None:
    s = turn(base(), "hill")
    p = seat(s, "hill")
    s = row(s, "hill", ("move", "trade", "heal"))
    s, _ = act(s, p, M.PlayCommand(command="rest"))
    assert s.budget == 3
    recruits = {m.region for m in legal(s, p) if isinstance(m, M.GsRecruit)}
    assert recruits == set(D.SMALL_FOLK)
    s, _ = act(s, p, M.GsRecruit(region=G["Luskan"]))
    assert s.budget == 1 and not [m for m in legal(s, p) if isinstance(m, M.GsRecruit)]
    s, _ = act(s, p, M.GsMove(slayer=D.GIANTSLAYERS[0], to=G["Mirabar"]))
    assert s.active != p and s.unit_loc[D.GIANTSLAYERS[0]] == G["Mirabar"]


def test_5_9_moving_closes_recruiting_and_attacking_closes_moving() -> None:
    s = turn(base(), "hill")
    p = seat(s, "hill")
    s = row(s, "hill", ("move", "trade", "heal", "attack", "magic"))
    s = place(s, "giantslayer_1", "Luskan")
    s = place(s, "frost_regular_5", "Mirabar")
    s = place(s, "giantslayer_2", "Mirabar")
    s, _ = act(s, p, M.PlayCommand(command="rest"))
    s, _ = act(s, p, M.GsMove(slayer=U["giantslayer_1"], to=G["Mirabar"]))
    assert not [m for m in legal(s, p) if isinstance(m, M.GsRecruit)]
    s, _ = act(s, p, M.GsAttack(region=G["Mirabar"], slayers=(U["giantslayer_2"],)))
    assert s.phase == "battle" and s.battle.kind == "slayers"
    assert s.battle.att.dice == ("basic", "basic")


# ---------------------------------------------------------- §2.7 Mend
def test_2_7_mend_heals_a_surviving_wounded_giant_of_the_battle() -> None:
    s = turn(base(), "hill", phase="battle")
    p = seat(s, "hill")
    s = spells(s, "hill", ["mend"])
    s = place(s, "hill_regular_5", "Delimbiyr Vale", True)
    s = place(s, "frost_regular_5", "High Moor")
    b = Battle(
        target=G["High Moor"], kind="giants", attacker=p, defender_race=D.RACE_INDEX["frost"],
        defender=seat(s, "frost"), controller=-1, step="defender_roll",
        defenders=(U["frost_regular_5"],), attackers=(U["hill_regular_5"],),
        att=Side(hits=0, blocks=5),
    )  # fmt: skip
    s = replace(s, battle=b, command="attack", budget=2)
    s, _ = act(s, seat(s, "frost"), M.FinalizeRoll())
    assert s.battle.step == "attacker_mend"
    sp = s.spells[p][0]
    assert legal(s, p) == (M.CastMend(spell=sp, unit=U["hill_regular_5"]), M.PassMend())
    s, _ = act(s, p, M.CastMend(spell=sp, unit=U["hill_regular_5"]))
    assert not s.unit_wounded[U["hill_regular_5"]] and sp in s.spell_discard


# ------------------------------------------------------------- §2.3 map
_SPEC_EDGES = """
Sea of Moving Ice|Luskan  Sea of Moving Ice|Spine of the World  Sea of Moving Ice|Trackless Sea
Spine of the World|Mirabar  Spine of the World|Ice Spires  Spine of the World|Lurkwood
Ice Spires|Lurkwood  Ice Spires|Silverymoon  Luskan|Trackless Sea  Luskan|Mirabar
Luskan|Neverwinter  Mirabar|Lurkwood  Mirabar|Neverwinter Wood  Mirabar|Neverwinter
Lurkwood|Evermoors  Lurkwood|Neverwinter Wood  Silverymoon|Evermoors
Silverymoon|Greypeak Mountains  Trackless Sea|Neverwinter  Trackless Sea|Mere of Dead Men
Trackless Sea|Waterdeep  Neverwinter|Neverwinter Wood  Neverwinter|Mere of Dead Men
Neverwinter Wood|Evermoors  Neverwinter Wood|Triboar  Neverwinter Wood|Mere of Dead Men
Evermoors|Triboar  Evermoors|Yartar  Evermoors|Greypeak Mountains  Triboar|Yartar
Triboar|Mere of Dead Men  Triboar|Sword Mountains  Yartar|High Forest  Yartar|Sumber Hills
Greypeak Mountains|High Forest  High Forest|Delimbiyr Vale  High Forest|Sumber Hills
Mere of Dead Men|Sword Mountains  Mere of Dead Men|Waterdeep  Sword Mountains|Waterdeep
Sword Mountains|Sumber Hills  Waterdeep|Daggerford  Sumber Hills|Delimbiyr Vale
Sumber Hills|Daggerford  Delimbiyr Vale|High Moor  Delimbiyr Vale|Daggerford
High Moor|Daggerford
"""


def test_2_3_the_map_is_the_spec_edge_list() -> None:
    pairs = [p.split("|") for p in _SPEC_EDGES.replace("\n", "  ").split("  ") if p.strip()]
    want = {frozenset((D.REGION_INDEX[a.strip()], D.REGION_INDEX[b.strip()])) for a, b in pairs}
    assert len(want) == 47
    assert {frozenset(e) for e in D.EDGES} == want
    for g in range(22):
        assert all(g in D.ADJ[n] for n in D.ADJ[g])  # symmetric
    assert G["High Moor"] not in D.ADJ[G["Sumber Hills"]]
    assert len(D.SMALL_FOLK) == 8 and sorted(D.START_OF) == sorted(set(D.START_OF))


# ------------------------------------------------------- §5.3 attack limits
def test_5_3_each_giant_fights_once_and_each_region_is_attacked_once() -> None:
    from engine_core.games.assault_of_the_giants import GAME

    s = turn(empty_board(base()), "hill")
    p = seat(s, "hill")
    s = place(s, "hill_regular_1", "Delimbiyr Vale")
    s = place(s, "hill_regular_2", "Daggerford")
    s = place(s, "frost_champion_1", "High Moor")  # next to both hill giants
    s = place(s, "frost_regular_6", "Waterdeep")  # next to Daggerford only
    s, _ = act(s, p, M.PlayCommand(command="attack"))
    targets = {m.target for m in legal(s, p) if isinstance(m, M.DeclareBattle)}
    assert targets == {G["High Moor"], G["Waterdeep"]}
    s, _ = act(s, p, M.DeclareBattle(target=G["High Moor"]))
    s, _ = act(s, p, M.AddAttacker(unit=U["hill_regular_1"]))
    s, _ = act(s, p, M.StartBattle())
    while s.battle is not None:
        q = R.awaiting(s)[0]
        s, _ = act(s, q, GAME.default_move(s, q))
    # High Moor was attacked once already; hill_regular_1 has fought
    assert s.active == p and s.phase == "attack"
    assert [m for m in legal(s, p) if isinstance(m, M.DeclareBattle)] == [
        M.DeclareBattle(target=G["Waterdeep"])
    ]
    s, _ = act(s, p, M.DeclareBattle(target=G["Waterdeep"]))
    assert legal(s, p) == (M.AddAttacker(unit=U["hill_regular_2"]),)
