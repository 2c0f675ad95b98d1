"""The numbered rule scenarios of the spec (§9), one test each.

Unless a test says otherwise: 6 players, no Final Ordning, Leader Cards face up.
"""

from __future__ import annotations

import pytest
from msgspec.structs import replace

from engine_core.errors import IllegalMove
from engine_core.games.assault_of_the_giants import data as D
from engine_core.games.assault_of_the_giants import moves as M
from engine_core.games.assault_of_the_giants import rules as R
from engine_core.games.assault_of_the_giants.events import (
    BattleStep,
    DiceRolled,
    OpAwarded,
    ResourcesDrawn,
    SpellsDrawn,
    StageBegan,
    TollDue,
    TurnBegan,
)
from engine_core.games.assault_of_the_giants.state import Battle, Side
from tests.games.assault_of_the_giants.helpers import (
    G,
    U,
    act,
    base,
    empty_board,
    kinds_of,
    legal,
    place,
    resources,
    row,
    seat,
    spells,
    to_pile,
    turn,
)


def trade_state(race: str, cards_in_row: tuple[str, ...], kinds: list[str]):
    s = turn(base(), race)
    s = row(s, race, cards_in_row)
    s = resources(s, race, kinds)
    p = seat(s, race)
    s, _ = act(s, p, M.PlayCommand(command="trade"))
    return s, p


# ----------------------------------------------------------------- trading
def test_scenario_9_1_trade_limit_from_position() -> None:
    s, p = trade_state("fire", ("move", "recruit"), ["food"] * 6)
    assert s.budget == 5  # T = 3 + 2
    s, _ = act(s, p, M.StartTrade(mode="deck"))
    for _ in range(5):
        s, _ = act(s, p, M.GiveCard(card="food"))
    with pytest.raises(IllegalMove):  # a sixth card is over the limit
        act(s, p, M.GiveCard(card="food"))
    s, ev = act(s, p, M.ConfirmTrade())
    assert sum(len(e.cards) for e in ev if isinstance(e, ResourcesDrawn)) == 5


def test_scenario_9_2_deck_trade_with_one_search() -> None:
    s, p = trade_state("fire", ("move",), ["food"] * 4)
    s = replace(s, budget=4)
    s = to_pile(s, ["rune_ild"])
    before = kinds_of(s.resources[p])
    s, _ = act(s, p, M.StartTrade(mode="deck"))
    for _ in range(4):
        s, _ = act(s, p, M.GiveCard(card="food"))
    s, ev = act(s, p, M.ConfirmTrade(take="rune_ild"))
    drawn = [c for e in ev if isinstance(e, ResourcesDrawn) for c in e.cards]
    assert len(drawn) == 3
    assert before == ["food"] * 4
    after = kinds_of(s.resources[p])
    assert sorted(after) == sorted(["rune_ild", *(D.RESOURCE_KIND[c] for c in drawn)])


def test_scenario_9_3_only_one_card_from_the_pile_per_trade() -> None:
    s, p = trade_state("fire", ("move",), ["food"] * 4)
    s = replace(s, budget=4)
    s = to_pile(s, ["rune_ild", "rune_stor"])
    s, _ = act(s, p, M.StartTrade(mode="deck"))
    for _ in range(4):
        s, _ = act(s, p, M.GiveCard(card="food"))
    # a deck trade is confirmed with at most one card from the pile; then it is over
    confirms = [m for m in legal(s, p) if isinstance(m, M.ConfirmTrade)]
    assert all(isinstance(m.take, str) for m in confirms)
    s2, ev = act(s, p, M.ConfirmTrade(take="rune_stor"))
    drawn = [c for e in ev if isinstance(e, ResourcesDrawn) for c in e.cards]
    assert len(drawn) == 3  # 1 from the pile + 3 from the deck
    taken = [c for c in s2.resources[p] if c not in drawn]
    assert kinds_of(tuple(taken)) == ["rune_stor"]
    assert "rune_ild" in kinds_of(s2.res_discard)  # the second pile card stayed there
    assert s2.phase == "turn" and s2.active != p  # the command ended: no second pick


def test_scenario_9_4_taking_back_a_just_discarded_card() -> None:
    s, p = trade_state("storm", (), ["food", "rune_stor"])
    s, _ = act(s, p, M.StartTrade(mode="deck"))
    s, _ = act(s, p, M.GiveCard(card="food"))
    s, _ = act(s, p, M.GiveCard(card="rune_stor"))
    assert M.ConfirmTrade(take="rune_stor") in legal(s, p)
    s, ev = act(s, p, M.ConfirmTrade(take="rune_stor"))
    drawn = [c for e in ev if isinstance(e, ResourcesDrawn) for c in e.cards]
    assert len(drawn) == 1
    assert "rune_stor" in kinds_of(s.resources[p])


