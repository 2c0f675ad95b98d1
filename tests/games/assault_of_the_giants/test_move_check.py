"""``decide`` checks some moves against a part of ``legal_moves`` only
(``rules.legal_moves_like``): for every move, that part must hold it exactly when
``legal_moves`` does."""

from __future__ import annotations

import msgspec
import pytest

from engine_core.games.assault_of_the_giants import GAME, rules
from engine_core.games.assault_of_the_giants.moves import ClaimEvent, Maneuver, PlayCommand
from engine_core.testing import playout


def variants(move) -> list:
    out = []
    for field in move.__struct_fields__:
        value = getattr(move, field)
        if isinstance(value, bool):
            candidates = [not value]
        elif isinstance(value, int):
            candidates = [-1, value - 1, value + 1, 10**6]
        elif isinstance(value, str):
            candidates = ["__bogus__", ""]
        else:
            candidates = []
        out += [msgspec.structs.replace(move, **{field: c}) for c in candidates]
    return out


@pytest.mark.parametrize("players", [3, 6])
def test_legal_moves_like_agrees_with_legal_moves(players: int) -> None:
    checked = 0

    def check(state, step, after) -> None:
        nonlocal checked
        if state.phase not in ("turn", "move"):
            return
        seat = step.seat
        legal = GAME.legal_moves(state, seat)
        pool = [*legal, Maneuver(unit=0, to=0), PlayCommand(command="move")]
        for m in legal:
            pool += variants(m)
        for m in pool:
            if state.phase == "turn" and not isinstance(m, ClaimEvent | PlayCommand):
                continue
            assert (m in rules.legal_moves_like(state, seat, m)) == (m in legal), m
            checked += 1

    playout(GAME, players, 1, on_step=check)
    assert checked > 500
