"""The rule scenarios of spec §9, one test each, named after its number.

G = seat 0 (Forces of Good), E = seat 1 (Forces of Evil). Unless a test says
otherwise it is the card phase of the player whose dice are listed, all three
Wild Cards lie in the middle, and window skipping is on.
"""

from __future__ import annotations

import pytest

from engine_core.errors import IllegalMove
from engine_core.games.dwarves_duel import GAME
from engine_core.games.dwarves_duel.events import (
    CardDefeated,
    DiceRolled,
    GameEnded,
    WindowOpened,
)
from engine_core.games.dwarves_duel.moves import (
    ActivateAlly,
    DrawCards,
    EndDicePhase,
    EndTurn,
    KingConvert,
    Pass,
    PlayCard,
    PlayTwist,
    RerollDie,
    RollDice,
)
from engine_core.games.dwarves_duel.state import CARD, CP2, DEFEND, DICE_PHASE, DRAW, PREROLL
from tests.games.dwarves_duel.helpers import (
    E,
    G,
    entropy_for,
    faces,
    make_state,
    play,
    types,
    used,
)


def display(state, seat):
    return [dc.card for dc in state.players[seat].display]


def damage(state, seat, card):
    return next(dc.damage for dc in state.players[seat].display if dc.card == card)


def rejected(state, seat, move, code=None):
    with pytest.raises(IllegalMove) as err:
        GAME.decide(state, seat, move, b"x")
    assert move not in GAME.legal_moves(state, seat)
    if code is not None:
        assert err.value.code == code
    return err.value


def own_turn_by_default(state, seat):
    """Play ``seat``'s turn with default moves until the other seat's draw phase."""
    while not (state.active != seat and state.phase == DRAW):
        who = GAME.awaiting(state)[0]
        state, _ = play(state, who, GAME.default_move(state, who))
    return state


def test_scenario_9_1_seed_example_full_use():
    s = make_state(dice="111", g_hand=["G01"], e_pile=20)
    e_hand = s.players[E].hand
    s, _ = play(s, G, PlayCard(card="G01", payment=("d0",)))
    s, _ = play(s, G, ActivateAlly(ally="G01", unit="d1", target="PILE"))
    s, _ = play(s, G, ActivateAlly(ally="G01", unit="d2", target="PILE"))
    assert display(s, G) == ["G01"]
    assert used(s) == "xxx"
    assert len(s.players[E].pile) == 18
    assert len(s.players[E].discard) == 2  # face up, no effect
    assert s.players[E].hand == e_hand and s.players[E].display == ()


def test_scenario_9_2_seed_example_one_matching_die():
    s = make_state(dice="145", g_hand=["G01"])
    s, _ = play(s, G, PlayCard(card="G01", payment=("d0",)))
    assert display(s, G) == ["G01"]
    rejected(s, G, ActivateAlly(ally="G01", unit="d1", target="PILE"), "unit_does_not_match")
    assert not any(isinstance(m, ActivateAlly) for m in GAME.legal_moves(s, G))


def test_scenario_9_3_wild_face_on_a_single_value_cost():
    s = make_state(dice="W33", g_hand=["G01"])
    s, _ = play(s, G, PlayCard(card="G01", payment=("d0",)))
    assert display(s, G) == ["G01"]
    assert used(s) == "x--"


def test_scenario_9_4_three_of_a_kind_with_a_wild_face():
    s = make_state(dice="44W", g_hand=["G06"])
    after, _ = play(s, G, PlayCard(card="G06", payment=("d0", "d1", "d2")))
    assert display(after, G) == ["G06"]
    s = make_state(dice="445", g_hand=["G06"])
    rejected(s, G, PlayCard(card="G06", payment=("d0", "d1", "d2")), "wrong_payment")


