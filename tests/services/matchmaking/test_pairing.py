"""Pairing rules, pure (no servers)."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from services.matchmaking.pairing import Candidate, form_groups
from services.matchmaking.settings import MatchmakingSettings

S = MatchmakingSettings(window_base=2.0, window_growth=1.0, window_max=50.0)


def c(tid: str, rating: float, waited: float = 0.0, size: int = 1, bots: bool = False) -> Candidate:
    return Candidate(tid, size, rating, waited, bots)


def ids(groups) -> list[set[str]]:
    return [{t.ticket_id for t in g.tickets} for g in groups]


def test_neighbours_in_rating_are_paired() -> None:
    cands = [c("a", 10), c("b", 30), c("c", 11), c("d", 31)]
    assert sorted(map(sorted, ids(form_groups(cands, 2, S.window)))) == [["a", "c"], ["b", "d"]]


def test_a_far_player_waits_until_the_window_reaches_them() -> None:
    # 10 apart: window 2 + 1/s -> both must have waited 8 s.
    assert form_groups([c("a", 20, 7.9), c("b", 30, 7.9)], 2, S.window) == []
    # One side's window is enough for nothing: every member must accept the spread.
    assert form_groups([c("a", 20, 60), c("b", 30, 1)], 2, S.window) == []
    assert ids(form_groups([c("a", 20, 8.0), c("b", 30, 8.0)], 2, S.window)) == [{"a", "b"}]


def test_groups_of_four_take_parties_whole() -> None:
    cands = [c("p3", 25, size=3), c("s1", 25.5), c("s2", 26), c("p2", 26, size=2), c("s3", 26.2)]
    groups = form_groups(cands, 4, S.window)
    assert all(g.humans == 4 and g.bots == 0 for g in groups)
    assert {"p3", "s1"} in ids(groups) or {"p3", "s2"} in ids(groups)
    assert len(groups) == 2  # the other solos join the pair


def test_a_party_bigger_than_the_match_is_never_seated() -> None:
    assert form_groups([c("p", 25, size=3), c("q", 25, size=3)], 2, S.window) == []


def test_bots_fill_only_after_the_wait_and_only_when_allowed() -> None:
    lonely = [c("a", 25, waited=4.9, bots=True), c("b", 40, waited=100)]
    assert form_groups(lonely, 3, S.window, bot_fill_after_s=5) == []
    lonely = [c("a", 25, waited=5, bots=True), c("b", 40, waited=100)]
    (g,) = form_groups(lonely, 3, S.window, bot_fill_after_s=5)
    assert ids([g]) == [{"a"}] and g.bots == 2
    # Two waiting bot-friendly tickets close in rating share the match.
    both = [c("a", 25, waited=5, bots=True), c("b", 26, waited=6, bots=True)]
    (g,) = form_groups(both, 3, S.window, bot_fill_after_s=5)
    assert ids([g]) == [{"a", "b"}] and g.bots == 1


def test_full_matches_come_before_bots() -> None:
    cands = [c("a", 25, 30, bots=True), c("b", 25.5, 30, bots=True)]
    (g,) = form_groups(cands, 2, S.window, bot_fill_after_s=5)
    assert g.bots == 0 and ids([g]) == [{"a", "b"}]


def test_skipped_tickets_are_left_alone() -> None:
    cands = [c("a", 25), c("b", 25), c("c", 25)]
    groups = form_groups(cands, 2, S.window, skip={"a"})
    assert ids(groups) == [{"b", "c"}]


def test_every_ticket_lands_in_at_most_one_group() -> None:
    import random

    rng = random.Random(7)
    cands = [
        c(
            f"t{i}",
            rng.gauss(25, 8),
            rng.uniform(0, 30),
            rng.choice([1, 1, 1, 2]),
            rng.random() < 0.3,
        )
        for i in range(2000)
    ]
    for n in (2, 3, 4):
        groups = form_groups(cands, n, S.window, bot_fill_after_s=10)
        seen = [t.ticket_id for g in groups for t in g.tickets]
        assert len(seen) == len(set(seen))
        for g in groups:
            assert g.humans + g.bots == n
            spread = max(t.rating for t in g.tickets) - min(t.rating for t in g.tickets)
            assert all(spread <= S.window(t.waited_s) for t in g.tickets)


tickets = st.lists(
    st.builds(
        Candidate,
        ticket_id=st.uuids().map(str),
        size=st.integers(1, 4),
        rating=st.floats(0, 60, allow_nan=False),
        waited_s=st.floats(0, 120, allow_nan=False),
        allow_bots=st.booleans(),
    ),
    max_size=60,
    unique_by=lambda c: c.ticket_id,
)


@given(tickets, st.integers(2, 6), st.none() | st.floats(0, 60, allow_nan=False))
@settings(max_examples=200, deadline=None)
def test_groups_always_keep_the_rules(cands, players, bot_after) -> None:
    groups = form_groups(cands, players, S.window, bot_after)
    seen = [t.ticket_id for g in groups for t in g.tickets]
    assert len(seen) == len(set(seen))  # a ticket in one group at most
    for g in groups:
        assert g.humans + g.bots == players and g.humans >= 1
        spread = max(t.rating for t in g.tickets) - min(t.rating for t in g.tickets)
        assert all(spread <= S.window(t.waited_s) for t in g.tickets)
        if g.bots:
            assert bot_after is not None
            assert all(t.allow_bots and t.waited_s >= bot_after for t in g.tickets)


def lv(tid: str, rating: float, level: str, waited: float = 10.0) -> Candidate:
    return Candidate(tid, 1, rating, waited, True, level)


def test_tickets_asking_for_other_bot_levels_meet_in_full_matches() -> None:
    (g,) = form_groups([lv("a", 25, "search"), lv("b", 25.5, "random")], 2, S.window)
    assert ids([g]) == [{"a", "b"}] and g.bots == 0 and g.bot_level == ""


def test_bots_fill_a_match_only_among_tickets_asking_for_the_same_level() -> None:
    cands = [lv("s1", 25, "search"), lv("r1", 25.2, "random"), lv("s2", 25.4, "search")]
    groups = form_groups(cands, 3, S.window, bot_fill_after_s=5, full=False)
    by_level = {g.bot_level: g for g in groups}
    assert set(by_level) == {"random", "search"}
    assert ids([by_level["search"]]) == [{"s1", "s2"}] and by_level["search"].bots == 1
    assert ids([by_level["random"]]) == [{"r1"}] and by_level["random"].bots == 2


@given(
    st.lists(
        st.tuples(
            st.floats(0, 50), st.sampled_from(["random", "greedy", "search"]), st.integers(1, 2)
        ),
        max_size=14,
    ),
    st.integers(2, 4),
)
@settings(max_examples=200, deadline=None)
def test_a_bot_filled_group_holds_one_level_and_bots_of_it(tickets, n) -> None:
    cands = [
        Candidate(f"t{i}", size, rating, 30.0, True, level)
        for i, (rating, level, size) in enumerate(tickets)
    ]
    level_of = {c.ticket_id: c.bot_level for c in cands}
    groups = form_groups(cands, n, S.window, bot_fill_after_s=5)
    for g in groups:
        levels = {level_of[t.ticket_id] for t in g.tickets}
        if g.bots:
            assert levels == {g.bot_level}
        else:
            assert g.bot_level == ""
    seen = [t.ticket_id for g in groups for t in g.tickets]
    assert len(seen) == len(set(seen))
