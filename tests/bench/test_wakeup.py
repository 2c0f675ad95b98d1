"""``bench.wakeup``: a round trip to a second process after each gap, every
round trip answered (the peer process ends with its last answer)."""

from __future__ import annotations

from bench import wakeup


def test_every_gap_is_measured_with_every_round_trip() -> None:
    out = wakeup.run(rounds=50)
    rows = out["round_trips"]
    assert [r["gap_ms"] for r in rows] == [g * 1000 for g in wakeup.GAPS_S]
    for r in rows:
        assert r["rounds"] == 50
        assert 0 < r["p50_us"] <= r["p90_us"]
    hot = rows[0]["p50_us"]
    after_1ms = next(r for r in rows if r["gap_ms"] == 1.0)["p50_us"]
    assert out["wake_after_1ms_over_hot"] == after_1ms / hot


def test_the_gap_is_not_part_of_the_round_trip() -> None:
    # the gap is spent before the clock starts: a round trip timed with it
    # would take 10 ms or more every time
    samples = wakeup._round_trips(20, 0.01)
    assert len(samples) == 20 and min(samples) > 0
    assert sorted(samples)[10] < 0.01