def test_scenario_9_5_uneven_friendly_trade() -> None:
    s, p = trade_state("stone", (), ["food", "food"])
    assert s.budget == 2
    s = resources(s, "cloud", ["rune_skye"])
    c = seat(s, "cloud")
    s, _ = act(s, p, M.StartTrade(mode="offer", partner=c))
    s, _ = act(s, p, M.GiveCard(card="food"))
    s, _ = act(s, p, M.GiveCard(card="food"))
    s, _ = act(s, p, M.RequestCard(card="rune_skye"))
    s, _ = act(s, p, M.ConfirmTrade())
    assert R.awaiting(s) == (c,)
    s, _ = act(s, c, M.RespondOffer(accept=True))
    assert kinds_of(s.resources[p]) == ["rune_skye"]
    assert kinds_of(s.resources[c]) == ["food", "food"]
    assert s.active != p and s.phase == "turn"  # the Trade command ended


def test_scenario_9_6_friendly_offer_over_the_limit() -> None:
    s, p = trade_state("stone", (), ["food"] * 3)
    s = resources(s, "cloud", ["rune_skye", "food", "food"])
    c = seat(s, "cloud")
    s, _ = act(s, p, M.StartTrade(mode="offer", partner=c))
    s, _ = act(s, p, M.GiveCard(card="food"))
    s, _ = act(s, p, M.GiveCard(card="food"))
    with pytest.raises(IllegalMove):
        act(s, p, M.GiveCard(card="food"))
    # requesting 3 for 1 is fine: only the giving side is limited
    s2, _ = act(s, p, M.RequestCard(card="food"))
    s2, _ = act(s2, p, M.RequestCard(card="food"))
    s2, _ = act(s2, p, M.RequestCard(card="rune_skye"))
    assert len(s2.trade.request) == 3
    assert M.ConfirmTrade() in legal(s2, p)


def test_scenario_9_7_rejected_offer_then_a_different_trade() -> None:
    s, p = trade_state("hill", ("move",), ["food", "food"])
    assert s.budget == 3
    s = resources(s, "frost", ["rune_ise"])
    s = resources(s, "stone", ["food"])
    f, st = seat(s, "frost"), seat(s, "stone")
    s, _ = act(s, p, M.StartTrade(mode="offer", partner=f))
    s, _ = act(s, p, M.GiveCard(card="food"))
    s, _ = act(s, p, M.RequestCard(card="rune_ise"))
    s, _ = act(s, p, M.ConfirmTrade())
    s, _ = act(s, f, M.RespondOffer(accept=False))
    moves = legal(s, p)
    assert M.StartTrade(mode="deck") in moves
    assert M.StartTrade(mode="forced", partner=f) in moves
    assert M.StartTrade(mode="forced", partner=st) in moves
    assert not [m for m in moves if isinstance(m, M.StartTrade) and m.mode == "offer"]


# ----------------------------------------------------------------- recruit
def test_scenario_9_8_recruit_arithmetic() -> None:
    s = turn(base(), "hill")
    s = row(s, "hill", ("move", "trade", "magic"))
    p = seat(s, "hill")
    s, _ = act(s, p, M.PlayCommand(command="recruit"))
    assert s.budget == 7
    s, _ = act(s, p, M.Recruit(kind="elite"))
    s, _ = act(s, p, M.Recruit(kind="regular"))
    # 1 RP is left: nothing costs 1, so the command is over and the point is lost
    assert s.active != p and s.phase == "turn"


def test_scenario_9_9_recruit_with_nothing_affordable() -> None:
    s = turn(base(), "storm")
    p = seat(s, "storm")
    loc = list(s.unit_loc)
    for u in D.RACE_UNITS[D.RACE_INDEX["storm"]]:
        if loc[u] == D.SUPPLY and D.UNITS[u].kind != "regular":
            loc[u] = D.BOX  # out of reach: the supply holds only regulars
    s = replace(s, unit_loc=tuple(loc))
    s = place(s, "storm_elite_1", "Luskan")  # make room at home
    s, _ = act(s, p, M.PlayCommand(command="recruit"))
    assert s.budget == 6
    assert {m.kind for m in legal(s, p) if isinstance(m, M.Recruit)} == {"regular"}
    s, _ = act(s, p, M.Recruit(kind="regular"))
    assert s.active != p  # 2 RP left, a regular costs 4: lost


def test_scenario_9_10_stacking_replacement() -> None:
    s = turn(base(), "storm")
    p = seat(s, "storm")
    home = G["Trackless Sea"]
    assert sorted(R.giants_at(s, home)) == sorted(
        [U["storm_leader"], U["storm_champion"], U["storm_elite_1"]]
    )
    s, _ = act(s, p, M.PlayCommand(command="recruit"))
    recruits = [m for m in legal(s, p) if isinstance(m, M.Recruit) and m.kind == "regular"]
    assert {m.remove for m in recruits} == {
        U["storm_leader"],
        U["storm_champion"],
        U["storm_elite_1"],
    }
    op_before = s.op
    s, _ = act(s, p, M.Recruit(kind="regular", remove=U["storm_elite_1"]))
    assert sorted(D.UNIT_IDS[u] for u in R.giants_at(s, home)) == [
        "storm_champion",
        "storm_leader",
        "storm_regular_1",
    ]
    assert s.op == op_before
    assert s.unit_loc[U["storm_elite_1"]] == D.SUPPLY


