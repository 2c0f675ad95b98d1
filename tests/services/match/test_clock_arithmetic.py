"""The clock arithmetic over commits (pure: no servers)."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from services.common.errors import InvalidArgument
from services.match import clocks
from services.match.model import TimeControl

FISCHER = TimeControl(kind="fischer", initial_ms=10_000, increment_ms=1_000, delay_ms=2_000)


def test_fischer_delay_is_free_and_the_increment_comes_once_per_move() -> None:
    c0 = clocks.start(FISCHER, 2, (0,), 1_000)
    assert c0 is not None and c0.deadlines == (13_000, 0) and c0.remaining == (10_000, 10_000)
    # seat 0 moves within its delay: nothing charged, the increment added
    c1 = clocks.advance(FISCHER, c0, 1_000, 0, (1,), 2_500, timeout=False)
    assert c1 is not None and c1.remaining == (11_000, 10_000)
    assert c1.deadlines == (0, 2_500 + 2_000 + 10_000)
    # seat 1 uses 5 s: 3 s charged after its 2 s delay
    c2 = clocks.advance(FISCHER, c1, 2_500, 1, (0,), 7_500, timeout=False)
    assert c2 is not None and c2.remaining == (11_000, 10_000 - 3_000 + 1_000)


def test_simultaneous_seats_run_at_once_and_keep_their_deadlines() -> None:
    c0 = clocks.start(FISCHER, 3, (0, 1, 2), 0)
    assert c0 is not None
    c1 = clocks.advance(FISCHER, c0, 0, 1, (0, 2), 4_000, timeout=False)
    assert c1 is not None
    assert c1.deadlines[0] == c0.deadlines[0] and c1.deadlines[2] == c0.deadlines[2]
    assert c1.remaining == (8_000, 9_000, 8_000)  # 4 s each, 2 s of it free
    # seat 0 moves at 6 s: its charge is counted from its own start
    c2 = clocks.advance(FISCHER, c1, 4_000, 0, (2,), 6_000, timeout=False)
    assert c2 is not None and c2.remaining[0] == 10_000 - 4_000 + 1_000
    assert c2.deadlines[2] == c0.deadlines[2]


def test_a_timeout_empties_the_bank_without_increment_and_counts() -> None:
    c0 = clocks.start(FISCHER, 2, (0,), 0)
    assert c0 is not None
    c1 = clocks.advance(FISCHER, c0, 0, 0, (1,), 12_300, timeout=True)
    assert c1 is not None and c1.remaining[0] == 0 and c1.timeouts == (1, 0)


def test_per_move_handover_and_return() -> None:
    tc = TimeControl(kind="per_move", per_move_ms=1_000, max_timeouts=2)
    c = clocks.start(tc, 2, (0,), 0)
    c = clocks.advance(tc, c, 0, 0, (0,), 1_000, timeout=True)
    assert c is not None and c.deadlines[0] == 2_000 and not c.taken_over[0]
    c = clocks.advance(tc, c, 1_000, 0, (0,), 2_000, timeout=True)
    assert c is not None and c.taken_over[0] and c.deadlines[0] == 2_000 + clocks.TAKEOVER_MS
    c = clocks.advance(tc, c, 2_000, 0, (0,), 2_500, timeout=False)
    assert c is not None and c.timeouts[0] == 0 and not c.taken_over[0]
    assert c.deadlines[0] == 3_500


def test_forfeit_after_max_timeouts() -> None:
    tc = TimeControl(kind="per_move", per_move_ms=1_000, max_timeouts=2, on_max_timeouts="forfeit")
    c = clocks.start(tc, 3, (0,), 0)
    assert not clocks.forfeits(tc, c, 0)
    c = clocks.advance(tc, c, 0, 0, (0,), 1_000, timeout=True)
    assert clocks.forfeits(tc, c, 0)
    assert clocks.forfeit_outcome(3, 0).ranks == (3, 1, 1)


@pytest.mark.parametrize(
    "spec",
    [
        "none",
        "default",
        "30s",
        "5m+3s",
        "1h+30s delay=5s timeouts=3",
        "2s timeouts=1 then=forfeit",
        "500ms timeouts=2 then=bot:random",
        "default timeouts=4 then=forfeit",
    ],
)
def test_the_text_form_round_trips(spec: str) -> None:
    assert clocks.format_spec(clocks.parse(spec)) == spec


@given(st.integers(0, clocks.MAX_TIME_MS))
def test_durations_round_trip(ms: int) -> None:
    assert clocks.parse_duration(clocks.format_duration(ms)) == ms


@pytest.mark.parametrize("spec", ["", "fast", "-5s", "5m+", "30s delay", "30s color=red", "9d"])
def test_a_bad_spec_is_refused(spec: str) -> None:
    with pytest.raises(InvalidArgument) as e:
        clocks.parse(spec)
    assert e.value.reason == "bad_time_control"