def test_scenario_9_5_wild_card_in_a_payment():
    s = make_state(dice="4W2", g_hand=["G14"], g_wild=1)
    assert s.middle_wild == 2
    s, _ = play(s, G, PlayCard(card="G14", payment=("d0", "d1", "WILD")))
    assert display(s, G) == ["G14"]
    assert s.players[G].wild == 0 and s.middle_wild == 3
    assert used(s) == "xx-"


def test_scenario_9_6_no_overpaying():
    s = make_state(dice="113", g_hand=["G01"])
    rejected(s, G, PlayCard(card="G01", payment=("d0", "d1")), "wrong_payment")


def test_scenario_9_7_damage_below_hp_regenerates():
    s = make_state(dice="442", e_display=["E04"], g_display=["G04"])
    s, _ = play(s, G, ActivateAlly(ally="G04", unit="d0", target="E04"))
    s, _ = play(s, G, ActivateAlly(ally="G04", unit="d1", target="E04"))
    assert damage(s, E, "E04") == 2
    s, _ = play(s, G, EndTurn())
    assert damage(s, E, "E04") == 0
    s = own_turn_by_default(s, E)  # E's whole turn
    s, _ = play(s, G, DrawCards(count=1))
    s, _ = play(s, G, RollDice())
    from msgspec.structs import replace

    from engine_core.games.dwarves_duel.state import Die

    s = replace(s, dice=(Die(face="4"), *s.dice[1:]))  # G's next turn: one 4
    s, _ = play(s, G, EndDicePhase())
    s, _ = play(s, G, ActivateAlly(ally="G04", unit="d0", target="E04"))
    assert damage(s, E, "E04") == 1
    assert "E04" in display(s, E)


def test_scenario_9_8_defeat_across_two_allies_in_one_turn():
    s = make_state(dice="122", g_display=["G01", "G02"], e_display=["E12"])
    s, _ = play(s, G, ActivateAlly(ally="G01", unit="d0", target="E12"))
    s, events = play(s, G, ActivateAlly(ally="G02", unit="d1", target="E12"))
    assert CardDefeated(seat=E, card="E12") in events
    assert display(s, E) == [] and s.players[E].discard == ("E12",)
    assert ActivateAlly(ally="G02", unit="d2", target="PILE") in GAME.legal_moves(s, G)
    s, _ = play(s, G, ActivateAlly(ally="G02", unit="d2", target="PILE"))
    assert len(s.players[E].discard) == 2


def test_scenario_9_9_supports_cannot_be_damaged_begone_removes_them():
    s = make_state(dice="555", e_display=["E23"], g_display=["G05"], g_hand=["G25"])
    rejected(s, G, ActivateAlly(ally="G05", unit="d0", target="E23"), "bad_target")
    assert used(s) == "---"
    s, _ = play(s, G, PlayCard(card="G25", payment=("d0", "d1", "d2"), target="E23"))
    assert display(s, E) == [] and s.players[E].discard == ("E23",)
    assert s.players[G].discard == ("G25",)


def test_scenario_9_10_wild_card_for_a_turn_without_dice():
    s = make_state(dice="245", g_hand=["G32", "G06", "G14"])
    s, _events = play(s, G, PlayTwist(card="G32", target="PILE"))
    assert len(s.players[E].discard) == 1
    s, _ = play(s, G, EndTurn())
    assert s.players[G].wild == 1 and s.middle_wild == 2
    assert s.active == E and s.phase == DRAW


def test_scenario_9_11_middle_empty_take_from_the_opponent():
    s = make_state(dice="245", e_wild=3)
    assert s.middle_wild == 0
    s, _ = play(s, G, EndTurn())
    assert s.players[G].wild == 1 and s.players[E].wild == 2


def test_scenario_9_12_holding_all_three():
    s = make_state(dice="245", g_wild=3)
    s, events = play(s, G, EndTurn())
    assert (s.players[G].wild, s.middle_wild, s.players[E].wild) == (3, 0, 0)
    assert "WildCardTaken" not in types(events)


