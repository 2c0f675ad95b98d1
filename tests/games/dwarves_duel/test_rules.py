"""Rules beyond the numbered scenarios: setup, options, windows, payments."""

from __future__ import annotations

import msgspec
import pytest

from engine_core.decider import start
from engine_core.errors import IllegalMove, MalformedMove, NotYourTurn
from engine_core.games.dwarves_duel import GAME, Options
from engine_core.games.dwarves_duel.data import CARDS, DECKS, EVIL, GOOD
from engine_core.games.dwarves_duel.events import GameStarted, TurnStarted, WindowClosed
from engine_core.games.dwarves_duel.moves import (
    ActivateAlly,
    DrawCards,
    EndDicePhase,
    EndTurn,
    Pass,
    PlayCard,
    PlayTwist,
    RollDice,
)
from engine_core.games.dwarves_duel.rules import payments
from engine_core.games.dwarves_duel.state import CARD, CP1, CP2, CP4, DICE_PHASE, PREROLL
from engine_core.notation import move_text, parse_move
from tests.games.dwarves_duel.helpers import E, G, make_state, play, types


def test_decks_match_the_spec_tables():
    for side in (GOOD, EVIL):
        deck = [CARDS[c] for c in DECKS[side]]
        assert len(deck) == 35 and len({c.id for c in deck}) == 35
    assert CARDS["G01"].name == "Bavragor" and CARDS["E01"].name == "Bogglin"
    assert CARDS["G09"].key == CARDS["E09"].key == "ALLY_KING"
    assert CARDS["E12"].name == "Seizure of Âlandur" and CARDS["E12"].vp == 2
    assert CARDS["G16"].name == "Forging Keenfire" and CARDS["G16"].hp == 4


def test_setup_deals_four_cards_and_starts_with_the_draw_phase():
    state, events = start(GAME, 2, Options(first_player=1, seat0_side="EVIL"), b"e")
    assert isinstance(events[0], GameStarted) and events[0].sides == (EVIL, GOOD)
    assert events[-1] == TurnStarted(seat=1, turn=1)
    for p in state.players:
        assert len(p.hand) == 4 and len(p.pile) == 31
    assert state.players[0].hand[0].startswith("E")
    assert state.middle_wild == 3 and GAME.awaiting(state) == (1,)
    assert GAME.legal_moves(state, 1) == (DrawCards(count=1),)
    with pytest.raises(NotYourTurn):
        GAME.decide(state, 0, DrawCards(count=1), b"")


def test_first_player_is_drawn_when_not_configured():
    firsts = {start(GAME, 2, None, bytes([i]))[0].first_player for i in range(20)}
    assert firsts == {0, 1}


def test_bad_options_are_rejected():
    with pytest.raises(MalformedMove):
        GAME.setup(2, Options(first_player=2), b"")
    with pytest.raises(MalformedMove):
        GAME.codec().decode_options(b'{"seat0_side": "NEUTRAL"}')


def test_cp1_window_for_a_strike_holder():
    s = make_state(phase=DICE_PHASE, dice="123", e_hand=["E32"])
    s, events = play(s, G, EndDicePhase())
    assert s.phase == CARD and s.windows[-1].kind == CP1 and GAME.awaiting(s) == (E,)
    # ARMOR is not legal in a checkpoint; Pass and the strikes are
    assert set(GAME.legal_moves(s, E)) == {Pass(), PlayTwist(card="E32", target="PILE")}
    s, events = play(s, E, Pass())
    assert WindowClosed(kind=CP1, holder=E, passed=True) in events
    assert GAME.awaiting(s) == (G,)


def test_cp4_strike_then_the_wild_card_check_and_regeneration():
    s = make_state(dice="111", g_display=["G10"], e_hand=["E32"], e_display=["E12"])
    s, _ = play(s, G, EndTurn())
    assert s.windows[-1].kind == CP4 and GAME.awaiting(s) == (E,)
    s, events = play(s, E, PlayTwist(card="E32", target="G10"))
    # G10 (HP 1) is defeated; then the turn ends: G spent nothing, takes a Wild Card
    assert s.players[G].display == () and s.players[G].wild == 1
    assert s.active == E and s.turn == 4 and s.phase == "draw"
    assert types(events)[-3:] == ["WildCardTaken", "TurnEnded", "TurnStarted"]


