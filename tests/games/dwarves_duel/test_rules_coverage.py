"""Rules audit: one test per spec rule that the numbered scenarios leave open.

Each test is named after its spec section (given / when / then). G = seat 0
(Forces of Good), E = seat 1 (Forces of Evil); window skipping is on unless a
test says otherwise.
"""

from __future__ import annotations

import pytest

from engine_core.decider import start
from engine_core.errors import IllegalMove
from engine_core.games.dwarves_duel import GAME, Options
from engine_core.games.dwarves_duel.data import CARDS, DECKS, EVIL, FACES, GOOD
from engine_core.games.dwarves_duel.events import (
    CardDiscarded,
    CardsDrawn,
    DamageDeclared,
    DeckShuffled,
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
from engine_core.games.dwarves_duel.state import (
    CARD,
    CP1,
    CP2,
    CP4,
    DEFEND,
    DICE_PHASE,
    DRAW,
    OVER,
    PREROLL,
)
from engine_core.rng import Rng
from engine_core.testing import playout
from tests.games.dwarves_duel.helpers import E, G, make_state, play, types, used, with_damage


def rejected(state, seat, move, code=None):
    with pytest.raises(IllegalMove) as err:
        GAME.decide(state, seat, move, b"x")
    assert move not in GAME.legal_moves(state, seat)
    if code is not None:
        assert err.value.code == code
    return err.value


def legal_of(state, seat, kind):
    return [m for m in GAME.legal_moves(state, seat) if isinstance(m, kind)]


# §4.1 Draw phase ---------------------------------------------------------------
def test_4_1_3_the_game_ends_after_the_card_that_empties_the_pile():
    # given G has one Ancient Knowledge and 1 card in the pile
    s = make_state(phase=DRAW, g_display=["G21"], g_pile=1, e_display=["E10"])
    # when G chooses to draw 2
    s, events = play(s, G, DrawCards(count=2))
    # then only 1 card is drawn and the game ends at once (E wins 1-0)
    drawn = [e for e in events if isinstance(e, CardsDrawn)]
    assert [e.count for e in drawn] == [1]
    assert isinstance(events[-1], GameEnded) and events[-1].winner == E
    assert s.phase == OVER and GAME.awaiting(s) == ()


def test_4_1_no_twist_in_the_draw_phase():
    s = make_state(phase=DRAW, g_hand=["G32", "G31"])
    assert GAME.legal_moves(s, G) == (DrawCards(count=1),)
    rejected(s, G, PlayTwist(card="G32", target="PILE"), "wrong_phase")


# §4.2 Dice phase ---------------------------------------------------------------
def test_4_2_extra_dice_twist_cannot_be_played_in_the_dice_phase():
    s = make_state(phase=DICE_PHASE, dice="123", g_hand=["G31"])
    rejected(s, G, PlayTwist(card="G31"), "wrong_phase")


def test_4_2_1_reinforcements_add_dice_without_a_twist():
    s = make_state(phase=PREROLL, g_display=["G18", "G19"])
    s, events = play(s, G, RollDice())
    assert len(events[0].faces) == 5
    assert all(d.face and not d.used for d in s.dice[:5]) and not s.dice[5].face


# §4.4 End of turn --------------------------------------------------------------
def test_4_4_3_king_conversion_short_rest_and_free_cards_are_no_spending():
    # given G converts with the King, plays Respite and a free Event, and spends nothing
    s = make_state(dice="123", g_display=["G09"], g_hand=["G27", "G29"])
    s, _ = play(s, G, KingConvert(die="d0"))
    s, _ = play(s, G, PlayCard(card="G27", die="d1"))
    s, _ = play(s, G, PlayCard(card="G29"))
    assert not s.spent_unit
    # when G ends the turn, then G takes a Wild Card
    s, _ = play(s, G, EndTurn())
    assert s.players[G].wild == 1 and s.middle_wild == 2


def test_4_4_3_spending_a_die_on_an_ally_activation_counts():
    s = make_state(dice="1", g_display=["G01"])
    s, _ = play(s, G, ActivateAlly(ally="G01", unit="d0", target="PILE"))
    s, events = play(s, G, EndTurn())
    assert "WildCardTaken" not in types(events) and s.players[G].wild == 0


def test_4_4_5_regeneration_clears_both_displays():
    # given E damaged G's Balyndis with a Dagger in CP1, and G damaged E's Caphalor
    s = make_state(
        phase=DICE_PHASE, dice="44", g_display=["G04"], e_display=["E04"], e_hand=["E32"]
    )
    s, _ = play(s, G, EndDicePhase())
    assert s.windows[-1].kind == CP1
    s, _ = play(s, E, PlayTwist(card="E32", target="G04"))
    s, _ = play(s, G, ActivateAlly(ally="G04", unit="d0", target="E04"))
    dmg = {dc.card: dc.damage for p in s.players for dc in p.display}
    assert dmg == {"G04": 1, "E04": 1}
    # when G ends the turn, then every display card is back at 0 and the dice are in the middle
    s, events = play(s, G, EndTurn())
    assert all(dc.damage == 0 for p in s.players for dc in p.display)
    assert all(not d.face for d in s.dice)
    assert types(events)[-2:] == ["TurnEnded", "TurnStarted"]


# §5.1 Payment ------------------------------------------------------------------
def test_5_1_all_wild_payment_is_legal():
    s = make_state(dice="W1", g_hand=["G14"], g_wild=2)
    s, _ = play(s, G, PlayCard(card="G14", payment=("d0", "WILD", "WILD")))
    assert [dc.card for dc in s.players[G].display] == ["G14"]
    assert s.players[G].wild == 0 and s.middle_wild == 3 and used(s) == "x-"


def test_5_1_wild_card_pays_a_single_value_cost():
    s = make_state(dice="23", g_hand=["G05"], g_wild=1)
    assert PlayCard(card="G05", payment=("WILD",)) in GAME.legal_moves(s, G)
    rejected(s, G, PlayCard(card="G05", payment=("d0",)), "wrong_payment")


def test_5_1_free_cards_take_no_payment():
    s = make_state(dice="11", g_hand=["G28"])
    rejected(s, G, PlayCard(card="G28", payment=("d0",)), "wrong_payment")


def test_5_1_twists_are_not_played_with_play_card():
    s = make_state(dice="1", g_hand=["G32"])
    rejected(s, G, PlayCard(card="G32"), "use_play_twist")


# §5.2 Allies -------------------------------------------------------------------
def test_5_2_a_wild_card_fuels_an_ally_and_goes_to_the_middle():
    s = make_state(dice="2", g_display=["G01"], g_wild=1)
    s, _ = play(s, G, ActivateAlly(ally="G01", unit="WILD", target="PILE"))
    assert s.players[G].wild == 0 and s.middle_wild == 3
    assert len(s.players[E].discard) == 1 and s.spent_unit


def test_5_2_own_cards_and_own_pile_are_no_targets():
    s = make_state(dice="11", g_display=["G01", "G10"], e_display=["E23"])
    legal = legal_of(s, G, ActivateAlly)
    assert {m.target for m in legal} == {"PILE"}  # E23 has no HP; G10 is G's own
    rejected(s, G, ActivateAlly(ally="G01", unit="d0", target="G10"), "bad_target")
    rejected(s, G, ActivateAlly(ally="G01", unit="d0", target="E23"), "bad_target")


def test_5_2_the_king_and_victory_cards_cannot_be_activated():
    s = make_state(dice="11", g_display=["G09", "G10"])
    assert legal_of(s, G, ActivateAlly) == []
    rejected(s, G, ActivateAlly(ally="G09", unit="d0", target="PILE"), "cannot_deal_damage")
    rejected(s, G, ActivateAlly(ally="G10", unit="d0", target="PILE"), "cannot_deal_damage")


def test_5_2_an_ally_played_this_turn_can_be_activated_at_once():
    s = make_state(dice="33", g_hand=["G03"])
    s, _ = play(s, G, PlayCard(card="G03", payment=("d0",)))
    assert ActivateAlly(ally="G03", unit="d1", target="PILE") in GAME.legal_moves(s, G)


def test_5_2_any_value_ally_takes_every_face():
    s = make_state(dice="12345W", g_display=["G08"])
    units = {m.unit for m in legal_of(s, G, ActivateAlly)}
    assert units == {"d0", "d1", "d2", "d3", "d4", "d5"}


# §5.3 King -----------------------------------------------------------------------
def test_5_3_king_needs_an_unused_number_die_and_the_king():
    s = make_state(dice="W2", g_display=["G09"])
    assert legal_of(s, G, KingConvert) == [KingConvert(die="d1")]
    rejected(s, G, KingConvert(die="d0"), "bad_die")
    s = make_state(dice="12")
    rejected(s, G, KingConvert(die="d0"), "no_king")


# §5.4 Events -------------------------------------------------------------------
def test_5_4_begone_needs_an_opponent_card_and_takes_any_type():
    s = make_state(dice="222", g_hand=["G25"])
    assert not any(m.card == "G25" for m in legal_of(s, G, PlayCard))
    s = make_state(dice="222", g_hand=["G25"], e_display=["E09", "E18", "E04"])
    s = with_damage(s, E, "E04", 2)
    targets = {m.target for m in legal_of(s, G, PlayCard)}
    assert targets == {"E09", "E18", "E04"}
    s, _events = play(s, G, PlayCard(card="G25", payment=("d0", "d1", "d2"), target="E04"))
    assert s.players[E].discard == ("E04",) and s.players[G].discard == ("G25",)
    assert [w.kind for w in s.windows] == []  # E holds nothing: CP2 skipped


def test_5_4_short_rest_needs_an_unused_number_die():
    s = make_state(dice="W", g_hand=["G27"])
    assert legal_of(s, G, PlayCard) == []
    rejected(s, G, PlayCard(card="G27", die="d0"), "bad_die")
    s = make_state(dice="4", g_hand=["G27"])
    s, _ = play(s, G, PlayCard(card="G27", die="d0"))
    assert s.dice[0].face == "W" and not s.dice[0].used


def test_5_4_take_wild_from_the_middle_then_spend_it_this_turn():
    s = make_state(dice="", g_hand=["G28", "G01"])
    s, _ = play(s, G, PlayCard(card="G28"))
    assert s.players[G].wild == 1 and s.middle_wild == 2
    s, _ = play(s, G, PlayCard(card="G01", payment=("WILD",)))
    assert s.players[G].wild == 0 and s.middle_wild == 3


def test_5_4_take_wild_from_the_opponent_or_nothing_at_three():
    s = make_state(g_hand=["G28"], e_wild=3)
    s, _ = play(s, G, PlayCard(card="G28"))
    assert (s.players[G].wild, s.players[E].wild, s.middle_wild) == (1, 2, 0)
    s = make_state(g_hand=["G28"], g_wild=3)
    s, events = play(s, G, PlayCard(card="G28"))
    assert "WildCardTaken" not in types(events)
    assert s.players[G].wild == 3 and s.players[G].discard == ("G28",)


def test_5_4_draw_two_draws_one_at_a_time():
    s = make_state(g_hand=["G29"], g_pile=5)
    s, events = play(s, G, PlayCard(card="G29"))
    assert [e.count for e in events if isinstance(e, CardsDrawn)] == [1, 1]
    assert len(s.players[G].hand) == 2 and len(s.players[G].pile) == 3
    assert s.players[G].discard == ("G29",)


def test_5_4_draw_two_ends_the_game_after_the_first_card():
    s = make_state(g_hand=["G29"], g_pile=1, e_hand=["E32"], g_display=["G12"])
    s, events = play(s, G, PlayCard(card="G29"))
    assert [e.count for e in events if isinstance(e, CardsDrawn)] == [1]
    assert isinstance(events[-1], GameEnded) and events[-1].winner == G
    assert not any(isinstance(e, WindowOpened) for e in events)  # no CP2 after the end


def test_5_4_recover_needs_a_discard_and_cannot_take_itself():
    s = make_state(dice="11", g_hand=["G30"])
    assert legal_of(s, G, PlayCard) == []
    rejected(s, G, PlayCard(card="G30", payment=("d0", "d1"), pick="G30"), "bad_pick")
    s = make_state(dice="11", g_hand=["G30"], g_discard=["G10", "G32"])
    picks = {m.pick for m in legal_of(s, G, PlayCard)}
    assert picks == {"G10", "G32"}


# §5.5 Twists -------------------------------------------------------------------
def test_5_5_strike_goes_to_the_discard_before_its_defender_window():
    s = make_state(g_hand=["G32"], e_hand=["E34"])
    s, events = play(s, G, PlayTwist(card="G32", target="PILE"))
    names = types(events)
    assert names.index("DamageDeclared") < names.index("CardDiscarded")
    assert names.index("CardDiscarded") < names.index("WindowOpened")
    assert s.players[G].discard == ("G32",) and s.windows[-1].kind == DEFEND


def test_5_5_strike_in_the_preroll_step():
    s = make_state(phase=PREROLL, g_hand=["G32"], e_display=["E10"])
    s, _events = play(s, G, PlayTwist(card="G32", target="E10"))
    assert s.players[E].discard == ("E10",) and s.phase == PREROLL
    assert GAME.legal_moves(s, G)[0] == RollDice()


def test_5_5_armor_only_in_a_defender_window_and_once_per_point():
    # no window: Armor is illegal in the card phase and in a checkpoint
    s = make_state(dice="1", g_hand=["G34", "G35"], e_hand=["E34", "E35", "E32"])
    rejected(s, G, PlayTwist(card="G34"), "nothing_to_cancel")
    s2, _ = play(s, G, EndTurn())
    assert s2.windows[-1].kind == CP4
    rejected(s2, E, PlayTwist(card="E34"), "nothing_to_cancel")
    # a point against E: the first Armor cancels it, the second is illegal
    s = make_state(
        dice="1", g_display=["G01"], e_hand=["E34", "E35", "E32"], always_offer_windows=True
    )
    s, _ = play(s, G, ActivateAlly(ally="G01", unit="d0", target="PILE"))
    s, _ = play(s, E, PlayTwist(card="E34"))
    rejected(s, E, PlayTwist(card="E35"), "nothing_to_cancel")
    assert set(GAME.legal_moves(s, E)) == {
        Pass(),
        PlayTwist(card="E32", target="PILE"),
        PlayTwist(card="E32", target="G01"),
    }


def test_5_5_armor_cannot_cancel_a_point_at_the_other_seat():
    # E's Dagger at G's pile, in E's own defender window nested on top: only G may cancel it
    s = make_state(dice="1", g_display=["G01"], e_hand=["E32"], g_hand=["G34"])
    s, _ = play(s, G, ActivateAlly(ally="G01", unit="d0", target="PILE"))
    assert s.windows[-1].holder == E
    s, _ = play(s, E, PlayTwist(card="E32", target="PILE"))
    assert [(w.kind, w.holder) for w in s.windows] == [(DEFEND, E), (DEFEND, G)]
    assert PlayTwist(card="G34") in GAME.legal_moves(s, G)


def test_5_5_extra_dice_in_the_active_players_defender_window():
    # given E strikes G in CP1; G (active) holds Andôkai's Power: legal in G's defender window
    s = make_state(phase=DICE_PHASE, dice="1", g_hand=["G31"], e_hand=["E32"])
    s, _ = play(s, G, EndDicePhase())
    s, _ = play(s, E, PlayTwist(card="E32", target="PILE"))
    assert s.windows[-1].holder == G and s.windows[-1].kind == DEFEND
    s, _ = play(s, G, PlayTwist(card="G31"))
    assert s.players[G].pending_extra_dice == 1


# §5.6 Windows ------------------------------------------------------------------
def test_5_6_checkpoint_windows_go_to_the_non_active_seat_only():
    s = make_state(dice="11", g_hand=["G01", "G32"], e_hand=["E32"])
    s, events = play(s, G, PlayCard(card="G01", payment=("d0",)))
    assert [(w.kind, w.holder) for w in s.windows] == [(CP2, E)]
    assert not any(isinstance(e, WindowOpened) and e.holder == G for e in events)


def test_5_6_no_checkpoint_for_a_holder_without_a_strike():
    # E holds only Armor: nothing is legal in a checkpoint, so none opens
    s = make_state(dice="11", g_hand=["G01"], e_hand=["E34", "E31"])
    s, events = play(s, G, PlayCard(card="G01", payment=("d0",)))
    assert s.windows == () and not any(isinstance(e, WindowOpened) for e in events)


def test_5_6_the_game_ending_inside_windows_throws_them_away():
    # given E's pile has 1 card; G strikes E10; in E's defender window E strikes back;
    # G's Dagger-window answer burns E's last card
    s = make_state(dice="1", e_pile=1, e_display=["E10"], g_hand=["G32", "G33"], e_hand=["E32"])
    s, _ = play(s, G, PlayTwist(card="G32", target="E10"))
    s, _ = play(s, E, PlayTwist(card="E32", target="PILE"))
    assert len(s.windows) == 2
    s, events = play(s, G, PlayTwist(card="G33", target="PILE"))
    assert isinstance(events[-1], GameEnded) and events[-1].emptied_by == E
    assert s.windows == () and GAME.awaiting(s) == ()
    # G's pile was never burned by the pending Dagger point
    assert len(s.players[G].pile) == 20
    assert not any(isinstance(e, DamageDeclared) and e.by == E for e in events)


def test_5_6_only_the_top_holder_is_awaited():
    s = make_state(dice="1", g_display=["G01"], e_hand=["E32"], g_hand=["G32"])
    s, _ = play(s, G, ActivateAlly(ally="G01", unit="d0", target="PILE"))
    assert GAME.awaiting(s) == (E,)
    s, _ = play(s, E, PlayTwist(card="E32", target="PILE"))
    assert GAME.awaiting(s) == (G,)
    assert set(GAME.legal_moves(s, G)) == {Pass(), PlayTwist(card="G32", target="PILE")}
    s, events = play(s, G, Pass())
    # E's Dagger burns a G card; E (no Twist left) closes; the Ally point burns an E card
    assert types(events).count("CardBurned") == 2
    assert s.windows == () and GAME.awaiting(s) == (G,) and s.phase == CARD
    assert [e for e in events if isinstance(e, CardDiscarded)] == []


def test_5_6_cp4_comes_before_the_wild_card_check():
    s = make_state(dice="", e_hand=["E32"])
    s, events = play(s, G, EndTurn())
    assert s.windows[-1].kind == CP4 and s.phase == "ending"
    assert "WildCardTaken" not in types(events)
    s, events = play(s, E, Pass())
    assert types(events)[-3:] == ["WildCardTaken", "TurnEnded", "TurnStarted"]


def test_5_5_armor_is_illegal_once_the_target_left_play():
    # given G's Axe p1 at E10; E answers with a Dagger at G's pile; G's second Axe p3 at E10
    s = make_state(dice="1", e_display=["E10"], g_hand=["G32", "G33"], e_hand=["E32", "E34"])
    s, _ = play(s, G, PlayTwist(card="G32", target="E10"))
    s, _ = play(s, E, PlayTwist(card="E32", target="PILE"))
    s, _ = play(s, G, PlayTwist(card="G33", target="E10"))
    # when E lets p3 through (E10 is defeated)
    assert s.windows[-1].holder == E and PlayTwist(card="E34") in GAME.legal_moves(s, E)
    s, events = play(s, E, Pass())
    # then G's window closes (no Twist), p2 burns a G card, and E's window for p1 closes by
    # itself: Shadow Armor has nothing left to protect, so p1 fizzles and E keeps the Armor
    names = types(events)
    assert names.index("CardDefeated") < names.index("CardBurned") < names.index("DamageFizzled")
    assert s.windows == () and s.players[E].hand == ("E34",)


# §7.1 Randomness ---------------------------------------------------------------
def test_7_1_rng_order_first_player_then_good_then_evil_shuffle():

    for options in (Options(), Options(first_player=1, seat0_side="EVIL")):
        state, events = start(GAME, 2, options, b"order")
        rng = Rng(b"order")
        first = rng.below(2) if options.first_player is None else options.first_player
        good, evil = rng.shuffle(DECKS[GOOD]), rng.shuffle(DECKS[EVIL])
        assert state.first_player == first
        shuffles = [e for e in events if isinstance(e, DeckShuffled)]
        assert [e.order for e in shuffles] == [good, evil]
        seat_of_good = 0 if options.seat0_side == GOOD else 1
        assert shuffles[0].seat == seat_of_good
        assert state.players[seat_of_good].hand == good[:4]
        assert state.players[seat_of_good].pile == good[4:]
        assert state.players[1 - seat_of_good].hand == evil[:4]


def test_7_1_dice_in_die_order_then_rerolls_in_move_order():

    s = make_state(phase=PREROLL, g_display=["G18", "G23"])
    s, events = play(s, G, RollDice(), b"dice")
    rng = Rng(b"dice")
    assert events[0].faces == tuple(FACES[rng.below(6)] for _ in range(4))
    s, events = play(s, G, RerollDie(die="d2", source="G23"), b"again")
    assert events[0].new == FACES[Rng(b"again").below(6)]


# §2.5, §4.5, §5.6 invariants along whole matches --------------------------------
@pytest.mark.parametrize("always", [False, True])
def test_invariants_hold_along_random_playouts(always):
    """Cards only move between zones (§4.5), Wild Cards sum to 3 (§2.5), no card
    keeps damage ≥ HP (§5.2), one seat is awaited and never just to pass (§5.6)."""

    def check(_before, _step, s):
        assert s.middle_wild + s.players[0].wild + s.players[1].wild == 3
        assert min(s.middle_wild, s.players[0].wild, s.players[1].wild) >= 0
        for p in s.players:
            zones = [*p.pile, *p.hand, *(dc.card for dc in p.display), *p.discard]
            if s.outcome is None:  # an Event cut off by the end is in no zone (decision 4)
                assert sorted(zones) == sorted(DECKS[p.side])
            assert all(
                CARDS[dc.card].hp is None or dc.damage < CARDS[dc.card].hp for dc in p.display
            )
            assert set(p.known) <= set(p.hand)
        if s.outcome is None:
            (seat,) = GAME.awaiting(s)
            legal = GAME.legal_moves(s, seat)
            assert GAME.default_move(s, seat) in legal
            if not always:
                assert legal != (Pass(),)

    for seed in range(6):
        playout(GAME, 2, seed, options=Options(always_offer_windows=always), on_step=check)
