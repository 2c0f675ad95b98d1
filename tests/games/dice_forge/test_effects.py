"""Card and face effects of spec section 5 beyond the numbered scenarios."""

from __future__ import annotations

import pytest

from engine_core.errors import IllegalMove
from engine_core.games.dice_forge import GAME, Options, data
from engine_core.games.dice_forge.events import (
    DiceRolled,
    FaceBought,
    HammerAdvanced,
    MirrorCopied,
    ResourcesGained,
)
from engine_core.games.dice_forge.moves import (
    BuyFace,
    ChooseBoarBearer,
    ChooseMinorDie,
    ChooseMirror,
    ChooseOption,
    ChooseShield,
    EndTurn,
    FinishOffering,
    ForgeFace,
    OrderFaces,
    PerformFeat,
    ShipBuy,
    ShipPass,
    SplitGain,
    UseCerberus,
    UseReinforcement,
    UseTriton,
)
from engine_core.games.dice_forge.state import (
    BoarReward,
    CerberusOffer,
    Gain,
    PlaceFace,
    Reinforce,
)
from tests.games.dice_forge.helpers import (
    A,
    B,
    C,
    action,
    bless,
    dice,
    fresh,
    of,
    play,
    replace,
    settle,
    with_player,
)

ALT = Options(cards="alternate")


def full_sanctuary(state):
    return replace(state, sanctuary=tuple(p.faces for p in data.SANCTUARY))


def res(state, seat):
    p = state.players[seat]
    return (p.gold, p.sun, p.moon, p.glory)


# ------------------------------------------------------------------ faces
def test_two_mirrors_copy_independently() -> None:
    state = fresh(2)
    state = with_player(state, B, dice=dice("V3", "M1"), up=(0, 0))
    state = with_player(state, A, gold=0)
    state, _ = bless(state, A, ("MIRROR", "MIRROR"))
    state, _ = play(state, A, ChooseMirror(face="V3"))
    state, _ = play(state, A, ChooseMirror(face="M1"))
    assert res(state, A) == (0, 0, 1, 3)


def test_mirror_widens_when_an_opponent_shows_a_mirror() -> None:
    state = fresh(2)
    state = with_player(state, B, dice=dice("MIRROR", "M1"), up=(0, 0))
    state = with_player(state, A, dice=dice("MIRROR", "V4"), up=(0, 0))
    state, _ = bless(state, A, ("MIRROR", "V4"))
    assert {m.face for m in GAME.legal_moves(state, A)} == {"M1", "V4"}


def test_mirror_with_nothing_to_copy_yields_nothing() -> None:
    state = fresh(2)
    state = with_player(state, B, dice=dice("MIRROR", "MIRROR"), up=(0, 0))
    state = with_player(state, A, dice=dice("MIRROR", "MIRROR"), up=(0, 0))
    before = res(state, A)
    state, events = bless(state, A, ("MIRROR", "MIRROR"))
    assert not of(events, MirrorCopied) and res(state, A) == before


def test_mirror_with_one_target_copies_it_without_asking() -> None:
    state = fresh(2)
    state = with_player(state, B, dice=dice("V3", "V3"), up=(0, 0))
    state, events = bless(state, A, ("MIRROR", "G1"))
    assert [e.face for e in of(events, MirrorCopied)] == ["V3"]
    assert GAME.awaiting(state) == ()


def test_ship_with_x3_costs_six_less() -> None:
    state = full_sanctuary(with_player(fresh(2), A, gold=2))
    state, _ = bless(state, A, ("SHIP", "X3"))
    assert ShipBuy(face="V3") in GAME.legal_moves(state, A)  # 8 - 6 = 2
    assert ShipBuy(face="V4") not in GAME.legal_moves(state, A)
    state, events = play(state, A, ShipBuy(face="V3"))
    assert of(events, FaceBought)[0].cost == 2


def test_ship_may_be_used_first_and_passed() -> None:
    state = full_sanctuary(with_player(fresh(2), A, gold=11))
    state, _ = bless(state, A, ("SHIP", "G6"))
    state, _ = play(state, A, OrderFaces(ship_first=True))
    assert ShipPass() in GAME.legal_moves(state, A)
    state, _ = play(state, A, ShipBuy(face="V4"))  # 12 - 2 = 10
    state, _ = play(state, A, ForgeFace(die=0, slot=0))
    assert state.players[A].gold == 1 + 6


