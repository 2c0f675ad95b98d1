"""Single elimination of k-player tables through the real stack: the
tournament service creates the matches in the real match service, the bot
worker plays them, results come back over JetStream, the best of each table
go through to the next round, until a final table."""

from __future__ import annotations

import grpc

from services.tournaments import formats
from services.tournaments.model import RoundPaired, TournamentFinished, fold
from tabletop.tournaments.v1 import tournaments_pb2 as pb

from .conftest import (
    ORGANISER,
    create,
    finished,
    match_subjects,
    register_bots,
    tournament_events,
)
from .test_service import _rejected, _seq, check_matches_once


def _check_rounds(t: pb.Tournament, m: int) -> None:
    """Every round seats its field once (tables and byes, nobody at two
    tables); exactly m go through from each table, the best placed (the
    game's rank, then its score, then the seed); the next field is ordered
    by placing then seed and its byes are the top of it; the last round is
    one final table."""
    seed = {e.player: e.seed for e in t.entrants}
    field = sorted(seed, key=seed.get)
    for i, r in enumerate(t.rounds):
        assert r.stage == "elimination" and r.completed
        seated = [p for tb in r.tables for p in tb.players]
        assert len(seated) == len(set(seated)) and not set(seated) & set(r.byes)
        assert sorted(seated + list(r.byes)) == sorted(field)
        assert list(r.byes) == field[: len(r.byes)]  # byes to the top of the field
        if i == len(t.rounds) - 1:
            assert len(r.tables) == 1 and not r.byes
            return
        through = [(1, seed[p], p) for p in r.byes]
        for tb in r.tables:
            assert tb.finished and len(tb.match_ids) == 1
            res = tb.result
            order = sorted(
                range(len(tb.players)),
                key=lambda s, res=res, tb=tb: (res.ranks[s], -res.scores[s], seed[tb.players[s]]),
            )
            through += [(place, seed[tb.players[s]], tb.players[s])
                        for place, s in enumerate(order[:m], 1)]  # fmt: skip
        field = [p for *_k, p in sorted(through)]
        assert len(field) == len(r.byes) + m * len(r.tables)
    raise AssertionError("no final")


async def test_dice_forge_tables_of_four_best_two_through(stack):
    await stack.replica()
    stub = stack.stub()
    tid = await create(stub, "dice_forge", pb.FORMAT_SINGLE_ELIMINATION, table_size=4, advance=2)
    players = await register_bots(stub, tid, 8)
    started = await stub.Start(pb.StartRequest(tournament_id=tid), metadata=ORGANISER)
    assert started.total_rounds == 2
    t = await finished(stub, tid, timeout=180)
    assert [len(r.tables) for r in t.rounds] == [2, 1]
    assert [sorted(len(tb.players) for tb in r.tables) for r in t.rounds] == [[4, 4], [4]]
    first = t.rounds[0]
    seeds = [e.player for e in sorted(t.entrants, key=lambda e: e.seed)]
    # snake seeding: seeds 1 and 2 at different tables, 1 with 4, 5 and 8
    at = {p: k for k, tb in enumerate(first.tables) for p in tb.players}
    assert at[seeds[0]] != at[seeds[1]]
    assert {at[seeds[0]]} == {at[seeds[i]] for i in (3, 4, 7)}
    _check_rounds(t, 2)
    final = t.rounds[-1].tables[0]
    assert len(t.standings) == len(players)
    # standings: the final's placings first, then by placing in round 1
    top = [s.player for s in t.standings[:4]]
    assert set(top) == set(final.players)
    placed = sorted(range(4), key=lambda s: (final.result.ranks[s], -final.result.scores[s]))
    assert t.standings[0].player == final.players[placed[0]]
    assert all(s.tiebreaks["round_reached"] == 1 for s in t.standings[4:])
    check_matches_once(t, await match_subjects(stack.nats_url))
    events = await tournament_events(stack.nats_url, tid)
    assert sum(isinstance(e, TournamentFinished) for e in events) == 1
    assert sum(isinstance(e, RoundPaired) for e in events) == 2