def test_scenario_9_11_replacement_only_to_make_room() -> None:
    s = turn(base(), "hill")
    p = seat(s, "hill")
    assert len(R.giants_at(s, G["Sumber Hills"])) == 4
    s, _ = act(s, p, M.PlayCommand(command="recruit"))
    assert all(m.remove == -1 for m in legal(s, p) if isinstance(m, M.Recruit))
    with pytest.raises(IllegalMove):
        act(s, p, M.Recruit(kind="regular", remove=U["hill_regular_1"]))


def test_scenario_9_12_king_hekaton_displaces_the_champion() -> None:
    s = turn(base(), "storm")
    p = seat(s, "storm")
    s = place(s, "storm_elite_1", "Luskan")
    s = place(s, "storm_regular_1", "Trackless Sea")
    s = place(s, "storm_elite_2", "Neverwinter")
    s = place(s, "storm_elite_3", "Waterdeep")
    s = place(s, "storm_regular_2", "Mere of Dead Men")
    s = resources(s, "storm", ["rune_stor"])
    s = replace(s, special_done=(1, 0, 0, 0, 0, 0))  # T1 already claimed
    claims = [m for m in legal(s, p) if isinstance(m, M.ClaimEvent) and m.event == "T2"]
    home = {U["storm_leader"], U["storm_champion"], U["storm_regular_1"]}
    assert {m.remove for m in claims} == home  # one of the three must go
    s, ev = act(s, p, M.ClaimEvent(event="T2", payment="free", remove=U["storm_champion"]))
    assert s.unit_loc[U["storm_hekaton"]] == G["Trackless Sea"]
    assert s.unit_loc[U["storm_champion"]] == D.SUPPLY
    assert [e.amount for e in ev if isinstance(e, OpAwarded)] == [5]
    assert s.phase == "command"


def test_scenario_9_13_re_recruiting_a_free_unit() -> None:
    s = turn(base(), "storm")
    p = seat(s, "storm")
    s = place(s, "storm_hekaton", D.SUPPLY)  # entered through T2, later defeated
    s = place(s, "storm_elite_1", "Luskan")
    for L, ok in ((5, False), (6, True)):
        s2 = row(s, "storm", ("move", "trade", "magic", "heal", "plunder", "leader")[:L])
        s2, _ = act(s2, p, M.PlayCommand(command="recruit"))
        kinds = {m.kind for m in legal(s2, p) if isinstance(m, M.Recruit)}
        assert ("hekaton" in kinds) == ok
    s2, _ = act(s2, p, M.Recruit(kind="hekaton"))
    assert s2.unit_loc[U["storm_hekaton"]] == G["Trackless Sea"]


def test_scenario_9_14_lyn_armaal_sets_the_recruit_site() -> None:
    s = turn(base(), "cloud")
    p = seat(s, "cloud")
    s = place(s, "cloud_regular_1", "Triboar")
    s = replace(s, lyn=G["Triboar"])
    s = row(s, "cloud", ("move",))
    s, _ = act(s, p, M.PlayCommand(command="recruit"))
    assert s.budget == 6
    s, _ = act(s, p, M.Recruit(kind="regular"))
    s, _ = act(s, p, M.Recruit(kind="regular"))
    assert [s.unit_loc[U[f"cloud_regular_{k}"]] for k in (3, 4)] == [G["Triboar"]] * 2
    assert len(R.giants_at(s, G["Evermoors"])) == 3


def test_scenario_9_15_conquered_lyn_armaal_region() -> None:
    s = turn(base(), "cloud")
    p = seat(s, "cloud")
    s = replace(s, lyn=G["Yartar"])
    s = place(s, "hill_regular_3", "Yartar")
    s = place(s, "hill_regular_4", "Yartar")
    s2, _ = act(s, p, M.PlayCommand(command="recruit"))
    assert s2.active != p  # no recruit anywhere, Evermoors included: the command is empty
    # moving Lyn Armaal first (to a cloud region) makes recruiting possible again
    s3, _ = act(s, p, M.PlayCommand(command="move"))
    assert M.MoveLyn(to=G["Evermoors"]) in legal(s3, p)