def test_shield_with_x3_gives_its_fallback_three_times() -> None:
    state = with_player(fresh(2), A, gold=0)
    state, _ = bless(state, A, ("SHIELD_GOLD", "X3"))
    assert res(state, A) == (9, 0, 0, 0)


def test_shield_follows_the_option_chosen() -> None:
    state = with_player(fresh(2), A, gold=0)
    state, _ = bless(state, A, ("SHIELD_MOON", "G1|S1|M1"))
    state, _ = play(state, A, ChooseOption(option="moon"))
    assert res(state, A) == (0, 0, 1, 5)


def test_two_shields_give_both_fallbacks() -> None:
    state = with_player(fresh(2), A, gold=0)
    state, _ = bless(state, A, ("SHIELD_GLORY", "SHIELD_SUN"))
    assert res(state, A) == (0, 2, 0, 3)


def test_shield_in_a_minor_blessing_gives_its_fallback() -> None:
    state = with_player(fresh(2), A, gold=0)
    state, _ = bless(state, A, ("SHIELD_GLORY",), kind="minor")
    assert res(state, A) == (0, 0, 0, 3)


def test_boar_with_x3_rewards_the_owner_three_times() -> None:
    state = with_player(fresh(2), A, cards=("BOAR_RED",), gold=0)
    state, _ = bless(state, B, ("BOAR_RED", "X3"))
    state, _ = play(state, B, ChooseOption(option="moon"))
    assert state.players[B].moon == 3
    assert [type(t) for t in state.lanes[A]] == [BoarReward] * 3
    for option in ("sun", "moon", "glory"):
        state, _ = play(state, A, ChooseOption(option=option))
    assert res(state, A) == (0, 1, 1, 3)


def test_boar_under_minotaur_costs_the_bearer_but_rewards_the_owner() -> None:
    state = fresh(2, ALT)
    state = with_player(state, A, cards=("BOAR_RED",), gold=0, sun=3)
    state = with_player(state, B, dice=dice("BOAR_RED", "G1"), sun=2, gold=1)
    state = replace(
        state,
        cards=tuple("MINOTAUR" if c == "SHIELD_CARD" else c for c in state.cards),
        stacks=tuple(
            ("MINOTAUR",) * 2 if c == "SHIELD_CARD" else s
            for c, s in zip(state.cards, state.stacks, strict=True)
        ),
    )
    state, _ = action(state, A)
    state, _ = play(state, A, PerformFeat(slot="F4"))
    assert set(GAME.awaiting(state)) == {B}
    state, _ = play(state, B, ChooseOption(option="sun"))
    assert res(state, B)[:2] == (0, 1)
    state, _ = play(state, A, ChooseOption(option="glory"))
    assert state.players[A].glory == 3


def test_minotaur_x3_triples_the_loss_and_ships_do_nothing() -> None:
    state = with_player(fresh(2), B, gold=10)
    state, _ = bless(state, B, ("G3", "X3"), kind="minotaur")
    assert state.players[B].gold == 1
    state, _ = bless(state, B, ("SHIP", "G1"), kind="minotaur")
    assert state.players[B].gold == 0 and GAME.awaiting(state) == ()


def test_minotaur_shield_loses_five_glory_when_the_other_face_matches() -> None:
    state = with_player(fresh(2), B, glory=7, sun=4)
    state, _ = bless(state, B, ("SHIELD_SUN", "S1"), kind="minotaur")
    assert res(state, B)[1:] == (3, 0, 2)


def test_cerberus_repeats_the_faces_as_rolled_after_a_forge_over_them() -> None:
    state = full_sanctuary(with_player(fresh(2), A, gold=0, cerberus=1))
    state = with_player(state, A, dice=dice("SHIP", "G6"))
    state, _ = bless(state, A, ("SHIP", "G6"), cerberus=True)
    state, _ = play(state, A, OrderFaces(ship_first=False))
    state, _ = play(state, A, ShipBuy(face="G4"))  # 3 - 2 = 1
    state, _ = play(state, A, ForgeFace(die=0, slot=0))  # over the rolled Ship
    assert state.players[A].dice[0][0] == "G4"
    assert isinstance(state.lanes[A][0], CerberusOffer)
    state, _ = play(state, A, UseCerberus(use=True))
    # the repeat is the Ship and G6 again
    assert OrderFaces(ship_first=False) in GAME.legal_moves(state, A)