async def test_assault_of_the_giants_byes_to_the_top_seed(stack):
    await stack.replica()
    stub = stack.stub()
    tid = await create(
        stub, "assault_of_the_giants", pb.FORMAT_SINGLE_ELIMINATION, table_size=3, advance=1
    )
    await register_bots(stub, tid, 7)
    await stub.Start(pb.StartRequest(tournament_id=tid), metadata=ORGANISER)
    t = await finished(stub, tid, timeout=240)
    seeds = [e.player for e in sorted(t.entrants, key=lambda e: e.seed)]
    r1, final = t.rounds
    assert list(r1.byes) == [seeds[0]]  # the top seed, straight to the final
    assert sorted(len(tb.players) for tb in r1.tables) == [3, 3]
    assert seeds[0] in final.tables[0].players and len(final.tables[0].players) == 3
    _check_rounds(t, 1)
    rows = {s.player: s for s in t.standings}
    assert {p for p, s in rows.items() if s.tiebreaks["round_reached"] == 2} == set(
        final.tables[0].players
    )
    check_matches_once(t, await match_subjects(stack.nats_url))
    # the projection folded from the stream agrees with what the service says
    folded = fold(list(enumerate(await tournament_events(stack.nats_url, tid), 1)))
    assert [s.player for s in formats.standings(folded)] == [s.player for s in t.standings]


async def test_bad_brackets_are_refused_and_nothing_appended(stack):
    await stack.replica()
    stub = stack.stub()
    C = grpc.StatusCode
    req = pb.CreateTournamentRequest
    elim = pb.FORMAT_SINGLE_ELIMINATION
    for game, opts, reason in [
        ("dice_forge", pb.TournamentOptions(table_size=4, advance=4), "bad_advance"),
        ("dice_forge", pb.TournamentOptions(table_size=5, advance=1), "table_size_unsupported"),
        ("assault_of_the_giants", pb.TournamentOptions(table_size=2), "table_size_unsupported"),
        ("tic_tac_toe", pb.TournamentOptions(advance=2), "bad_advance"),
    ]:
        await _rejected(
            stub.CreateTournament(req(game=game, format=elim, options=opts), metadata=ORGANISER),
            C.INVALID_ARGUMENT,
            reason,
        )
    await _rejected(
        stub.CreateTournament(
            req(game="assault_of_the_giants", format=pb.FORMAT_SWISS_TABLES, rounds=2,
                options=pb.TournamentOptions(table_size=3, top_cut=6)),
            metadata=ORGANISER,
        ),
        C.INVALID_ARGUMENT, "bad_top_cut",
    )  # fmt: skip
    listed = await stub.ListTournaments(pb.ListTournamentsRequest(), metadata=ORGANISER)
    assert list(listed.tournaments) == []
    # six cannot make a bracket of 3-player tables whose winners fill a final
    tid = await create(stub, "assault_of_the_giants", elim, table_size=3)
    await register_bots(stub, tid, 6)
    before = await _seq(stack, tid)
    await _rejected(
        stub.Start(pb.StartRequest(tournament_id=tid), metadata=ORGANISER),
        C.FAILED_PRECONDITION,
        "bracket_unplayable",
    )
    assert await _seq(stack, tid) == before
    got = await stub.GetTournament(pb.GetTournamentRequest(tournament_id=tid), metadata=ORGANISER)
    assert got.status == pb.STATUS_REGISTERING


async def test_swiss_tables_then_a_top_cut_of_tables(stack):
    await stack.replica()
    stub = stack.stub()
    tid = await create(stub, "dice_forge", pb.FORMAT_SWISS_TABLES, rounds=1, table_size=4,
                       top_cut=8, advance=2)  # fmt: skip
    players = await register_bots(stub, tid, 12)
    started = await stub.Start(pb.StartRequest(tournament_id=tid), metadata=ORGANISER)
    assert started.total_rounds == 3
    t = await finished(stub, tid, timeout=240)
    assert [r.stage for r in t.rounds] == ["", "elimination", "elimination"]
    assert [len(r.tables) for r in t.rounds] == [3, 2, 1]
    cut = {p for tb in t.rounds[1].tables for p in tb.players}
    assert len(cut) == 8 and cut <= set(players)
    # the cut is the top 8 of the Swiss round: nobody left out had more points
    swiss_points = {}
    for tb in t.rounds[0].tables:
        for s, p in enumerate(tb.players):
            swiss_points[p] = (
                sum(1 for r in tb.result.ranks if r > tb.result.ranks[s])
                + (sum(1 for r in tb.result.ranks if r == tb.result.ranks[s]) - 1) / 2
            )
    assert min(swiss_points[p] for p in cut) >= max(swiss_points[p] for p in set(players) - cut)
    final = t.rounds[2].tables[0]
    assert {s.player for s in t.standings[:4]} == set(final.players)
    assert len(t.standings) == 12
    check_matches_once(t, await match_subjects(stack.nats_url))
