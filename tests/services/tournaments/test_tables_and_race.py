"""Swiss of multi-player tables and a score race, through the real stack."""

from __future__ import annotations

import itertools
from collections import Counter

import pytest

from services.tournaments.adapters import GrpcMatches, RedisBotJobs
from services.tournaments.model import TimeControl
from tabletop.tournaments.v1 import tournaments_pb2 as pb

from .conftest import (
    ORGANISER,
    TOKENS,
    create,
    finished,
    match_subjects,
    register_bots,
    until,
)


async def test_swiss_tables_of_three(stack):
    await stack.replica()
    stub = stack.stub()
    tid = await create(stub, "dice_forge", pb.FORMAT_SWISS_TABLES, rounds=2, table_size=3)
    players = await register_bots(stub, tid, 9)
    await stub.Start(pb.StartRequest(tournament_id=tid), metadata=ORGANISER)
    t = await finished(stub, tid, timeout=120)
    met = Counter()
    for r in t.rounds:
        assert sorted(len(tb.players) for tb in r.tables) == [3, 3, 3]
        assert sorted(p for tb in r.tables for p in tb.players) == sorted(players)
        for tb in r.tables:
            met.update(frozenset(x) for x in itertools.combinations(tb.players, 2))
    assert max(met.values()) == 1  # round 2 could seat everyone with new opponents
    # Seat order rotated: at every table the first seat goes to a player with
    # the fewest first seats so far. (The tables come first, chosen for new
    # opponents; three round-1 first players may then share a table, and one
    # of them sits first again: "nobody first twice" is not always possible.)
    firsts: Counter[str] = Counter()
    for r in t.rounds:
        for tb in r.tables:
            assert firsts[tb.players[0]] == min(firsts[p] for p in tb.players), (r.round, tb)
        firsts.update(tb.players[0] for tb in r.tables)
    # placing points: 2 + 1 + 0 per table of 3 (ties share)
    assert sum(s.points for s in t.standings) == pytest.approx(3 * 3 * 2)
    assert {"firsts", "score_total"} <= set(t.standings[0].tiebreaks)
    ids = [m for r in t.rounds for tb in r.tables for m in tb.match_ids]
    assert {f"match.{m}" for m in ids} == set(await match_subjects(stack.nats_url))


async def test_score_race_counts_entrants_matches_in_its_window(stack):
    await stack.replica()
    stub = stack.stub()
    tid = await create(stub, "tic_tac_toe", pb.FORMAT_SCORE_RACE, race_seconds=4.0,
                       race_scoring="sum")  # fmt: skip
    entrants = await register_bots(stub, tid, 3, prefix="bot:racer")
    await stub.Start(pb.StartRequest(tournament_id=tid), metadata=ORGANISER)
    # Matches made elsewhere (as the matchmaker would): two with entrants,
    # one between outsiders that must not count.
    matches = GrpcMatches(stack.match.address, TOKENS)
    jobs = RedisBotJobs(stack.bots.redis)
    pairs = [entrants[:2], entrants[1:], ["bot:outsider1", "bot:outsider2"]]
    ids = []
    for k, players in enumerate(pairs):
        mid = await matches.create("tic_tac_toe", players, "", TimeControl(), False, f"race{k}")
        await jobs.enqueue(mid, "tic_tac_toe", {p: s for s, p in enumerate(players)})
        ids.append(mid)
    await matches.close()

    async def counted():
        t = await stub.GetTournament(pb.GetTournamentRequest(tournament_id=tid), metadata=ORGANISER)
        return t if sum(s.played for s in t.standings) == 4 else None

    await until(counted, timeout=30)
    t = await finished(stub, tid, timeout=30)
    rows = {s.player: s for s in t.standings}
    assert set(rows) == set(entrants)
    assert rows[entrants[1]].played == 2 and rows[entrants[0]].played == 1
    assert sum(s.played for s in t.standings) == 4  # the outsiders' match is not in it
    assert [s.points for s in t.standings] == sorted((s.points for s in t.standings), reverse=True)