def test_scenario_9_16_the_evermoors_stays_protected() -> None:
    s = empty_board(base())
    s = turn(s, "hill")
    p = seat(s, "hill")
    s = replace(s, lyn=G["Triboar"])
    s = place(s, "hill_regular_1", "Triboar")
    s = place(s, "hill_leader", "Sumber Hills")
    s = row(s, "hill", ())
    s, _ = act(s, p, M.PlayCommand(command="move"))
    s = replace(s, budget=2)
    s, ev = act(s, p, M.Maneuver(unit=U["hill_regular_1"], to=G["Evermoors"]))
    assert not [e for e in ev if isinstance(e, TollDue)]
    assert s.transit == U["hill_regular_1"]
    assert M.EndMove() not in legal(s, p)  # may not end there
    s, _ = act(s, p, M.Maneuver(unit=U["hill_regular_1"], to=G["Lurkwood"]))
    assert s.unit_loc[U["hill_regular_1"]] == G["Lurkwood"]
    # with one maneuver only, entering the Evermoors is illegal
    s4 = empty_board(base())
    s4 = turn(s4, "hill")
    s4 = place(s4, "hill_regular_1", "Triboar")
    s4, _ = act(s4, p, M.PlayCommand(command="move"))
    s4 = replace(s4, budget=1)
    assert M.Maneuver(unit=U["hill_regular_1"], to=G["Evermoors"]) not in legal(s4, p)
    # attacking the Evermoors is illegal until Pool A is empty
    s5 = turn(base(), "hill")
    s5 = place(s5, "hill_regular_1", "Triboar")
    s5, _ = act(s5, p, M.PlayCommand(command="attack"))
    assert M.DeclareBattle(target=G["Evermoors"]) not in legal(s5, p)
    s6 = replace(turn(base(), "hill"), final_ordning=True, pool_a=0)
    s6 = place(s6, "hill_regular_1", "Triboar")
    s6, _ = act(s6, p, M.PlayCommand(command="attack"))
    assert M.DeclareBattle(target=G["Evermoors"]) in legal(s6, p)


# -------------------------------------------------------------------- move
def test_scenario_9_17_move_arithmetic_and_free_choice_of_movers() -> None:
    s = turn(base(), "hill")
    p = seat(s, "hill")
    s = row(s, "hill", ("trade", "magic"))
    s, _ = act(s, p, M.PlayCommand(command="move"))
    assert s.budget == 8
    home = G["Sumber Hills"]
    # two giants 2 steps each, then the others one step each
    for u, path in (
        ("hill_regular_1", ("Delimbiyr Vale", "High Moor")),
        ("hill_regular_2", ("Yartar", "Triboar")),
        ("hill_leader", ("Daggerford",)),
        ("hill_champion_1", ("High Forest",)),
    ):
        for g in path:
            s, _ = act(s, p, M.Maneuver(unit=U[u], to=G[g]))
    assert s.budget == 2 and s.active == p
    s, _ = act(s, p, M.Maneuver(unit=U["hill_leader"], to=home))
    s, _ = act(s, p, M.Maneuver(unit=U["hill_leader"], to=G["Daggerford"]))
    assert s.active != p  # all 8 maneuvers spent


def test_scenario_9_18_one_toll_per_region_per_command() -> None:
    s = turn(base(), "hill")
    p = seat(s, "hill")
    s = place(s, "frost_regular_3", "Delimbiyr Vale")
    s = place(s, "hill_regular_3", "Sumber Hills")
    s = resources(s, "hill", ["food", "food"])
    s, _ = act(s, p, M.PlayCommand(command="move"))
    frost = seat(s, "frost")
    tolls = 0
    for k in (1, 2, 3):
        u = U[f"hill_regular_{k}"]
        s, ev = act(s, p, M.Maneuver(unit=u, to=G["Delimbiyr Vale"]))
        due = [e for e in ev if isinstance(e, TollDue)]
        if due:
            tolls += 1
            assert R.legal_moves(s, p) == (M.PayToll(card="food"), M.PayToll(card="wound"))
            s, _ = act(s, p, M.PayToll(card="food"))
        s, _ = act(s, p, M.Maneuver(unit=u, to=G["High Moor"]))
    assert tolls == 1
    assert kinds_of(s.resources[frost]).count("food") >= 1
    assert all(s.unit_loc[U[f"hill_regular_{k}"]] == G["High Moor"] for k in (1, 2, 3))


def test_scenario_9_19_transit_rule() -> None:
    s = turn(base(), "hill")
    p = seat(s, "hill")
    s = place(s, "frost_regular_3", "Delimbiyr Vale")
    s, _ = act(s, p, M.PlayCommand(command="move"))
    s = replace(s, budget=1)
    assert M.Maneuver(unit=U["hill_regular_1"], to=G["Delimbiyr Vale"]) not in legal(s, p)
    with pytest.raises(IllegalMove):
        act(s, p, M.Maneuver(unit=U["hill_regular_1"], to=G["Delimbiyr Vale"]))
    s = replace(s, budget=2)
    assert M.Maneuver(unit=U["hill_regular_1"], to=G["Delimbiyr Vale"]) in legal(s, p)


# ------------------------------------------------------------------ combat
def battle_state(attacker: str, defender_units: list[tuple[str, bool]], region: str):
    """A battle at the casualty step: ``attacker`` attacks ``region``."""
    s = turn(base(), attacker, phase="battle")
    p = seat(s, attacker)
    for name, wounded in defender_units:
        s = place(s, name, region, wounded)
    defenders = tuple(U[n] for n, _ in defender_units)
    race = D.UNIT_RACE[defenders[0]]
    b = Battle(
        target=G[region], kind="giants", attacker=p, defender_race=race,
        defender=s.race_seat[race], controller=-1, step="defender_roll",
        defenders=defenders,
    )  # fmt: skip
    return replace(s, battle=b, command="attack", budget=2), p


