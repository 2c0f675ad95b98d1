"""``decide`` checks a move without listing every legal move (``rules.answers``), and the
agenda skips a Reinforce/Action/Offering step without listing its moves
(``rules.has_choice``): both must agree with ``legal_moves`` exactly."""

from __future__ import annotations

import msgspec
import pytest

from engine_core.games.dice_forge import GAME, rules
from engine_core.games.dice_forge.moves import ForgeFace, SplitGain, UseReinforcement, UseTriton
from engine_core.games.dice_forge.state import Action, Offering, Reinforce
from engine_core.testing import playout


def variants(move) -> list:
    """The move with each field pushed out of range (or into a neighbour's range)."""
    out = []
    for field in move.__struct_fields__:
        value = getattr(move, field)
        if isinstance(value, bool):
            candidates = [not value]
        elif isinstance(value, int):
            candidates = [-1, value - 1, value + 1, 10**6]
        elif isinstance(value, str):
            candidates = ["__bogus__", "", "MIRROR", "G1", "SHIP", "HIND", "sun", "light"]
        elif isinstance(value, tuple):
            candidates = [(), value + value[:1]]
        else:
            candidates = []
        out += [msgspec.structs.replace(move, **{field: c}) for c in candidates]
    return out


EXTRA = [
    ForgeFace(die=0, slot=0),
    ForgeFace(die=1, slot=5),
    ForgeFace(die=2, slot=0),
    SplitGain(),
    SplitGain(hammer=1),
    UseReinforcement(card=0, option=""),
]


@pytest.mark.parametrize("players", [2, 3, 4])
def test_answers_and_has_choice_agree_with_legal_moves(players: int) -> None:
    seen: dict[bytes, object] = {}
    checked = 0

    def check(state, step, after) -> None:
        nonlocal checked
        for seat in GAME.awaiting(state):
            task = rules.seat_task(state, seat)
            legal = GAME.legal_moves(state, seat)
            for m in legal:
                seen.setdefault(msgspec.msgpack.encode(m), m)
            pool = [*legal, *EXTRA, *list(seen.values())[-30:]]
            for m in legal:
                pool += variants(m)
            for m in pool:
                assert rules.answers(state, seat, task, m) == (m in legal), (m, task)
                checked += 1
        pool = list(seen.values())[-30:]
        for seat in range(players):
            tasks = [
                Reinforce(seat=seat),
                Reinforce(seat=seat, used=(0, 1)),
                Action(seat=seat),
                Action(seat=seat, extra=True),
                Offering(seat=seat, bought=()),
                Offering(seat=seat, bought=("G3", "S1", "G6")),
            ]
            for task in tasks:
                expected = len(rules.task_moves(state, task)) > 1
                assert rules.has_choice(state, task) == expected, task
                moves = rules.task_moves(state, task)
                for m in [*moves, *pool]:
                    if type(m) is not UseTriton:
                        assert rules.answers(state, seat, task, m) == (m in moves), (m, task)

    for seed in range(2):
        playout(GAME, players, seed, on_step=check)
    assert checked > 1000