def test_scenario_9_13_spending_a_wild_card_counts_as_using_a_die():
    s = make_state(dice="234", g_hand=["G01"], g_wild=1)
    s, _ = play(s, G, PlayCard(card="G01", payment=("WILD",)))
    s, _ = play(s, G, EndTurn())
    assert s.players[G].wild == 0 and s.middle_wild == 3


def test_scenario_9_14_dice_cap():
    s = make_state(phase=PREROLL, g_display=["G18", "G19", "G20"], g_hand=["G31"])
    s, _ = play(s, G, PlayTwist(card="G31"))
    assert s.players[G].pending_extra_dice == 1
    s, events = play(s, G, RollDice())
    rolled = [e for e in events if isinstance(e, DiceRolled)]
    assert len(rolled[0].faces) == 6  # min(6, 3 + 3 + 2)
    assert s.players[G].pending_extra_dice == 0


def test_scenario_9_15_andokais_power_only_on_your_own_turn():
    s = make_state(active=E, dice="155", e_display=["E01"], g_hand=["G31", "G34"])
    s, _ = play(s, E, ActivateAlly(ally="E01", unit="d0", target="PILE"))
    assert GAME.awaiting(s) == (G,)
    assert s.windows[-1].kind == DEFEND and s.windows[-1].holder == G
    rejected(s, G, PlayTwist(card="G31"), "own_turn_only")
    legal = GAME.legal_moves(s, G)
    assert PlayTwist(card="G34") in legal and Pass() in legal


def test_scenario_9_16_andokais_power_played_in_the_card_phase():
    s = make_state(dice="123", g_hand=["G31"], turn=5)
    s, _ = play(s, G, PlayTwist(card="G31"))
    assert faces(s) == "123..."  # this turn's dice are unchanged
    assert s.players[G].pending_extra_dice == 1
    s, _ = play(s, G, EndTurn())
    s = own_turn_by_default(s, E)  # turn 6
    assert s.turn == 7 and s.active == G
    s, _ = play(s, G, DrawCards(count=1))
    s, events = play(s, G, RollDice())
    assert len(events[0].faces) == 5  # 3 + 2


def test_scenario_9_17_both_rerolls_on_one_die():
    s = make_state(active=E, phase=DICE_PHASE, dice="12W", e_display=["E23", "E24"])
    s, _ = play(s, E, RerollDie(die="d0", source="E23"), entropy_for("3"))
    assert faces(s) == "32W..."
    s, _ = play(s, E, RerollDie(die="d0", source="E24"), entropy_for("5"))
    assert faces(s) == "52W..."
    assert not any(isinstance(m, RerollDie) for m in GAME.legal_moves(s, E))


def test_scenario_9_18_rerolls_only_in_the_dice_phase():
    s = make_state(active=E, phase=DICE_PHASE, dice="12W", e_display=["E23"])
    s, _ = play(s, E, EndDicePhase())
    assert s.phase == CARD
    rejected(s, E, RerollDie(die="d0", source="E23"), "wrong_phase")


def test_scenario_9_19_optional_extra_draw():
    s = make_state(phase=DRAW, g_display=["G21"], g_pile=10)
    hand = len(s.players[G].hand)
    legal = GAME.legal_moves(s, G)
    assert DrawCards(count=1) in legal and DrawCards(count=2) in legal
    rejected(s, G, DrawCards(count=3), "bad_count")
    s, _ = play(s, G, DrawCards(count=2))
    assert len(s.players[G].hand) == hand + 2 and len(s.players[G].pile) == 8


