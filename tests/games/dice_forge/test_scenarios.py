"""One test per numbered scenario of the rules specification, section 9."""

from __future__ import annotations

import pytest

from engine_core.decider import fold, start
from engine_core.errors import EngineError, IllegalMove
from engine_core.games.dice_forge import GAME, Options, data
from engine_core.games.dice_forge.events import (
    CardTaken,
    DiceRolled,
    ExtraActionTaken,
    FaceForged,
    FacesApplied,
    GameStarted,
    HeroOusted,
    PawnMoved,
    ResourcesGained,
    ResourcesLost,
    TurnStarted,
)
from engine_core.games.dice_forge.moves import (
    BuyFace,
    ChooseBoarBearer,
    ChooseMinorDie,
    ChooseMirror,
    ChooseOption,
    ChooseSatyrFaces,
    EndTurn,
    FinishOffering,
    ForgeFace,
    OrderFaces,
    PerformFeat,
    ShipBuy,
    SplitGain,
    UseCerberus,
    UseReinforcement,
    UseTriton,
)
from engine_core.games.dice_forge.rules import score
from engine_core.games.dice_forge.state import BlessSeat, EndOfTurn, Gain, Reinforce
from engine_core.testing import playout
from tests.games.dice_forge.helpers import (
    A,
    B,
    C,
    D,
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

LIGHT_START = ("G1",) * 5 + ("S1",)
DARK_START = ("G1",) * 4 + ("M1", "V2")


def setup_state(players: int):
    events = GAME.setup(players, Options(), b"setup")
    return fold(GAME, events[:1]), events


def count_turns(players: int) -> int:
    p = playout(GAME, players, 7)
    return sum(isinstance(e, TurnStarted) for e in p.events)


def sanctuary_size(state) -> int:
    return sum(len(pool) for pool in state.sanctuary)


def test_scenario_9_1_four_player_setup() -> None:
    state, events = setup_state(4)
    assert isinstance(events[0], GameStarted)
    assert [p.gold for p in state.players] == [3, 2, 1, 0]
    assert all((p.sun, p.moon, p.glory) == (0, 0, 0) for p in state.players)
    for p in state.players:
        assert sorted(p.dice[0]) == sorted(LIGHT_START)
        assert sorted(p.dice[1]) == sorted(DARK_START)
        assert p.pawn == data.START_PORTAL
    assert all(len(stack) == 4 for stack in state.stacks)
    assert sanctuary_size(state) == 40
    assert state.rounds == 9
    assert count_turns(4) == 36


def test_scenario_9_2_three_player_setup() -> None:
    state, _ = setup_state(3)
    assert [p.gold for p in state.players] == [3, 2, 1]
    assert all(len(stack) == 3 for stack in state.stacks)
    assert all(len(pool) == 4 for pool in state.sanctuary)
    assert state.rounds == 10
    assert count_turns(3) == 30


def test_scenario_9_3_two_player_setup() -> None:
    state, _ = setup_state(2)
    assert [p.gold for p in state.players] == [3, 2]
    assert all(len(stack) == 2 for stack in state.stacks)
    assert all(len(pool) == 2 for pool in state.sanctuary)
    assert sanctuary_size(state) == 20 and len(state.removed) == 20
    p4 = state.sanctuary[4]
    assert len(set(p4)) == 2 and set(p4) <= set(data.SANCTUARY[4].faces)
    assert state.rounds == 9
    assert count_turns(2) == 18
    # the removal is random: other entropy, other P4
    p4s = {fold(GAME, GAME.setup(2, Options(), bytes([i]) * 8)[:1]).sanctuary[4] for i in range(30)}
    assert len(p4s) > 1


def test_scenario_9_4_two_player_phase_one() -> None:
    state = fresh(2)
    state = replace(state, active=A)
    state, events = settle(state, flow=(EndOfTurn(seat=A),))
    assert state.active == B
    rolls = of(events, DiceRolled)
    assert [r.seat for r in rolls] == [B, A, B, A]
    assert all(r.dice == (0, 1) and r.reason == "blessing" for r in rolls)
    # the second round is rolled only after the first is fully resolved
    idx = [events.index(r) for r in rolls]
    gains_first = [i for i, e in enumerate(events) if isinstance(e, ResourcesGained)]
    assert sum(idx[1] < i < idx[2] for i in gains_first) == 2
    # B then does phases 2-4: B is awaited for its action
    assert GAME.awaiting(state) == (B,)
    assert EndTurn() in GAME.legal_moves(state, B)


def test_scenario_9_5_gold_overflow() -> None:
    state = with_player(fresh(2), A, gold=11)
    state, events = bless(state, A, ("G3", "V2"))
    assert state.players[A].gold == 12
    assert state.players[A].glory == 2
    (g,) = of(events, ResourcesGained)
    assert (g.gold, g.lost_gold, g.glory) == (1, 2, 2)


def test_scenario_9_6_chest_capacity() -> None:
    state = with_player(fresh(2), A, moon=8, cards=("CHEST",))
    state, events = bless(state, A, ("M2", "M1"))
    assert state.players[A].moon == 9
    assert of(events, ResourcesGained)[0].lost_moon == 2


@pytest.mark.parametrize(("option", "expect"), [("sun", (0, 6)), ("gold", (6, 1))])
def test_scenario_9_7_x3_with_a_choice_face(option: str, expect: tuple[int, int]) -> None:
    state = with_player(fresh(2), A, gold=0, sun=1)
    state, _ = bless(state, A, ("X3", "G2|S2|M2"))
    assert set(GAME.legal_moves(state, A)) == {
        ChooseOption(option="gold"), ChooseOption(option="sun"), ChooseOption(option="moon")
    }  # fmt: skip
    state, events = play(state, A, ChooseOption(option=option))
    p = state.players[A]
    assert (p.gold, p.sun) == expect
    if option == "sun":
        assert of(events, ResourcesGained)[0].lost_sun == 1


def test_scenario_9_8_two_x3() -> None:
    state = fresh(2)
    state = with_player(state, A, dice=dice("X3", "X3"))
    state, events = settle(state, flow=(BlessSeat(seat=A),))
    assert of(events, DiceRolled)[0].faces == ("X3", "X3")
    assert not of(events, ResourcesGained)
    assert (state.players[A].gold, state.players[A].glory) == (3, 0)


def test_scenario_9_9_x3_in_a_minor_blessing() -> None:
    state = with_player(fresh(2), A, cards=("HIND",), dice=(("X3",) * 6, ("G1",) * 6))
    state, _ = settle(state, flow=(Reinforce(seat=A),))
    state, events = play(state, A, UseReinforcement(card=0, option="light"))
    assert of(events, DiceRolled)[0].faces == ("X3",)
    assert not of(events, ResourcesGained)


def _show(state, seat: int, light: str, dark: str):
    return with_player(state, seat, dice=dice(light, dark), up=(0, 0))


def test_scenario_9_10_mirror_target() -> None:
    state = fresh(3)
    state = _show(state, A, "MIRROR", "G1")
    state = _show(state, B, "S2", "G3")
    state = _show(state, C, "V3", "M1")
    state = with_player(state, A, gold=0)
    state, _ = bless(state, A, ("MIRROR", "G1"))
    targets = {m.face for m in GAME.legal_moves(state, A)}
    assert targets == {"S2", "G3", "V3", "M1"}  # not A's own G1
    state, events = play(state, A, ChooseMirror(face="V3"))
    assert (state.players[A].glory, state.players[A].gold) == (3, 1)
    (applied,) = of(events, FacesApplied)
    assert applied.faces == ("V3", "G1") and applied.kind == "divine"


def test_scenario_9_11_mirror_and_x3() -> None:
    state = fresh(2)
    state = _show(state, A, "MIRROR", "X3")
    state = _show(state, B, "V3", "G1")
    state, _ = bless(state, A, ("MIRROR", "X3"))
    state, _ = play(state, A, ChooseMirror(face="V3"))
    assert state.players[A].glory == 9


def test_scenario_9_12_offering_with_distinct_faces() -> None:
    state = with_player(fresh(3), A, gold=9)
    state, _ = action(state, A)
    discard = len(state.players[A].discard)
    state, _ = play(state, A, BuyFace(face="G4"))
    state, _ = play(state, A, ForgeFace(die=0, slot=0))
    state, _ = play(state, A, BuyFace(face="S1"))
    state, _ = play(state, A, ForgeFace(die=0, slot=1))
    assert BuyFace(face="G4") not in GAME.legal_moves(state, A)
    with pytest.raises(IllegalMove):
        GAME.decide(state, A, BuyFace(face="G4"), b"x")
    state, _ = play(state, A, BuyFace(face="M1"))
    assert state.players[A].gold == 1
    state, _ = play(state, A, ForgeFace(die=1, slot=5))
    p = state.players[A]
    assert p.dice[0][:2] == ("G4", "S1") and p.dice[1][5] == "M1"
    assert len(p.discard) == discard + 3


def test_scenario_9_13_empty_pool() -> None:
    state = with_player(fresh(3), A, gold=12)
    state = replace(state, sanctuary=(*state.sanctuary[:9], ()))
    state, _ = action(state, A)
    assert BuyFace(face="V4") not in GAME.legal_moves(state, A)
    with pytest.raises(IllegalMove):
        GAME.decide(state, A, BuyFace(face="V4"), b"x")


def test_scenario_9_14_extra_action() -> None:
    state = with_player(fresh(3), A, gold=6, sun=3)
    state, _ = action(state, A)
    state, _ = play(state, A, BuyFace(face="G3"))
    state, _ = play(state, A, ForgeFace(die=0, slot=0))
    state, _ = play(state, A, FinishOffering())
    # phase 4: the extra action, paid with 2 sun
    state, events = play(state, A, BuyFace(face="G3"))
    assert of(events, ExtraActionTaken) and state.players[A].sun == 1
    state, _ = play(state, A, ForgeFace(die=0, slot=1))
    state, events = play(state, A, FinishOffering())
    # no second extra action: phase 4 is over
    assert state.flow == () and GAME.awaiting(state) == ()


def test_scenario_9_15_ousting() -> None:
    state = fresh(2)
    state = with_player(state, B, pawn=3, cards=("BEAR",), dice=dice("G1", "G1"))
    state = with_player(state, A, moon=4)
    state, _ = action(state, A)
    glory_b = state.players[B].glory
    state, events = play(state, A, PerformFeat(slot="M5"))
    assert state.players[B].pawn == data.START_PORTAL and state.players[A].pawn == 3
    (ousted,) = of(events, HeroOusted)
    assert (ousted.seat, ousted.by) == (B, A)
    rolls = [e for e in of(events, DiceRolled) if e.seat == B]
    assert len(rolls) == 1 and rolls[0].reason == "ousted"
    assert state.players[B].glory == glory_b + 3
    assert state.players[B].gold == 2 + 2
    taken = of(events, CardTaken)[0]
    assert events.index(taken) > events.index(rolls[0])
    assert events.index(taken) > max(
        events.index(e) for e in of(events, ResourcesGained) if e.seat == B
    )
    assert state.players[A].cards == ("FERRYMAN",)
    assert score(state, A) == 12


def test_scenario_9_16_same_island_feat() -> None:
    state = with_player(fresh(2), A, pawn=3, moon=5)
    state, _ = action(state, A)
    state, events = play(state, A, PerformFeat(slot="M6"))
    assert not of(events, PawnMoved) and not of(events, HeroOusted)
    assert state.gardens[0] == ("X3",) * 3
    state, _ = play(state, A, ForgeFace(die=1, slot=2))
    assert state.players[A].dice[1][2] == "X3" and state.players[A].up[1] == 2


def test_scenario_9_17_empty_stack() -> None:
    state = with_player(fresh(2), A, sun=4)
    gorgon = data.SLOT_INDEX["F5"]
    assert state.stacks[gorgon] == ("GORGON", "GORGON")
    state = replace(
        state, stacks=tuple(() if i == gorgon else s for i, s in enumerate(state.stacks))
    )
    state, _ = action(state, A)
    assert PerformFeat(slot="F5") not in GAME.legal_moves(state, A)
    with pytest.raises(IllegalMove):
        GAME.decide(state, A, PerformFeat(slot="F5"), b"x")


def test_scenario_9_18_hammer_rollover() -> None:
    state = with_player(fresh(2), A, gold=5, hammers=1, hammer_pos=13, cards=("HAMMER",))
    state, _ = settle(state, lanes=[(Gain(seat=A, gold=6),), ()])
    state, _ = play(state, A, SplitGain(hammer=4))
    p = state.players[A]
    assert (p.glory, p.hammer_pos, p.hammers, p.gold) == (10, 17, 1, 7)
    assert p.hammer_pos - data.HAMMER_PHASE == 2  # phase II, space 2


def test_scenario_9_19_hammer_completion() -> None:
    state = with_player(fresh(2), A, gold=0, hammers=1, hammer_pos=27, cards=("HAMMER",))
    state, _ = settle(state, lanes=[(Gain(seat=A, gold=6),), ()])
    assert max(m.hammer for m in GAME.legal_moves(state, A)) == 3
    state, _ = play(state, A, SplitGain(hammer=3))
    p = state.players[A]
    assert (p.glory, p.hammers, p.gold) == (15, 0, 3)


def test_scenario_9_20_elder() -> None:
    state = with_player(fresh(2), A, gold=7, cards=("ELDER", "ELDER"))
    state, _ = settle(state, flow=(Reinforce(seat=A),))
    state, _ = play(state, A, UseReinforcement(card=0))
    state, _ = play(state, A, UseReinforcement(card=1))
    assert (state.players[A].gold, state.players[A].glory) == (1, 8)
    # both used (and 1 gold left): nothing more to do, phase 2 is over
    for card in (0, 1, 2):
        with pytest.raises(EngineError):
            GAME.decide(state, A, UseReinforcement(card=card), b"x")


@pytest.mark.parametrize("owl_first", [True, False])
def test_scenario_9_21_owl_and_hind_order(owl_first: bool) -> None:
    state = with_player(fresh(2), A, sun=0, cards=("OWL", "HIND"), dice=dice("S1", "G1"))
    state, _ = settle(state, flow=(Reinforce(seat=A),))
    owl, hind = UseReinforcement(card=0, option="sun"), UseReinforcement(card=1, option="light")
    assert {owl, hind} <= set(GAME.legal_moves(state, A))
    for move in (owl, hind) if owl_first else (hind, owl):
        state, _ = play(state, A, move)
    assert state.players[A].sun == 2


def test_scenario_9_22_cancer() -> None:
    state = with_player(fresh(2), A, moon=6, dice=dice("G1", "V2"))
    state, _ = action(state, A)
    state, events = play(state, A, PerformFeat(slot="M7"))
    assert state.players[A].moon == 0
    rolls = [e for e in of(events, DiceRolled) if e.seat == A]
    assert len(rolls) == 2
    first_gain = next(e for e in of(events, ResourcesGained) if e.seat == A)
    assert events.index(rolls[0]) < events.index(first_gain) < events.index(rolls[1])
    assert state.players[A].cards == ("CANCER",) and data.CARDS["CANCER"].glory == 8
    assert state.players[A].glory == 4


def test_scenario_9_23_sphinx() -> None:
    state = with_player(fresh(2), A, sun=6, dice=dice("S1", "V2"))
    state, _ = action(state, A)
    state, _ = play(state, A, PerformFeat(slot="F7"))
    state, events = play(state, A, ChooseMinorDie(die=0))
    rolls = of(events, DiceRolled)
    assert len(rolls) == 4 and all(r.dice == (0,) and r.seat == A for r in rolls)
    assert state.players[A].sun == 4 and state.players[A].glory == 0


def test_scenario_9_24_minotaur() -> None:
    state = fresh(2)
    state = with_player(state, B, gold=2, moon=0, dice=dice("G3", "M1"))
    state = with_player(state, A, sun=3)
    state, _ = action(state, A)
    before = state.players[A]
    state, events = play(state, A, PerformFeat(slot="F4"))
    assert (state.players[B].gold, state.players[B].moon) == (0, 0)
    assert of(events, ResourcesLost)[0].gold == 2
    after = state.players[A]
    assert (after.gold, after.moon, after.glory) == (before.gold, before.moon, before.glory)


def test_scenario_9_25_satyrs() -> None:
    state = fresh(3)
    state = with_player(state, B, dice=dice("X3", "G1"))
    state = with_player(state, C, dice=dice("V3", "M1"))
    state = with_player(state, A, moon=3)
    state, _ = action(state, A)
    others = [(p.gold, p.sun, p.moon, p.glory) for p in state.players[1:]]
    state, _ = play(state, A, PerformFeat(slot="M4"))
    state, _ = play(state, A, ChooseSatyrFaces(first=(B, 0), second=(C, 0)))
    assert state.players[A].glory == 9
    assert [(p.gold, p.sun, p.moon, p.glory) for p in state.players[1:]] == others


def test_scenario_9_26_cerberus() -> None:
    state = with_player(fresh(2), A, cerberus=1, gold=0)
    state, _ = bless(state, A, ("G1|S1|M1", "V2"), cerberus=True)
    state, _ = play(state, A, ChooseOption(option="sun"))
    assert (state.players[A].sun, state.players[A].glory) == (1, 2)
    state, _ = play(state, A, UseCerberus(use=True))
    state, _ = play(state, A, ChooseOption(option="moon"))
    p = state.players[A]
    assert (p.sun, p.moon, p.glory, p.cerberus) == (1, 1, 4, 0)


def test_scenario_9_27_triton() -> None:
    state = with_player(fresh(3), A, triton=1, sun=1, gold=2)
    state, _ = action(state, A)
    state, _ = play(state, A, BuyFace(face="M1"))
    state, _ = play(state, A, ForgeFace(die=1, slot=0))
    state, _ = play(state, A, FinishOffering())
    # phase 4 with 1 sun: only the Triton can make the extra action possible
    assert set(GAME.legal_moves(state, A)) == {EndTurn()} | {
        UseTriton(option=o) for o in ("gold", "sun", "moon")
    }
    state, _ = play(state, A, UseTriton(option="sun"))
    assert state.players[A].sun == 3 and state.players[A].triton == 0
    assert PerformFeat(slot="F1") in GAME.legal_moves(state, A)


def test_scenario_9_28_tenacious_boar() -> None:
    state = fresh(2, Options(cards="alternate"))
    state = with_player(state, A, moon=3)
    state, _ = action(state, A)
    state, _ = play(state, A, PerformFeat(slot="M4"))
    assert state.players[A].cards == ("BOAR_RED",)
    assert GAME.legal_moves(state, A) == (ChooseBoarBearer(seat=B),)
    state, _ = play(state, A, ChooseBoarBearer(seat=B))
    assert GAME.awaiting(state) == (B,)
    state, _ = play(state, B, ForgeFace(die=0, slot=3))
    assert state.players[B].dice[0][3] == "BOAR_RED"
    # later: B applies the face; B gains 1 sun or moon, A 1 sun, 1 moon or 3 glory
    glory_a, sun_b = state.players[A].glory, state.players[B].sun
    state, _ = bless(state, B, ("BOAR_RED", "G1"))
    state, _ = play(state, B, ChooseOption(option="sun"))
    assert set(GAME.awaiting(state)) == {A}
    state, _ = play(state, A, ChooseOption(option="glory"))
    assert state.players[B].sun == sun_b + 1 and state.players[A].glory == glory_a + 3
    # B can never forge over it
    state, _ = action(state, B)
    state = with_player(state, B, gold=4)
    state, _ = action(state, B)
    state, _ = play(state, B, BuyFace(face=state.sanctuary[1][0]))
    assert ForgeFace(die=0, slot=3) not in GAME.legal_moves(state, B)
    assert len(GAME.legal_moves(state, B)) == 11


@pytest.mark.parametrize(("other", "expect"), [("S2", (0, 2, 0, 5)), ("G3", (3, 2, 0, 0))])
def test_scenario_9_29_shield(other: str, expect: tuple[int, ...]) -> None:
    state = with_player(fresh(2), A, gold=0)
    state, _ = bless(state, A, ("SHIELD_SUN", other))
    p = state.players[A]
    assert (p.gold, p.sun, p.moon, p.glory) == expect


def test_scenario_9_30_ship() -> None:
    state = with_player(fresh(2, seed=b"full"), A, gold=2)
    state = replace(state, sanctuary=tuple(p.faces for p in data.SANCTUARY))
    state, _ = bless(state, A, ("SHIP", "G6"))
    state, _ = play(state, A, OrderFaces(ship_first=False))
    assert state.players[A].gold == 8
    state, events = play(state, A, ShipBuy(face="S2"))
    assert state.players[A].gold == 2
    state, events = play(state, A, ForgeFace(die=0, slot=0))
    assert of(events, FaceForged)[0].face == "S2"
    assert state.players[A].dice[0][0] == "S2"


def test_scenario_9_31_typhon() -> None:
    state = fresh(2, Options(cards="alternate"))
    state = with_player(state, A, sun=5, moon=5, discard=("G1",) * 9)
    state, _ = action(state, A)
    state, _ = play(state, A, PerformFeat(slot="M8"))
    assert state.players[A].glory == 9
    assert state.players[A].cards == ("TYPHON",) and score(state, A) == 9 + 16


def test_scenario_9_32_end_and_tie() -> None:
    state = fresh(4)
    state = replace(state, round=9, active=D)
    state = with_player(state, A, glory=120, cards=("HYDRA", "CHEST", "WILD_SPIRITS"))
    state = with_player(state, B, glory=110, cards=("HYDRA", "GORGON"))
    state, _ = settle(state, flow=(EndOfTurn(seat=D),))
    out = GAME.outcome(state)
    assert out is not None
    assert out.scores[:2] == (150.0, 150.0) and out.ranks[:2] == (1, 1)
    assert out.ranks[2:] == (3, 3)
    assert GAME.awaiting(state) == ()


def test_scenario_9_33_glory_over_100() -> None:
    state = with_player(fresh(2), A, glory=98)
    state, _ = settle(state, lanes=[(Gain(seat=A, glory=4),), ()])
    assert state.players[A].glory == 102


def test_setup_is_reproducible() -> None:
    a, ea = start(GAME, 2, Options(), b"s")
    b, eb = start(GAME, 2, Options(), b"s")
    assert ea == eb and a == b
