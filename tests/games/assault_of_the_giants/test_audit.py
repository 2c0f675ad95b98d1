"""Audit findings against the spec, one test per rule (named after its section)."""

from __future__ import annotations

from msgspec.structs import replace

from engine_core.games.assault_of_the_giants import moves as M
from engine_core.games.assault_of_the_giants.state import Battle, Side
from tests.games.assault_of_the_giants.helpers import G, act, base, legal, row, seat, spells, turn


def attacker_roll(race: str, cards: tuple[str, ...], dice: tuple[str, ...], faces: tuple[int, ...]):
    s = turn(base(), race, phase="battle")
    p = seat(s, race)
    s = row(s, race, cards)
    z = (0,) * len(dice)
    b = Battle(
        target=G["Luskan"], kind="giants", attacker=p, defender_race=0, defender=-1,
        controller=(p + 1) % 6, step="attacker_roll",
        att=Side(dice=dice, faces=faces, to_block=z, to_hits=z, to_hit=z),
    )  # fmt: skip
    return replace(s, battle=b, command="attack", budget=2), p


# ------------------------------------------------ §5.3 step 3: conversions
def test_5_3_the_attacker_picks_which_arcane_symbols_to_convert() -> None:
    # Given an Attack card with 1 card to its left and arcane on dice 0 (AA) and 2 (A)
    s, p = attacker_roll("fire", ("move", "attack"), ("fire", "basic", "basic"), (6, 1, 6))
    hits = {m.dice for m in legal(s, p) if isinstance(m, M.ConvertArcane) and m.into == "hits"}
    # Then each single symbol may be chosen, not only the lowest one
    assert hits == {(0,), (2,)}
    # When the symbol on die 2 is converted
    s, _ = act(s, p, M.ConvertArcane(into="hits", dice=(2,)))
    # Then die 2 carries the conversion and die 0 keeps both its arcane symbols
    assert s.battle.att.to_hits == (0, 0, 1)


def test_5_3_a_double_arcane_face_gives_two_symbols_to_choose_from() -> None:
    s, p = attacker_roll(
        "storm", ("magic", "move", "recruit", "attack"), ("storm", "basic"), (5, 6)
    )
    blocks = {m.dice for m in legal(s, p) if isinstance(m, M.ConvertArcane) and m.into == "block"}
    # Magic has 3 cards to its right: up to 3 of the 3 symbols (two on die 0, one on die 1)
    assert blocks == {(0,), (1,), (0, 0), (0, 1), (0, 0, 1)}
    s, _ = act(s, p, M.ConvertArcane(into="block", dice=(0, 1)))
    assert s.battle.att.to_block == (1, 1)


def test_2_7_arcane_surge_picks_its_symbols() -> None:
    s, p = attacker_roll("hill", ("move",), ("hill", "basic", "basic"), (6, 6, 6))
    s = spells(s, "hill", ["arcane_surge"])
    sp = s.spells[p][0]
    surge = {m.dice for m in legal(s, p) if isinstance(m, M.CastSpell) and m.spell == sp}
    assert surge == {(0,), (1,), (2,), (0, 1), (0, 2), (1, 2)}
    s, _ = act(s, p, M.CastSpell(spell=sp, dice=(1, 2)))
    assert s.battle.att.to_hit == (0, 1, 1)


# ------------------------------------------------- §5.3 step 8: rewards
def test_5_3_step_8_op_for_defeated_giants_is_paid_after_the_mend_window() -> None:
    from engine_core.games.assault_of_the_giants import data as D
    from engine_core.games.assault_of_the_giants.events import OpAwarded
    from tests.games.assault_of_the_giants.helpers import U, place

    # Given frost's 7 unblocked hits on hill regulars A (wounded), B and C (scenario 20)
    s = turn(base(), "frost", phase="battle")
    p = seat(s, "frost")
    names = ("hill_regular_5", "hill_regular_6", "hill_regular_7")
    for name, wounded in zip(names, (True, False, False), strict=True):
        s = place(s, name, "High Moor", wounded)
    s = place(s, "frost_regular_1", "Delimbiyr Vale")
    h = seat(s, "hill")
    b = Battle(
        target=G["High Moor"], kind="giants", attacker=p, defender_race=D.RACE_INDEX["hill"],
        defender=h, controller=-1, step="defender_roll", defenders=tuple(U[n] for n in names),
        attackers=(U["frost_regular_1"],), att=Side(hits=7, blocks=9),
    )  # fmt: skip
    s = replace(s, battle=b, command="attack", budget=2)
    op = s.op[p]
    s, _ = act(s, h, M.FinalizeRoll())
    # When the casualties are taken, A and B defeated and C wounded
    for name in names:
        s, ev = act(s, h, M.AssignCasualty(unit=U[name]))
        assert not [e for e in ev if isinstance(e, OpAwarded)]
    assert s.unit_loc[U["hill_regular_5"]] == s.unit_loc[U["hill_regular_6"]] == D.SUPPLY
    # Then nobody has scored yet: hill's Mend window (step 7) comes first
    assert s.battle.step == "defender_mend" and s.op[p] == op
    # And the rewards follow it (step 8)
    s, ev = act(s, h, M.PassMend())
    assert [(e.seat, e.amount) for e in ev if isinstance(e, OpAwarded)] == [(p, 2), (p, 2)]
    assert s.op[p] - op == 4