def test_scenario_9_20_seed_note_sniping_the_king():
    s = make_state(active=E, dice="331", e_hand=["E09", "E34"], g_hand=["G32", "G33"])
    s, events = play(s, E, PlayCard(card="E09", payment=("d0", "d1")))
    assert WindowOpened(kind=CP2, holder=G) in events
    assert GAME.awaiting(s) == (G,)
    s, events = play(s, G, PlayTwist(card="G32", target="E09"))
    assert GAME.awaiting(s) == (E,) and s.windows[-1].kind == DEFEND
    s, events = play(s, E, PlayTwist(card="E34"))
    # E's window closed by itself; control is back in G's CP2 window.
    assert [w.kind for w in s.windows] == [CP2] and GAME.awaiting(s) == (G,)
    assert display(s, E) == ["E09"] and damage(s, E, "E09") == 0
    s, events = play(s, G, PlayTwist(card="G33", target="E09"))
    assert not any(isinstance(e, WindowOpened) for e in events)  # none for E
    assert CardDefeated(seat=E, card="E09") in events
    assert display(s, E) == [] and s.players[E].discard[-1] == "E09"
    assert s.windows == () and GAME.awaiting(s) == (E,) and s.phase == CARD
    assert used(s) == "xx-"
    assert not s.king_used
    assert not any(isinstance(m, KingConvert) for m in GAME.legal_moves(s, E))


def test_scenario_9_21_chain_mail_protects_the_draw_pile():
    s = make_state(active=E, dice="155", e_display=["E01"], g_pile=12, g_hand=["G34"])
    s, _ = play(s, E, ActivateAlly(ally="E01", unit="d0", target="PILE"))
    s, _ = play(s, G, PlayTwist(card="G34"))
    assert len(s.players[G].pile) == 12
    assert s.players[G].discard == ("G34",)
    assert used(s) == "x--"
    assert s.windows == () and GAME.awaiting(s) == (E,)


def test_scenario_9_22_non_exclusive_or():
    s = make_state(dice="23W4", g_display=["G06"])
    rejected(s, G, ActivateAlly(ally="G06", unit="d3", target="PILE"), "unit_does_not_match")
    for die in ("d0", "d1", "d2"):
        s, _ = play(s, G, ActivateAlly(ally="G06", unit=die, target="PILE"))
    assert len(s.players[E].discard) == 3 and len(s.players[E].pile) == 17


def test_scenario_9_23_dwarf_king_conversion():
    s = make_state(dice="135", g_display=["G09"], g_hand=["G23"])
    s, _ = play(s, G, KingConvert(die="d2"))
    assert faces(s) == "13W..."
    s, _ = play(s, G, PlayCard(card="G23", payment=("d1", "d2")))
    assert display(s, G) == ["G09", "G23"]
    assert used(s) == "-xx"
    rejected(s, G, KingConvert(die="d0"), "king_used")


def test_scenario_9_24_short_rest():
    s = make_state(active=E, dice="245", e_hand=["E27", "E18"])
    s, _ = play(s, E, PlayCard(card="E27", die="d2"))
    assert faces(s) == "24W..."
    s, _ = play(s, E, PlayCard(card="E18", payment=("d1", "d2")))
    assert display(s, E) == ["E18"]
    assert s.players[E].discard == ("E27",)
    assert used(s) == "-xx"


def test_scenario_9_25_game_ends_in_the_draw_phase():
    s = make_state(phase=DRAW, g_pile=1, g_display=["G14", "G16"], e_display=["E17"])
    s, events = play(s, G, DrawCards(count=1))
    assert isinstance(events[-1], GameEnded)
    assert not any(isinstance(e, DiceRolled) for e in events)
    assert events[-1].scores == (7, 5) and events[-1].winner == G and not events[-1].tiebreak
    assert GAME.outcome(s).ranks == (1, 2)
    assert GAME.awaiting(s) == ()


def test_scenario_9_26_tie_goes_to_the_player_with_cards_left():
    s = make_state(phase=DRAW, g_pile=1, g_display=["G14", "G15"], e_display=["E12", "E16"])
    s, events = play(s, G, DrawCards(count=1))
    end = events[-1]
    assert end.scores == (6, 6) and end.winner == E and end.tiebreak and end.emptied_by == G
    assert GAME.outcome(s).ranks == (2, 1)


