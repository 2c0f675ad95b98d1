"""The instants the match service writes (RFC 3339, UTC, milliseconds)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from hypothesis import given
from hypothesis import strategies as st

from services.match.model import rfc3339

EPOCH = datetime(1970, 1, 1, tzinfo=UTC)


def _expected(ms: int) -> str:
    # integer arithmetic on the datetime side too (a float of ms / 1000 loses
    # the last millisecond far from the epoch)
    return (EPOCH + timedelta(milliseconds=ms)).strftime("%Y-%m-%dT%H:%M:%S.") + f"{ms % 1000:03d}Z"


def test_known_instants() -> None:
    assert rfc3339(0) == "1970-01-01T00:00:00.000Z"
    assert rfc3339(1_733_340_665_007) == "2024-12-04T19:31:05.007Z"
    assert rfc3339(951_825_600_999) == "2000-02-29T12:00:00.999Z"  # a leap day
    assert rfc3339(253_402_300_799_999) == "9999-12-31T23:59:59.999Z"


@given(st.lists(st.integers(min_value=0, max_value=253_402_300_799_998), min_size=1, max_size=20))
def test_any_instant_in_any_order_is_formatted_exactly(instants: list[int]) -> None:
    # one second's text is reused while instants stay in it: never a stale one
    for ms in instants:
        assert rfc3339(ms) == _expected(ms)
        assert rfc3339(ms + 1) == _expected(ms + 1)
