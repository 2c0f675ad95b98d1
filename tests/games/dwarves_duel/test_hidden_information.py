"""Hidden information: every event that moves a card out of a hidden zone,
the views, and the declared secrets."""

from __future__ import annotations

import msgspec
import pytest

from engine_core.decider import start
from engine_core.games.dwarves_duel import GAME, Options
from engine_core.games.dwarves_duel.events import (
    CardBurned,
    CardPlayed,
    CardRecovered,
    CardsDrawn,
    DeckShuffled,
)
from engine_core.games.dwarves_duel.moves import ActivateAlly, DrawCards, PlayCard, PlayTwist
from engine_core.games.dwarves_duel.state import DRAW
from engine_core.testing import playout
from tests.games.dwarves_duel.helpers import E, G, make_state, play

enc = msgspec.json.Encoder()
VIEWERS = (G, E, None)


def blob(value) -> bytes:
    return enc.encode(value)


def names(ids) -> list[bytes]:
    return [b'"' + c.encode() + b'"' for c in ids]


def test_setup_shuffle_order_is_seen_by_nobody():
    _state, events = start(GAME, 2, Options(), b"seed")
    shuffles = [e for e in events if isinstance(e, DeckShuffled)]
    assert len(shuffles) == 2 and all(len(e.order) == 35 for e in shuffles)
    for viewer in VIEWERS:
        for e in shuffles:
            assert GAME.redact(e, viewer).order == ()


def test_setup_hands_reach_their_owner_only():
    _state, events = start(GAME, 2, Options(), b"seed")
    draws = [e for e in events if isinstance(e, CardsDrawn)]
    assert [(e.seat, e.count) for e in draws] == [(0, 4), (1, 4)]
    for e in draws:
        assert GAME.redact(e, e.seat) == e
        for viewer in (1 - e.seat, None):
            red = GAME.redact(e, viewer)
            assert red.cards == () and red.count == 4
            assert not any(n in blob(red) for n in names(e.cards))


def test_view_shows_the_opponent_hand_and_both_piles_as_counts():
    state, _ = start(GAME, 2, Options(), b"seed")
    for viewer in VIEWERS:
        v = GAME.view(state, viewer)
        assert type(v) is not type(state)
        data = blob(v)
        for seat in (G, E):
            pv = v.players[seat]
            assert pv.hand_count == 4 and pv.pile_count == 31
            if seat == viewer:
                assert pv.hand == state.players[seat].hand
            else:
                assert pv.hand is None
                assert not any(n in data for n in names(state.players[seat].hand))
            assert not any(n in data for n in names(state.players[seat].pile))


def test_draw_phase_cards_are_redacted_for_the_opponent_and_spectators():
    s = make_state(phase=DRAW, g_display=["G21"])
    top = s.players[G].pile[:2]
    s, events = play(s, G, DrawCards(count=2))
    drawn = next(e for e in events if isinstance(e, CardsDrawn))
    assert drawn.cards == top
    assert GAME.redact(drawn, G) == drawn
    for viewer in (E, None):
        red = GAME.redact(drawn, viewer)
        assert red.cards == () and red.count == 2
    assert set(top) <= set(GAME.secrets(s)[G])


def test_event_draw_two_cards_are_redacted_for_the_opponent():
    s = make_state(dice="123", g_hand=["G29"])
    top = s.players[G].pile[:2]
    s, events = play(s, G, PlayCard(card="G29"))
    drawn = [e for e in events if isinstance(e, CardsDrawn)]
    assert [c for e in drawn for c in e.cards] == list(top)
    for e in drawn:
        assert GAME.redact(e, E).cards == () and GAME.redact(e, None).cards == ()
        assert GAME.redact(e, G) == e


def test_burned_card_leaves_the_pile_face_up_for_everybody():
    s = make_state(dice="111", g_display=["G01"])
    top = s.players[E].pile[0]
    assert top in GAME.secrets(s)[None]
    s, events = play(s, G, ActivateAlly(ally="G01", unit="d0", target="PILE"))
    burned = next(e for e in events if isinstance(e, CardBurned))
    assert burned.card == top and burned.seat == E
    for viewer in VIEWERS:
        assert GAME.redact(burned, viewer) == burned
        assert GAME.view(s, viewer).players[E].discard == (top,)
    assert top not in GAME.secrets(s)[None]


def test_played_card_is_revealed_to_both():
    s = make_state(dice="1", g_hand=["G01", "G02"])
    s, events = play(s, G, PlayCard(card="G01", payment=("d0",)))
    played = next(e for e in events if isinstance(e, CardPlayed))
    for viewer in VIEWERS:
        assert GAME.redact(played, viewer) == played
    assert GAME.secrets(s)[G] == ("G02",)
    assert GAME.view(s, E).players[G].hand is None
    assert GAME.view(s, E).players[G].hand_count == 1


def test_played_twist_out_of_turn_is_revealed_and_leaves_the_secrets():
    s = make_state(active=E, dice="155", e_display=["E01"], g_hand=["G34", "G02"])
    s, _ = play(s, E, ActivateAlly(ally="E01", unit="d0", target="PILE"))
    s, events = play(s, G, PlayTwist(card="G34"))
    assert any(isinstance(e, CardPlayed) and e.card == "G34" for e in events)
    assert GAME.secrets(s)[G] == ("G02",)


def test_recovered_card_is_public_while_other_hand_cards_stay_hidden():
    s = make_state(active=E, dice="331", e_discard=["E25"], e_hand=["E30", "E02"])
    s, events = play(s, E, PlayCard(card="E30", payment=("d0", "d1"), pick="E25"))
    rec = next(e for e in events if isinstance(e, CardRecovered))
    assert GAME.redact(rec, G) == rec
    assert GAME.secrets(s)[E] == ("E02",)
    v = GAME.view(s, G)
    assert v.players[E].known_hand == ("E25",) and v.players[E].hand is None
    assert b'"E02"' not in blob(v)
    # once played again, it is no longer listed as known
    s2 = make_state(active=E, dice="555", e_hand=["E25"], g_display=["G10"])
    s2 = msgspec.structs.replace(
        s2, players=(s2.players[0], msgspec.structs.replace(s2.players[1], known=("E25",)))
    )
    s2, _ = play(s2, E, PlayCard(card="E25", payment=("d0", "d1", "d2"), target="G10"))
    assert s2.players[E].known == ()


@pytest.mark.parametrize("seed", range(5))
def test_no_event_or_view_of_a_greedy_match_leaks(seed):
    from engine_core.bots.dwarves_duel import DwarvesDuelGreedy

    def check(before, step, after):
        secrets = GAME.secrets(after)
        for viewer in VIEWERS:
            hidden = [
                c for owner, ids in secrets.items() if owner != viewer or owner is None for c in ids
            ]
            data = blob(GAME.view(after, viewer)) + b"".join(
                blob(GAME.redact(e, viewer)) for e in step.events
            )
            assert not any(n in data for n in names(hidden))

    playout(GAME, 2, seed, bots=DwarvesDuelGreedy(), on_step=check)