def test_scenario_9_20_casualty_chain() -> None:
    s, p = battle_state(
        "frost",
        [("hill_regular_5", True), ("hill_regular_6", False), ("hill_regular_7", False)],
        "High Moor",
    )
    s = place(s, "frost_regular_1", "Delimbiyr Vale")
    b = s.battle
    s = replace(s, battle=replace(b, attackers=(U["frost_regular_1"],),
                                  att=Side(hits=7, blocks=9)))  # fmt: skip
    h = seat(s, "hill")
    s, ev = act(s, h, M.FinalizeRoll())
    assert [e.damage for e in ev if isinstance(e, BattleStep)] == [7]
    op = s.op[p]
    s, _ = act(s, h, M.AssignCasualty(unit=U["hill_regular_5"]))
    assert s.battle.damage == 5 and s.unit_loc[U["hill_regular_5"]] == D.SUPPLY
    s, _ = act(s, h, M.AssignCasualty(unit=U["hill_regular_6"]))
    assert s.battle.damage == 2 and s.unit_loc[U["hill_regular_6"]] == D.SUPPLY
    s, _ = act(s, h, M.AssignCasualty(unit=U["hill_regular_7"]))
    assert s.unit_loc[U["hill_regular_7"]] == G["High Moor"]
    assert s.unit_wounded[U["hill_regular_7"]]
    s, _ = act(s, h, M.PassMend())  # step 7 (hill's Mend window), then the rewards
    assert s.op[p] - op == 4


def test_scenario_9_21_wounded_unit_with_high_fortitude() -> None:
    s, _p = battle_state("hill", [("frost_champion_2", True)], "High Moor")
    s = place(s, "hill_regular_5", "Delimbiyr Vale")
    b = s.battle
    s = replace(s, battle=replace(b, attackers=(U["hill_regular_5"],),
                                  att=Side(hits=2, blocks=9)))  # fmt: skip
    f = seat(s, "frost")
    s, _ = act(s, f, M.FinalizeRoll())
    s, ev = act(s, f, M.AssignCasualty(unit=U["frost_champion_2"]))
    assert s.unit_loc[U["frost_champion_2"]] == D.SUPPLY
    assert [e.amount for e in ev if isinstance(e, OpAwarded)] == [7]


def test_scenario_9_22_positional_dice_modifiers() -> None:
    s = turn(base(), "storm", phase="battle")
    p = seat(s, "storm")
    s = row(s, "storm", ("leader", "magic", "move", "attack"))
    dice = ("storm",) + ("basic",) * 6
    faces = (5, 6, 6, 6, 6, 6, 6)  # AA and six A: eight arcane symbols
    z = (0,) * 7
    b = Battle(
        target=G["Luskan"], kind="giants", attacker=p, defender_race=0, defender=-1,
        controller=(p + 1) % 6, step="attacker_roll",
        att=Side(dice=dice, faces=faces, to_block=z, to_hits=z, to_hit=z),
    )  # fmt: skip
    s = replace(s, battle=b, command="attack", budget=2)
    moves = legal(s, p)
    rerolls = [m for m in moves if isinstance(m, M.Reroll)]
    assert max(len(m.dice) for m in rerolls) == 3 and len(rerolls) == 7 + 21 + 35
    blocks = [m.dice for m in moves if isinstance(m, M.ConvertArcane) and m.into == "block"]
    hits = [m.dice for m in moves if isinstance(m, M.ConvertArcane) and m.into == "hits"]
    assert {len(d) for d in blocks} == {1, 2} and {len(d) for d in hits} == {1, 2, 3}
    s, _ = act(s, p, M.ConvertArcane(into="hits", dice=(0, 0, 1)))
    assert s.battle.att.to_hits == (2, 1, 0, 0, 0, 0, 0)
    assert not [m for m in legal(s, p) if isinstance(m, M.ConvertArcane) and m.into == "hits"]
    s, _ = act(s, p, M.ConvertArcane(into="block", dice=(2, 3)))
    s, _ = act(s, p, M.Reroll(dice=(4, 5, 6)))
    assert not [m for m in legal(s, p) if isinstance(m, (M.Reroll, M.ConvertArcane))]


def test_scenario_9_23_blocks_and_totals() -> None:
    s, _p = battle_state("hill", [("frost_regular_5", False)], "High Moor")
    s = place(s, "hill_regular_5", "Delimbiyr Vale")
    b = s.battle
    s = replace(s, battle=replace(
        b, attackers=(U["hill_regular_5"],), att=Side(hits=6, blocks=1),
        dfn=Side(bonus_hits=2, bonus_blocks=3),
    ))  # fmt: skip
    f = seat(s, "frost")
    s, ev = act(s, f, M.FinalizeRoll())
    assert [e.damage for e in ev if isinstance(e, BattleStep)] == [3]
    s, ev = act(s, f, M.AssignCasualty(unit=U["frost_regular_5"]))
    assert [e.damage for e in ev if isinstance(e, BattleStep)] == [1]
    assert s.battle.step == "attacker_casualties"