def test_always_offer_windows_waits_for_an_explicit_pass():
    s = make_state(phase=DICE_PHASE, dice="123", always_offer_windows=True)
    s, _ = play(s, G, EndDicePhase())
    assert s.windows[-1].kind == CP1 and GAME.legal_moves(s, E) == (Pass(),)
    s, _ = play(s, E, Pass())
    s, _ = play(s, G, EndTurn())
    assert s.windows[-1].kind == CP4
    s, _ = play(s, E, Pass())
    assert s.active == E


def test_always_offer_windows_keeps_a_defender_window_after_armor():
    s = make_state(
        active=E, dice="155", e_display=["E01"], g_hand=["G34"], always_offer_windows=True
    )
    s, _ = play(s, E, ActivateAlly(ally="E01", unit="d0", target="PILE"))
    s, _ = play(s, G, PlayTwist(card="G34"))
    assert GAME.awaiting(s) == (G,) and GAME.legal_moves(s, G) == (Pass(),)
    s, _ = play(s, G, Pass())
    assert GAME.awaiting(s) == (E,) and len(s.players[G].discard) == 1  # only the Chain Mail


def test_cp2_follows_each_non_twist_card():
    s = make_state(dice="11", g_hand=["G01", "G31"], e_hand=["E33"])
    s, _ = play(s, G, PlayCard(card="G01", payment=("d0",)))
    assert s.windows[-1].kind == CP2
    s, _ = play(s, E, Pass())
    s, _events = play(s, G, PlayTwist(card="G31"))  # no CP2 after a Twist
    assert s.windows == () and GAME.awaiting(s) == (G,)


def test_payments_are_canonical_and_exact():
    s = make_state(dice="44W", g_hand=["G06", "G12"], g_wild=1)
    g06, g12 = CARDS["G06"], CARDS["G12"]
    assert ("d0", "d1", "d2") in payments(s, G, g06)
    assert ("d0", "d1", "WILD") in payments(s, G, g06)
    assert ("d2", "WILD") in payments(s, G, g12)
    for bad, code in [
        (("d1", "d0", "d2"), "bad_payment"),
        (("WILD", "d0", "d1"), "bad_payment"),
        (("d0", "d0", "d1"), "bad_payment"),
        (("d0", "d1", "WILD", "WILD"), "no_wild_card"),
        (("d0", "d3", "d1"), "bad_payment"),
        (("d0", "d1", "d5"), "die_unavailable"),
        (("d0", "x"), "bad_payment"),
    ]:
        with pytest.raises(IllegalMove) as err:
            GAME.decide(s, G, PlayCard(card="G06", payment=bad), b"")
        assert err.value.code == code, bad


def test_parameters_a_card_does_not_take_are_rejected():
    s = make_state(dice="1", g_hand=["G01"])
    with pytest.raises(IllegalMove) as err:
        GAME.decide(s, G, PlayCard(card="G01", payment=("d0",), target="PILE"), b"")
    assert err.value.code == "unexpected_parameter"


def test_twists_only_in_preroll_card_phase_or_windows():
    s = make_state(phase=PREROLL, g_hand=["G32"])
    assert PlayTwist(card="G32", target="PILE") in GAME.legal_moves(s, G)
    s, _ = play(s, G, RollDice())
    assert s.phase == DICE_PHASE
    with pytest.raises(IllegalMove):
        GAME.decide(s, G, PlayTwist(card="G32", target="PILE"), b"")


def test_every_move_has_a_round_tripping_text_form():
    s = make_state(dice="44W", g_hand=["G25", "G06"], e_display=["E10"], g_wild=1)
    for move in GAME.legal_moves(s, G):
        assert parse_move(GAME.Move, move_text(move)) == move


@pytest.mark.parametrize("options", [Options(always_offer_windows=True), Options(first_player=1)])
def test_random_playouts_with_options_end_within_the_bound(options):
    from engine_core.decider import fold
    from engine_core.testing import playout

    for seed in range(20):
        result = playout(GAME, 2, seed, options=options)
        assert result.outcome is not None
        assert len(result.steps) <= GAME.max_moves(2)
        assert msgspec.msgpack.encode(fold(GAME, result.events)) == msgspec.msgpack.encode(
            result.state
        )