# ------------------------------------------- default_move (turn clock)
def toll_state(kinds: list[str], wounded: bool):
    from tests.games.assault_of_the_giants.helpers import U, place, resources

    s = turn(base(), "hill")
    p = seat(s, "hill")
    s = place(s, "frost_regular_3", "Delimbiyr Vale")
    s = place(s, "hill_regular_1", "Sumber Hills", wounded)
    s = resources(s, "hill", kinds)
    s, _ = act(s, p, M.PlayCommand(command="move"))
    s, _ = act(s, p, M.Maneuver(unit=U["hill_regular_1"], to=G["Delimbiyr Vale"]))
    assert s.phase == "toll"
    return s, p


def test_default_toll_pays_food_rather_than_wounding() -> None:
    from engine_core.games.assault_of_the_giants import GAME

    s, p = toll_state(["rune_haug", "food"], wounded=False)
    assert GAME.default_move(s, p) == M.PayToll(card="food")


def test_default_toll_never_kills_a_wounded_giant_when_a_card_can_pay() -> None:
    from engine_core.games.assault_of_the_giants import GAME

    s, p = toll_state(["rune_haug"], wounded=True)
    assert GAME.default_move(s, p) == M.PayToll(card="rune_haug")
    s, p = toll_state(["rune_haug"], wounded=False)
    assert GAME.default_move(s, p) == M.PayToll(card="wound")


def test_default_casualty_spares_the_leader_and_prefers_a_mere_wound() -> None:
    from engine_core.games.assault_of_the_giants import GAME
    from engine_core.games.assault_of_the_giants import data as D
    from tests.games.assault_of_the_giants.helpers import U, place

    s = turn(base(), "frost", phase="battle")
    p = seat(s, "frost")
    names = ("hill_leader", "hill_champion_1", "hill_regular_5", "hill_regular_6")
    for name in names:
        s = place(s, name, "High Moor", name == "hill_regular_6")
    h = seat(s, "hill")
    b = Battle(
        target=G["High Moor"], kind="giants", attacker=p, defender_race=D.RACE_INDEX["hill"],
        defender=h, controller=-1, step="defender_casualties",
        defenders=tuple(U[n] for n in names), damage=2,
    )  # fmt: skip
    s = replace(s, battle=b, command="attack", budget=2)
    # 2 damage: the healthy regular (F3) is only wounded; nobody is lost
    assert GAME.default_move(s, h) == M.AssignCasualty(unit=U["hill_regular_5"])
    s = replace(s, battle=replace(b, damage=9))
    # 9 damage kills whoever is chosen first: the cheapest giant goes
    assert GAME.default_move(s, h) in (
        M.AssignCasualty(unit=U["hill_regular_5"]),
        M.AssignCasualty(unit=U["hill_regular_6"]),
    )


def test_default_forced_return_gives_back_food_first() -> None:
    from engine_core.games.assault_of_the_giants import GAME
    from tests.games.assault_of_the_giants.helpers import resources

    s = turn(base(), "fire")
    p, h = seat(s, "fire"), seat(s, "hill")
    s = resources(s, "fire", ["food"])
    s = resources(s, "hill", ["rune_haug", "armament", "food"])
    s, _ = act(s, p, M.PlayCommand(command="trade"))
    s, _ = act(s, p, M.StartTrade(mode="forced", partner=h))
    s, _ = act(s, p, M.GiveCard(card="food"))
    s, _ = act(s, p, M.ConfirmTrade())
    assert GAME.awaiting(s) == (h,)
    assert GAME.default_move(s, h) == M.ReturnCard(card="food")