def test_scenario_9_24_pool_size_cap() -> None:
    s = turn(base(), "storm")
    p = seat(s, "storm")
    s = row(s, "storm", ("leader",))
    s = place(s, "storm_regular_1", "Trackless Sea")  # 4 storm giants in reach
    s = place(s, "storm_elite_1", "Waterdeep")
    s = place(s, "storm_regular_2", "Waterdeep")
    s = place(s, "storm_leader", "Waterdeep")
    s = place(s, "frost_regular_5", "Mere of Dead Men")
    s, _ = act(s, p, M.PlayCommand(command="attack"))
    s, _ = act(s, p, M.DeclareBattle(target=G["Mere of Dead Men"]))
    for name in ("storm_champion", "storm_regular_1", "storm_elite_1", "storm_regular_2",
                 "storm_leader"):  # fmt: skip
        s, _ = act(s, p, M.AddAttacker(unit=U[name]))
    assert sum(R.unit_dice(s, u) for u in s.battle.attackers) == 9
    s, ev = act(s, p, M.StartBattle())
    rolled = next(e for e in ev if isinstance(e, DiceRolled))
    assert rolled.dice == ("storm",) + ("basic",) * 6


def test_scenario_9_25_npc_defence() -> None:
    s = base(players=4)
    p = seat(s, "hill")
    assert s.npc[D.RACE_INDEX["frost"]]
    elite = D.npc_outpost_elite("frost")
    assert s.unit_loc[elite] == G["Spine of the World"]
    s = turn(s, "hill")
    s = place(s, "hill_regular_1", "Mirabar")
    s, _ = act(s, p, M.PlayCommand(command="attack"))
    s, _ = act(s, p, M.DeclareBattle(target=G["Spine of the World"]))
    s, _ = act(s, p, M.AddAttacker(unit=U["hill_regular_1"]))
    s, _ = act(s, p, M.StartBattle())
    s = replace(s, battle=replace(s.battle, att=replace(s.battle.att, bonus_hits=9)))
    s, ev = act(s, p, M.FinalizeRoll())
    controller = (p + 1) % 4
    assert R.awaiting(s) == (controller,)
    rolled = [e for e in ev if isinstance(e, DiceRolled)][-1]
    assert rolled.dice == ("frost", "basic")
    moves = legal(s, controller)
    assert {len(m.dice) for m in moves if isinstance(m, M.Reroll)} == {1, 2}
    assert all(
        m.into == "block" and len(m.dice) <= 2 for m in moves if isinstance(m, M.ConvertArcane)
    )
    assert not [m for m in moves if isinstance(m, (M.CastSpell, M.PlayArmament))]
    op = s.op
    s, _ = act(s, controller, M.FinalizeRoll())
    s, ev = act(s, controller, M.AssignCasualty(unit=elite))
    assert s.unit_loc[elite] == D.BOX
    # hill giants the elite defeats give OP to nobody
    if s.battle is not None and s.battle.step == "attacker_casualties":
        s, _ = act(s, p, M.AssignCasualty(unit=U["hill_regular_1"]))
    if s.battle is not None and s.battle.step == "attacker_mend":
        s, _ = act(s, p, M.PassMend())
    assert s.battle is None  # step 8 paid the rewards
    assert s.op[p] - op[p] == 5
    assert [s.op[q] - op[q] for q in range(4) if q != p] == [0, 0, 0]


# ------------------------------------------------------------------ leader
def test_scenario_9_26_leader_immediate_ability() -> None:
    s = turn(base(), "hill")
    p = seat(s, "hill")
    n = len(s.resources[p])
    s, _ = act(s, p, M.PlayCommand(command="leader"))
    s, ev = act(s, p, M.LeaderAbility())
    assert len(s.resources[p]) == n + 2
    assert sum(len(e.cards) for e in ev if isinstance(e, ResourcesDrawn)) == 2


def test_scenario_9_27_a_wounded_leader_loses_its_ability() -> None:
    s = base()
    f = seat(s, "frost")
    s = row(s, "frost", ("leader",))
    assert R.leader_active(s, D.RACE_INDEX["frost"])
    s = place(s, "frost_leader", "Sea of Moving Ice", wounded=True)
    assert not R.leader_active(s, D.RACE_INDEX["frost"])
    # frost defends: no extra die while Storvald is wounded
    s, p = battle_state("hill", [("frost_regular_5", False)], "High Moor")
    s = row(s, "frost", ("leader",))
    s = place(s, "frost_leader", "Sea of Moving Ice", wounded=True)
    s = place(s, "hill_regular_5", "Delimbiyr Vale")
    s = replace(s, battle=replace(s.battle, attackers=(U["hill_regular_5"],),
                                  step="attacker_roll"))  # fmt: skip
    _s2, ev = act(s, p, M.FinalizeRoll())
    assert len([e for e in ev if isinstance(e, DiceRolled)][-1].dice) == 1
    # Heal flips him: the ability is back while the Leader Command stays in the row
    s3 = place(s, "frost_leader", "Sea of Moving Ice", wounded=False)
    s3, ev = act(s3, p, M.FinalizeRoll())
    assert len([e for e in ev if isinstance(e, DiceRolled)][-1].dice) == 2
    h = turn(base(), "frost")
    h = row(h, "frost", ("leader",))
    h = place(h, "frost_leader", "Sea of Moving Ice", wounded=True)
    h, _ = act(h, f, M.PlayCommand(command="heal"))
    h, _ = act(h, f, M.HealUnit(unit=U["frost_leader"]))
    assert R.leader_active(h, D.RACE_INDEX["frost"])


