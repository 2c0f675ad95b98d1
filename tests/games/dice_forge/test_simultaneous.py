"""Simultaneous decisions in a blessing, and the order rule where order matters."""

from __future__ import annotations

from engine_core.games.dice_forge import GAME, data
from engine_core.games.dice_forge.moves import (
    ChooseMirror,
    ChooseOption,
    ForgeFace,
    OrderFaces,
    ShipBuy,
)
from engine_core.games.dice_forge.state import BlessAll
from tests.games.dice_forge.helpers import A, B, C, dice, fresh, play, replace, settle, with_player


def test_every_seat_with_a_choice_is_awaited_at_once() -> None:
    state = fresh(3)
    for seat in (A, B, C):
        state = with_player(state, seat, dice=dice("G1|S1|M1", "V2"))
    state = replace(state, active=B)
    state, _ = settle(state, flow=(BlessAll(seat=B),))
    assert GAME.awaiting(state) == (B, C, A)
    # any order: C answers first, then A, then B
    for seat, option in ((C, "moon"), (A, "sun"), (B, "gold")):
        state, _ = play(state, seat, ChooseOption(option=option))
    assert (state.players[C].moon, state.players[A].sun) == (1, 1)
    assert GAME.awaiting(state) == ()


def test_a_later_mirror_waits_for_an_earlier_ship_and_sees_its_face() -> None:
    state = fresh(2)
    state = replace(state, sanctuary=tuple(p.faces for p in data.SANCTUARY))
    state = with_player(state, A, gold=6, dice=dice("SHIP", "G1"))
    state = with_player(state, B, dice=dice("MIRROR", "G1|S1|M1"))
    state, _ = settle(state, flow=(BlessAll(seat=A),))
    # B's Mirror depends on A's Ship: only A is awaited
    assert GAME.awaiting(state) == (A,)
    state, _ = play(state, A, OrderFaces(ship_first=True))
    state, _ = play(state, A, ShipBuy(face="V3"))
    assert GAME.awaiting(state) == (A,)
    state, _ = play(state, A, ForgeFace(die=0, slot=0))
    assert state.players[A].dice[0][0] == "V3" and state.players[A].up[0] == 0
    assert GAME.awaiting(state) == (B,)
    assert ChooseMirror(face="V3") in GAME.legal_moves(state, B)
    state, _ = play(state, B, ChooseMirror(face="V3"))
    state, _ = play(state, B, ChooseOption(option="sun"))
    assert state.players[B].glory == 3


def test_independent_choices_do_not_wait_for_the_order() -> None:
    state = fresh(2)
    state = with_player(state, A, gold=6, dice=dice("SHIP", "G1"))
    state = with_player(state, B, dice=dice("G3|V2", "G1"))
    state, _ = settle(state, flow=(BlessAll(seat=A),))
    assert GAME.awaiting(state) == (A, B)
    state, _ = play(state, B, ChooseOption(option="glory"))
    assert state.players[B].glory == 2