def test_scenario_9_27_game_ends_through_burned_cards():
    s = make_state(active=E, dice="253", g_pile=2, e_display=["E08"])
    s, _ = play(s, E, ActivateAlly(ally="E08", unit="d0", target="PILE"))
    assert GAME.outcome(s) is None
    s, events = play(s, E, ActivateAlly(ally="E08", unit="d1", target="PILE"))
    assert types(events)[-2:] == ["CardBurned", "GameEnded"]
    assert len(s.players[G].pile) == 0
    assert used(s) == "xx-"
    assert GAME.outcome(s) is not None and GAME.awaiting(s) == ()
    assert events[-1].emptied_by == G and events[-1].winner == E  # 0-0, E has cards left


def test_scenario_9_28_only_the_display_scores():
    s = make_state(phase=DRAW, g_pile=1, g_display=["G10"], g_hand=["G16"])
    s, events = play(s, G, DrawCards(count=1))
    assert events[-1].scores[G] == 1


def test_scenario_9_29_twist_damage_adds_to_ally_damage_in_the_same_turn():
    s = make_state(dice="144", e_display=["E13"], g_display=["G01"], g_hand=["G32"])
    s, _ = play(s, G, ActivateAlly(ally="G01", unit="d0", target="E13"))
    assert damage(s, E, "E13") == 1
    s, events = play(s, G, PlayTwist(card="G32", target="E13"))
    assert CardDefeated(seat=E, card="E13") in events
    assert display(s, E) == []


def test_scenario_9_30_begone_ignores_hp_and_damage():
    s = make_state(dice="22W", e_display=["E17"], g_hand=["G25"], e_hand=["E34"])
    s, events = play(s, G, PlayCard(card="G25", payment=("d0", "d1", "d2"), target="E17"))
    assert display(s, E) == [] and s.players[E].discard == ("E17",)
    assert not any(isinstance(e, WindowOpened) for e in events)
    assert s.players[E].hand == ("E34",)


def test_scenario_9_31_recover():
    s = make_state(active=E, dice="331", e_discard=["E25"], e_hand=["E30"])
    s, events = play(s, E, PlayCard(card="E30", payment=("d0", "d1"), pick="E25"))
    assert s.players[E].hand == ("E25",)
    assert s.players[E].discard == ("E30",)
    # publicly identified: G's view names it, and it is no secret of E's
    assert GAME.view(s, G).players[E].known_hand == ("E25",)
    assert "E25" not in GAME.secrets(s)[E]
    assert all(GAME.redact(e, G) == e for e in events)


def test_nested_windows_and_a_point_that_fizzles():
    # Not numbered in §9; pins §5.6 nesting and "if its target card is no longer
    # in play, the point fizzles".
    s = make_state(dice="333", e_display=["E10"], g_hand=["G32", "G33"], e_hand=["E32"])
    g_pile = len(s.players[G].pile)
    s, _ = play(s, G, PlayTwist(card="G32", target="E10"))  # p1 at E10
    assert [(w.kind, w.holder) for w in s.windows] == [(DEFEND, E)]
    s, _ = play(s, E, PlayTwist(card="E32", target="PILE"))  # p2 at G's pile
    assert [(w.kind, w.holder) for w in s.windows] == [(DEFEND, E), (DEFEND, G)]
    s, events = play(s, G, PlayTwist(card="G33", target="E10"))  # p3 at E10
    names = types(events)
    # p3 applies (E holds no Twist), then G's window closes by itself and p2
    # burns a G card, then E's window closes and p1 fizzles.
    assert names.index("CardDefeated") < names.index("CardBurned") < names.index("DamageFizzled")
    assert s.windows == () and GAME.awaiting(s) == (G,)
    assert len(s.players[G].pile) == g_pile - 1
    assert s.players[E].discard == ("E32", "E10")