def test_scenario_9_28_leader_return() -> None:
    s = turn(base(), "fire")
    p = seat(s, "fire")
    s = place(s, "fire_leader", D.SUPPLY)
    s, _ = act(s, p, M.PlayCommand(command="leader"))
    s, _ = act(s, p, M.LeaderReturn())
    z = U["fire_leader"]
    assert s.unit_loc[z] == G["Ice Spires"] and s.unit_wounded[z]
    fire = D.RACE_INDEX["fire"]
    assert not R.leader_active(s, fire)
    assert R.command_strength(s, p, "recruit") == 5 + 1  # printed + L, no Zalto bonus
    s = place(s, "fire_leader", "Ice Spires", wounded=False)  # healed
    assert R.leader_active(s, fire)
    assert R.command_strength(s, p, "recruit") == 5 + 1 + 1


# -------------------------------------------------------------------- rest
def test_scenario_9_29_giantslayer_actions() -> None:
    s = turn(base(), "cloud")
    p = seat(s, "cloud")
    s = row(s, "cloud", ("move", "attack", "trade", "magic", "heal"))
    s, _ = act(s, p, M.PlayCommand(command="rest"))
    assert s.budget == 5
    s, _ = act(s, p, M.GsRecruit(region=G["Luskan"]))
    s, _ = act(s, p, M.GsRecruit(region=G["Daggerford"]))
    assert not [m for m in legal(s, p) if isinstance(m, M.GsRecruit)]
    s, _ = act(s, p, M.GsMove(slayer=U["giantslayer_1"], to=G["Mirabar"]))
    assert s.rows[p] == () and s.active != p  # all 6 cards back in hand


def test_scenario_9_30_giantslayer_rewards() -> None:
    s = turn(base(), "stone", phase="battle")
    p = seat(s, "stone")
    g = G["High Moor"]
    s = place(s, "frost_champion_2", g)
    s = place(s, "frost_regular_5", g)
    s = place(s, "giantslayer_1", g)
    s = place(s, "giantslayer_2", g)
    f = seat(s, "frost")
    b = Battle(
        target=g, kind="slayers", attacker=p, defender_race=D.RACE_INDEX["frost"],
        defender=f, controller=-1, step="defender_roll",
        defenders=(U["frost_champion_2"], U["frost_regular_5"]),
        attackers=(U["giantslayer_1"], U["giantslayer_2"]),
        att=Side(hits=10, blocks=0), dfn=Side(bonus_hits=4),
    )  # fmt: skip
    s = replace(s, battle=b, command="rest", budget=0)
    s, _ = act(s, f, M.FinalizeRoll())
    op = s.op[p]
    s, _ = act(s, f, M.AssignCasualty(unit=U["frost_champion_2"]))
    s, _ = act(s, f, M.AssignCasualty(unit=U["frost_regular_5"]))
    n = len(s.resources[f])
    s, _ev = act(s, p, M.AssignCasualty(unit=U["giantslayer_1"]))  # 4 damage: defeated
    assert s.unit_loc[U["giantslayer_1"]] == D.SUPPLY
    # step 8 (no Mend window: no wounded giant survived): the rewards
    assert s.op[p] - op == 4 + 2
    assert len(s.resources[f]) == n + 1


# ------------------------------------------------------------ events, pools
def test_scenario_9_31_event_with_rune() -> None:
    s = turn(base(), "hill")
    p = seat(s, "hill")
    for u, g in (("hill_regular_1", "Luskan"), ("hill_regular_2", "Mirabar"),
                 ("hill_leader", "Yartar")):  # fmt: skip
        s = place(s, u, g)
    s = resources(s, "hill", ["rune_haug"])
    assert M.ClaimEvent(event="H1", payment="free") not in legal(s, p)
    s, _ = act(s, p, M.ClaimEvent(event="H1", payment="rune_haug"))
    assert s.op[p] == 8 and kinds_of(s.res_discard).count("rune_haug") >= 1
    assert s.phase == "command"
    assert all(isinstance(m, M.PlayCommand) for m in legal(s, p))
    s, _ = act(s, p, M.PlayCommand(command="plunder"))
    n = len(s.resources[p])
    s, _ = act(s, p, M.Plunder(region=G["Luskan"]))
    s, _ = act(s, p, M.EndPlunder())
    assert len(s.resources[p]) == n + 2  # one region + the Feast of Guh extra card