def test_cerberus_is_not_offered_for_satyrs_or_minotaur() -> None:
    state = with_player(fresh(2), A, cerberus=1)
    state, _ = bless(state, A, ("V2", "G1"), kind="satyrs")
    assert GAME.awaiting(state) == ()
    state, _ = bless(state, A, ("V2", "G1"), kind="minotaur")
    assert GAME.awaiting(state) == ()


# ------------------------------------------------------------------ hammer, conversions
def test_gold_overflows_from_phase_one_into_a_second_hammer() -> None:
    state = with_player(fresh(2), A, gold=0, hammers=2, hammer_pos=28, cards=("HAMMER",) * 2)
    state, _ = settle(state, lanes=[(Gain(seat=A, gold=12),), ()])
    assert max(m.hammer for m in GAME.legal_moves(state, A)) == 12
    state, events = play(state, A, SplitGain(hammer=12))
    p = state.players[A]
    assert (p.hammers, p.hammer_pos, p.glory) == (1, 10, 15)
    assert of(events, HammerAdvanced)[0].completed == 1


def test_sentinel_converts_shards_to_two_glory_each() -> None:
    state = with_player(fresh(2), A, gold=0)
    state, _ = bless(state, A, ("S2", "M2"), mod="sentinel")
    assert len(GAME.legal_moves(state, A)) == 9
    state, _ = play(state, A, SplitGain(sun_glory=2, moon_glory=1))
    assert res(state, A) == (0, 0, 1, 6)


def test_cyclops_converts_gold_and_shares_it_with_the_hammer() -> None:
    state = with_player(fresh(2), A, gold=0, hammers=1, cards=("HAMMER",))
    state, _ = bless(state, A, ("G6",), kind="minor", mod="cyclops")
    state, _ = play(state, A, SplitGain(hammer=2, gold_glory=3))
    assert res(state, A) == (1, 0, 0, 3) and state.players[A].hammer_pos == 2


def test_sphinx_and_cyclops_roll_four_minor_blessings() -> None:
    state = fresh(2, ALT)
    state = with_player(state, A, sun=6, gold=0, dice=dice("G3", "V2"))
    state, _ = action(state, A)
    state, _ = play(state, A, PerformFeat(slot="F7"))
    state, events = play(state, A, ChooseMinorDie(die=0))
    assert len(of(events, DiceRolled)) == 1  # waits for the first conversion
    total_glory = 0
    for _ in range(4):
        state, _ = play(state, A, SplitGain(gold_glory=3))
        total_glory += 3
    assert state.players[A].glory == total_glory and state.players[A].gold == 0


# ------------------------------------------------------------------ cards
@pytest.mark.parametrize(("slot", "face"), [("M6", "X3"), ("F6", "MIRROR")])
def test_garden_feats_forge_their_face(slot: str, face: str) -> None:
    state = with_player(fresh(2), A, moon=5, sun=5)
    state, _ = action(state, A)
    state, _ = play(state, A, PerformFeat(slot=slot))
    assert GAME.legal_moves(state, A)[0] == ForgeFace(die=0, slot=0)
    state, _ = play(state, A, ForgeFace(die=1, slot=4))
    assert state.players[A].dice[1][4] == face


def test_celestial_ship_and_guardian_shield() -> None:
    state = with_player(fresh(2, ALT), A, sun=5)
    state, _ = action(state, A)
    state, _ = play(state, A, PerformFeat(slot="F3"))
    state, _ = play(state, A, ForgeFace(die=0, slot=0))
    assert state.players[A].dice[0][0] == "SHIP"
    state = with_player(state, A, sun=5)
    state, _ = action(state, A)
    state, _ = play(state, A, PerformFeat(slot="F4"))
    assert {m.face for m in GAME.legal_moves(state, A)} == set(data.SHIELD_FACES)
    state, _ = play(state, A, ChooseShield(face="SHIELD_GLORY"))
    state, _ = play(state, A, ForgeFace(die=0, slot=1))
    assert state.players[A].dice[0][1] == "SHIELD_GLORY"
    assert "SHIELD_GLORY" not in state.gardens[3]


def test_boar_bearer_is_another_player_and_colours_follow_the_stack() -> None:
    state = fresh(3, ALT)
    assert state.stacks[data.SLOT_INDEX["M4"]] == ("BOAR_RED", "BOAR_YELLOW", "BOAR_GREEN")
    state = with_player(state, A, moon=3)
    state, _ = action(state, A)
    state, _ = play(state, A, PerformFeat(slot="M4"))
    assert set(GAME.legal_moves(state, A)) == {ChooseBoarBearer(seat=B), ChooseBoarBearer(seat=C)}


