from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from engine_core.errors import MalformedMove
from engine_core.notation import move_text, parse_move
from engine_core.types import Move


class Forge(Move):
    face: str
    die: int
    slot: int
    pay: tuple[int, ...] = ()
    note: str | None = None
    ok: bool = False


class Pass(Move):
    pass


Moves = Forge | Pass


def test_readable_form() -> None:
    assert move_text(Forge(face="sun1", die=0, slot=3)) == (
        "forge face=sun1 die=0 slot=3 pay=[] note=null ok=false"
    )
    assert move_text(Pass()) == "pass"
    assert parse_move(Moves, "pass") == Pass()
    assert parse_move(Moves, "forge face=sun1 die=0 slot=3") == Forge(face="sun1", die=0, slot=3)


@given(
    st.text(max_size=12),
    st.integers(-(10**9), 10**9),
    st.integers(-5, 5),
    st.lists(st.integers(-3, 300), max_size=4).map(tuple),
    st.one_of(st.none(), st.text(max_size=8)),
    st.booleans(),
)
def test_text_form_round_trips(face, die, slot, pay, note, ok) -> None:
    move = Forge(face=face, die=die, slot=slot, pay=pay, note=note, ok=ok)
    assert parse_move(Moves, move_text(move)) == move


@pytest.mark.parametrize(
    "text", ["", "nonsense", "forge die=zero slot=1 face=x", "forge face=x die=[1", "forge x"]
)
def test_malformed_text_is_a_typed_error(text: str) -> None:
    with pytest.raises(MalformedMove):
        parse_move(Moves, text)
