"""A tournament's clock becomes its matches' turn clock."""

from __future__ import annotations

from services.match.clocks import validate
from services.match.time_control_pb import time_control_in
from services.tournaments.adapters import match_options
from services.tournaments.model import TimeControl
from tabletop.match.v1 import match_pb2

TC = match_pb2.TimeControl


def test_a_tournament_clock_is_the_match_clock() -> None:
    none = match_options(TimeControl(), True)
    assert none.public_replay and not none.HasField("time_control")
    per_move = match_options(TimeControl(kind="per_move", seconds=20), False)
    assert per_move.time_control.kind == TC.KIND_PER_MOVE
    assert per_move.time_control.per_move_ms == 20_000
    fischer = match_options(TimeControl(kind="fischer", seconds=300, increment=5, delay=1.5), False)
    tc = fischer.time_control
    assert (tc.kind, tc.initial_ms, tc.increment_ms, tc.delay_ms) == (
        TC.KIND_FISCHER,
        300_000,
        5_000,
        1_500,
    )
    for options in (per_move, fischer):  # and the match service accepts them
        validate(time_control_in(options.time_control))