def test_scenario_9_32_pools_and_the_final_ordning() -> None:
    s, _p = battle_state("hill", [("frost_elite_1", False)], "High Moor")
    s = replace(s, pool_a=3, pool_b=48)
    s = place(s, "hill_regular_5", "Delimbiyr Vale")
    s = replace(s, battle=replace(s.battle, attackers=(U["hill_regular_5"],),
                                  att=Side(hits=9, blocks=9)))  # fmt: skip
    f = seat(s, "frost")
    s, _ = act(s, f, M.FinalizeRoll())
    s, ev = act(s, f, M.AssignCasualty(unit=U["frost_elite_1"]))
    award = next(e for e in ev if isinstance(e, OpAwarded))
    assert (award.amount, award.from_a, award.from_b) == (5, 3, 2)
    assert [e.stage for e in ev if isinstance(e, StageBegan)] == ["final_ordning"]
    assert s.pool_a == 0 and s.pool_b == 46 and s.final_ordning
    assert not R.forbidden(s, D.RACE_INDEX["hill"], G["Sea of Moving Ice"])


def test_scenario_9_33_endgame_timing() -> None:
    s = base(players=4)
    order = [s.seat_race[(s.start_seat + i) % 4] for i in range(4)]
    assert [D.RACES[r] for r in order] == ["storm", "cloud", "stone", "hill"]
    cloud = seat(s, "cloud")
    s = replace(s, active=cloud, phase="turn", round=7, pool_b=1, pool_a=0, final_ordning=True)
    turns: list[str] = []
    # cloud empties Pool B during its turn (an event worth OP)
    s = resources(s, "cloud", ["food"] * 4)
    s = replace(s, draft=("U12", *s.draft[1:]))
    s, _ev = act(s, cloud, M.ClaimEvent(event="U12", payment="food"))
    assert s.endgame and s.final_round == 8
    s, _ = act(s, cloud, M.PlayCommand(command="leader"))
    s, _ = act(s, cloud, M.LeaderPass())
    turns.append("cloud")
    while s.outcome is None:
        p = s.active
        turns.append(D.RACES[s.seat_race[p]])
        cmd = "leader" if "leader" not in s.rows[p] else "rest"
        s, _ = act(s, p, M.PlayCommand(command=cmd))
        if s.active == p and s.outcome is None:
            s, _ = act(s, p, M.LeaderPass() if s.phase == "leader" else M.EndRest())
    assert turns == ["cloud", "stone", "hill", "storm", "cloud", "stone", "hill"]
    assert s.outcome is not None and s.outcome.reason == "endgame_completed"


def test_scenario_9_34_forced_rest() -> None:
    s = turn(base(), "fire")
    p = seat(s, "fire")
    s = row(s, "fire", tuple(c for c in D.COMMANDS if c != "rest"))
    assert [m for m in legal(s, p) if isinstance(m, M.PlayCommand)] == [
        M.PlayCommand(command="rest")
    ]
    s, _ = act(s, p, M.PlayCommand(command="rest"))
    assert s.budget == 8


def test_spell_draws_are_hidden_from_other_seats() -> None:
    from engine_core.games.assault_of_the_giants import GAME

    s = turn(base(), "cloud")
    p = seat(s, "cloud")
    s = spells(s, "cloud", [])
    s, ev = act(s, p, M.PlayCommand(command="magic"))
    drawn = [e for e in ev if isinstance(e, SpellsDrawn)]
    assert drawn and drawn[0].cards
    other = (p + 1) % 6
    assert GAME.redact(drawn[0], other).cards == ()
    assert GAME.redact(drawn[0], p).cards == drawn[0].cards
    view = GAME.view(s, other)
    assert view.my_spells == s.spells[other] and view.spell_counts[p] == len(s.spells[p])


def test_turn_passes_in_descending_ordning() -> None:
    s = base(players=3)
    order = [D.RACES[s.seat_race[(s.start_seat + i) % 3]] for i in range(3)]
    assert order == ["fire", "frost", "hill"]
    p = s.active
    s, ev = act(s, p, M.PlayCommand(command="rest"))
    assert [e.seat for e in ev if isinstance(e, TurnBegan)] == [(p + 1) % 3]


def test_positional_abilities_come_before_spells() -> None:
    s = turn(base(), "storm", phase="battle")
    p = seat(s, "storm")
    s = row(s, "storm", ("leader", "magic", "move", "attack"))
    s = spells(s, "storm", ["lightning_bolt"])
    z = (0,) * 2
    b = Battle(
        target=G["Luskan"], kind="giants", attacker=p, defender_race=0, defender=-1,
        controller=(p + 1) % 6, step="attacker_roll",
        att=Side(dice=("storm", "basic"), faces=(1, 6), to_block=z, to_hits=z, to_hit=z),
    )  # fmt: skip
    s = replace(s, battle=b, command="attack", budget=2)
    assert [m for m in legal(s, p) if isinstance(m, M.Reroll)]
    s, _ = act(s, p, M.CastSpell(spell=s.spells[p][0]))
    assert s.battle.att.bonus_hits == 2
    assert not [m for m in legal(s, p) if isinstance(m, (M.Reroll, M.ConvertArcane))]
