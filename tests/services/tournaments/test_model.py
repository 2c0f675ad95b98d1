"""The fold: events round-trip, and folding what was folded already changes
nothing (two readers of one projection catching up at once)."""

from __future__ import annotations

import random

from services.tournaments.model import decode_event, encode_event, fold
from tests.services.tournaments.sim import Sim


def test_events_round_trip_and_a_second_fold_changes_nothing():
    sim = Sim("tic_tac_toe", "swiss", 6, rounds=3)
    t = sim.run(random.Random(1))
    items = [(seq, decode_event(encode_event(e))) for seq, e in sim.items]
    assert [e for _s, e in items] == [e for _s, e in sim.items]
    once = fold(items)
    before = (once.seq, len(once.rounds), {m: once.recorded(m) for m in once.matches})
    twice = fold(items[len(items) // 2 :], once)  # the same events again
    assert twice is once
    assert (twice.seq, len(twice.rounds), {m: twice.recorded(m) for m in twice.matches}) == before
    assert twice.standings == t.standings