def test_cerberus_and_triton_cards_give_tokens() -> None:
    state = with_player(fresh(2, ALT), A, moon=4, sun=4)
    state, _ = action(state, A)
    state, _ = play(state, A, PerformFeat(slot="M5"))
    assert state.players[A].cerberus == 1
    state, _ = action(state, A)
    state, _ = play(state, A, PerformFeat(slot="F5"))
    assert state.players[A].triton == 1


def test_triton_gold_may_go_onto_the_hammer() -> None:
    state = with_player(fresh(2), A, triton=1, gold=0, hammers=1, cards=("HAMMER",))
    state, _ = action(state, A)
    state, _ = play(state, A, UseTriton(option="gold"))
    state, _ = play(state, A, SplitGain(hammer=6))
    assert state.players[A].hammer_pos == 6 and state.players[A].gold == 0


def test_wild_spirits_and_the_bear_for_the_ouster() -> None:
    state = fresh(2, ALT)
    state = with_player(state, B, pawn=7)
    state = with_player(state, A, sun=1, cards=("BEAR", "BEAR"), gold=0, moon=0)
    state, _ = action(state, A)
    state, events = play(state, A, PerformFeat(slot="F2"))
    bear = [e for e in of(events, ResourcesGained) if e.source == "bear"]
    assert [(e.seat, e.glory) for e in bear] == [(A, 6)]
    assert res(state, A) == (3, 0, 3, 6)


def test_elder_needs_three_gold_in_the_reserve() -> None:
    state = with_player(fresh(2), A, gold=2, cards=("ELDER", "OWL"))
    state, _ = settle(state, flow=(Reinforce(seat=A),))
    with pytest.raises(IllegalMove):
        GAME.decide(state, A, UseReinforcement(card=0), b"x")


def test_owl_gold_with_a_hammer_is_split() -> None:
    state = with_player(fresh(2), A, gold=0, cards=("OWL", "HAMMER"), hammers=1)
    state, _ = settle(state, flow=(Reinforce(seat=A),))
    state, _ = play(state, A, UseReinforcement(card=0, option="gold"))
    assert set(GAME.legal_moves(state, A)) == {SplitGain(hammer=0), SplitGain(hammer=1)}


def test_extra_action_needs_a_phase_three_action_and_sun_beyond_the_cost() -> None:
    state = with_player(fresh(2), A, sun=3, gold=0)
    state, _ = action(state, A)
    state, _ = play(state, A, EndTurn())
    assert state.flow == ()  # passing phase 3 also ends phase 4
    state = with_player(fresh(2), A, sun=4, gold=2)
    state, _ = action(state, A)
    state, _ = play(state, A, BuyFace(face=state.sanctuary[1][0]))
    state, _ = play(state, A, ForgeFace(die=0, slot=0))
    assert GAME.awaiting(state) == (A,)
    moves = GAME.legal_moves(state, A)
    assert PerformFeat(slot="F3") in moves  # 2 + 2 sun
    assert PerformFeat(slot="F4") not in moves  # 3 + 2 > 4


def test_offering_may_buy_several_faces_of_one_mixed_pool() -> None:
    state = full_sanctuary(with_player(fresh(3), A, gold=12))
    state, _ = action(state, A)
    state, _ = play(state, A, BuyFace(face="G6"))
    state, _ = play(state, A, ForgeFace(die=0, slot=0))
    assert BuyFace(face="S1+V1") in GAME.legal_moves(state, A)
    assert FinishOffering() in GAME.legal_moves(state, A)


def test_a_boar_face_cannot_be_covered() -> None:
    state = with_player(fresh(2), A, dice=(("BOAR_RED",) * 5 + ("G1",), ("G1",) * 6))
    state, _ = settle(state, flow=(PlaceFace(seat=A, face="V3"),))
    assert ForgeFace(die=0, slot=0) not in GAME.legal_moves(state, A)
    assert ForgeFace(die=0, slot=5) in GAME.legal_moves(state, A)


def test_default_move_forges_over_the_least_valuable_face() -> None:
    light = ("V4", "G6", "S2", "G1", "M2", "X3")
    state = with_player(fresh(2), A, dice=(light, ("V3",) * 5 + ("V2",)))
    state, _ = settle(state, flow=(PlaceFace(seat=A, face="G4"),))
    assert GAME.default_move(state, A) == ForgeFace(die=0, slot=3)
