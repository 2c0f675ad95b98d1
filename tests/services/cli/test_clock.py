"""The terminal's clock line: deadlines counted down on the server's time."""

from __future__ import annotations

import time

import pytest

from services.cli.clock import check_clock_spec, clock_text, skew_ms
from services.match.model import rfc3339
from tabletop.match.v1 import match_pb2


def test_the_clock_line_counts_down_on_the_server_s_time() -> None:
    now = int(time.time() * 1000)
    skew = 60_000  # the server's clock is a minute ahead of this machine's
    m = match_pb2.GetMatchResponse(
        server_time=rfc3339(now + skew),
        clocks=[
            match_pb2.SeatClock(seat=0, deadline=rfc3339(now + skew + 90_500), remaining_ms=90_500),
            match_pb2.SeatClock(seat=1, remaining_ms=30_000, timeouts=2),
        ],
    )
    assert abs(skew_ms(m) - skew) < 1000
    line = clock_text(m, 0, skew)
    assert line.startswith("clock: you 1:30") or line.startswith("clock: you 1:29")
    assert "seat 1 0:30 (bank) [2 timeouts]" in line


def test_the_clock_option_is_checked_and_made_canonical() -> None:
    assert check_clock_spec("5m+3s,timeouts=2") == "5m+3s timeouts=2"
    assert check_clock_spec("") == ""
    with pytest.raises(ValueError, match="duration"):
        check_clock_spec("soon")
