"""Whole tournaments through the real stack: the tournament service creates
matches in the real match service, the bot worker plays them, MatchFinished
facts come back over JetStream, rounds follow, standings come out."""

from __future__ import annotations

import itertools
from collections import Counter

import grpc
import pytest
from prometheus_client import REGISTRY

from services.common.errors import error_info
from services.tournaments.model import MatchResultRecorded, RoundStarted
from tabletop.tournaments.v1 import tournaments_pb2 as pb

from .conftest import (
    ORGANISER,
    auth,
    create,
    finished,
    match_subjects,
    register_bots,
    tournament_events,
)


def check_matches_once(t: pb.Tournament, subjects: dict[str, int]) -> None:
    """Every table's matches exist, each once; no other match was made."""
    ids = [m for r in t.rounds for tb in r.tables for m in tb.match_ids]
    assert len(ids) == len(set(ids))
    assert {f"match.{m}" for m in ids} == set(subjects)


async def test_swiss_of_bots_runs_to_a_correct_finish(stack):
    await stack.replica()
    stub = stack.stub()
    tid = await create(stub, "tic_tac_toe", pb.FORMAT_SWISS, rounds=3)
    players = await register_bots(stub, tid, 7)
    started = await stub.Start(pb.StartRequest(tournament_id=tid), metadata=ORGANISER)
    assert started.status == pb.STATUS_RUNNING and started.total_rounds == 3
    t = await finished(stub, tid)
    assert len(t.rounds) == 3 and all(r.completed for r in t.rounds)
    met = Counter()
    byes = Counter()
    for r in t.rounds:
        assert len(r.tables) == 3 and len(r.byes) == 1
        seated = [p for tb in r.tables for p in tb.players] + list(r.byes)
        assert sorted(seated) == sorted(players)
        byes.update(r.byes)
        for tb in r.tables:
            assert tb.finished and len(tb.match_ids) == 1
            met[frozenset(tb.players)] += 1
    assert max(met.values()) == 1 and max(byes.values()) == 1
    # standings: 9 matches + 3 byes hand out 12 points; ranks ordered
    assert sum(s.points for s in t.standings) == pytest.approx(12)
    assert [s.rank for s in t.standings] == sorted(s.rank for s in t.standings)
    check_matches_once(t, await match_subjects(stack.nats_url))
    events = await tournament_events(stack.nats_url, tid)
    results = [e for e in events if isinstance(e, MatchResultRecorded)]
    assert len(results) == len({e.match_id for e in results}) == 9  # each recorded once


async def test_round_robin_everyone_meets_everyone(stack):
    await stack.replica()
    stub = stack.stub()
    tid = await create(stub, "tic_tac_toe", pb.FORMAT_ROUND_ROBIN)
    players = await register_bots(stub, tid, 5)
    await stub.Start(pb.StartRequest(tournament_id=tid), metadata=ORGANISER)
    t = await finished(stub, tid)
    assert len(t.rounds) == 5
    met = Counter(frozenset(tb.players) for r in t.rounds for tb in r.tables)
    assert set(met) == {frozenset(p) for p in itertools.combinations(players, 2)}
    assert set(met.values()) == {1}
    assert Counter(p for r in t.rounds for p in r.byes) == Counter(players)
    rows = {s.player: s for s in t.standings}
    assert all(rows[p].played == 4 for p in players)
    check_matches_once(t, await match_subjects(stack.nats_url))


async def test_single_elimination_with_byes_and_replayed_draws(stack):
    await stack.replica()
    stub = stack.stub()
    tid = await create(stub, "tic_tac_toe", pb.FORMAT_SINGLE_ELIMINATION, max_games=3)
    players = await register_bots(stub, tid, 6)
    started = await stub.Start(pb.StartRequest(tournament_id=tid), metadata=ORGANISER)
    seeds = sorted(started.entrants, key=lambda e: e.seed)
    assert [e.seed for e in seeds] == [1, 2, 3, 4, 5, 6]
    t = await finished(stub, tid)
    assert len(t.rounds) == 3
    assert sorted(t.rounds[0].byes) == sorted([seeds[0].player, seeds[1].player])
    assert [len(r.tables) for r in t.rounds] == [2, 2, 1]
    final = t.rounds[-1].tables[0]
    champion = t.standings[0].player
    assert champion in final.players and t.standings[1].player in final.players
    last = final.result
    if len(set(last.ranks)) > 1:
        assert final.players[list(last.ranks).index(1)] == champion
    else:  # three draws: the better seed goes through
        assert len(final.match_ids) == 3
        seed = {e.player: e.seed for e in t.entrants}
        assert champion == min(final.players, key=seed.__getitem__)
    for r in t.rounds:
        for tb in r.tables:
            assert 1 <= len(tb.match_ids) <= 3
    assert {s.player for s in t.standings} == set(players)
    check_matches_once(t, await match_subjects(stack.nats_url))


async def test_a_player_who_vanishes_forfeits_by_the_clock(stack):
    """Every tournament match carries the tournament's clock; a seat that
    times out forfeits, so the round ends without them."""
    from tabletop.match.v1 import match_pb2, match_pb2_grpc

    await stack.replica()
    stub = stack.stub()
    reply = await stub.CreateTournament(
        pb.CreateTournamentRequest(
            game="tic_tac_toe", format=pb.FORMAT_SWISS, rounds=1, seed="s",
            time_control=pb.TimeControl(kind=pb.TimeControl.KIND_PER_MOVE, seconds=0.3,
                                        max_timeouts=1),
        ),
        metadata=ORGANISER,
    )  # fmt: skip
    tid = reply.tournament_id
    await stub.Register(
        pb.RegisterRequest(tournament_id=tid, player="bot:stays"), metadata=ORGANISER
    )
    await stub.Register(pb.RegisterRequest(tournament_id=tid), metadata=auth("guest:gone"))
    await stub.Start(pb.StartRequest(tournament_id=tid), metadata=ORGANISER)
    t = await finished(stub, tid, timeout=60)
    (table,) = t.rounds[0].tables
    assert table.result.reason == "forfeit"
    assert t.standings[0].player == "bot:stays" and t.standings[0].points == 1
    async with grpc.aio.insecure_channel(stack.match.address) as channel:
        m = await match_pb2_grpc.MatchServiceStub(channel).GetMatch(
            match_pb2.GetMatchRequest(match_id=table.match_ids[0]), metadata=ORGANISER
        )
    tc = m.match_options.time_control
    assert (tc.kind, tc.per_move_ms, tc.max_timeouts) == (
        match_pb2.TimeControl.KIND_PER_MOVE, 300, 1)  # fmt: skip
    assert tc.on_max_timeouts == match_pb2.TimeControl.ON_MAX_TIMEOUTS_FORFEIT


async def test_watch_streams_every_event_then_ends(stack):
    await stack.replica()
    stub = stack.stub()
    tid = await create(stub, "tic_tac_toe", pb.FORMAT_SWISS, rounds=1)
    await register_bots(stub, tid, 2)
    await stub.Start(pb.StartRequest(tournament_id=tid), metadata=ORGANISER)
    seen = [e async for e in stub.WatchTournament(pb.WatchTournamentRequest(tournament_id=tid),
                                                 metadata=ORGANISER)]  # fmt: skip
    types = [e.type for e in seen]
    assert types[0] == "created" and types[-1] == "finished"
    assert types.count("round_started") == 1 and types.count("result") == 1
    assert [e.seq for e in seen] == sorted(e.seq for e in seen)
    again = [e async for e in stub.WatchTournament(
        pb.WatchTournamentRequest(tournament_id=tid, after_seq=seen[2].seq), metadata=ORGANISER)]  # fmt: skip
    assert [e.seq for e in again] == [e.seq for e in seen[3:]]
    listed = await stub.ListTournaments(pb.ListTournamentsRequest(), metadata=ORGANISER)
    assert [x.tournament_id for x in listed.tournaments] == [tid]


async def _seq(stack, tid):
    return len(await tournament_events(stack.nats_url, tid))


async def _rejected(call, code, reason):
    with pytest.raises(grpc.aio.AioRpcError) as e:
        await call
    assert e.value.code() == code, e.value.details()
    info = error_info(e.value)
    assert info is not None and info.reason == reason, info


async def test_bad_input_is_refused_with_a_reason_and_nothing_appended(stack):
    await stack.replica()
    stub = stack.stub()
    C = grpc.StatusCode
    req = pb.CreateTournamentRequest
    await _rejected(stub.CreateTournament(req(game="chess", format=pb.FORMAT_SWISS, rounds=3),
                                          metadata=ORGANISER), C.NOT_FOUND, "unknown_game")  # fmt: skip
    await _rejected(
        stub.CreateTournament(req(game="tic_tac_toe", format=pb.FORMAT_SWISS_TABLES, rounds=3,
                                  options=pb.TournamentOptions(table_size=4)), metadata=ORGANISER),
        C.INVALID_ARGUMENT, "table_size_unsupported",
    )  # fmt: skip
    await _rejected(
        stub.CreateTournament(req(game="dice_forge", format=pb.FORMAT_SWISS_TABLES, rounds=3,
                                  options=pb.TournamentOptions(table_size=6)), metadata=ORGANISER),
        C.INVALID_ARGUMENT, "table_size_unsupported",
    )  # fmt: skip
    await _rejected(
        stub.CreateTournament(req(game="tic_tac_toe", format=pb.FORMAT_SWISS, rounds=2,
                                  time_control=pb.TimeControl(kind=pb.TimeControl.KIND_PER_MOVE,
                                                              seconds=0.01)), metadata=ORGANISER),
        C.INVALID_ARGUMENT, "bad_time_control",
    )  # fmt: skip
    for bad in (
        {"seconds": float("inf")},
        {"seconds": 60, "increment": float("nan")},
        {"seconds": 60, "delay": -1.0},
    ):  # found by the fuzz: INTERNAL before
        await _rejected(
            stub.CreateTournament(req(game="tic_tac_toe", format=pb.FORMAT_SWISS, rounds=2,
                                      time_control=pb.TimeControl(kind=pb.TimeControl.KIND_FISCHER,
                                                                  **bad)), metadata=ORGANISER),
            C.INVALID_ARGUMENT, "bad_time_control",
        )  # fmt: skip
    await _rejected(stub.CreateTournament(req(game="tic_tac_toe", format=pb.FORMAT_UNSPECIFIED),
                                          metadata=ORGANISER), C.INVALID_ARGUMENT, "unknown_format")  # fmt: skip
    await _rejected(stub.CreateTournament(req(game="tic_tac_toe", format=pb.FORMAT_SWISS, rounds=2),
                                          metadata=auth("guest:eve")), C.PERMISSION_DENIED, "organiser_only")  # fmt: skip
    listed = await stub.ListTournaments(pb.ListTournamentsRequest(), metadata=ORGANISER)
    assert list(listed.tournaments) == []  # nothing was created

    tid = await create(stub, "tic_tac_toe", pb.FORMAT_SWISS, rounds=2)
    alice, bob = auth("guest:alice"), auth("guest:bob")
    await stub.Register(pb.RegisterRequest(tournament_id=tid), metadata=alice)
    before = await _seq(stack, tid)
    await _rejected(stub.Register(pb.RegisterRequest(tournament_id=tid), metadata=alice),
                    C.FAILED_PRECONDITION, "already_registered")  # fmt: skip
    await _rejected(stub.Withdraw(pb.WithdrawRequest(tournament_id=tid, player="guest:alice"),
                                  metadata=bob), C.PERMISSION_DENIED, "not_allowed")  # fmt: skip
    await _rejected(stub.Withdraw(pb.WithdrawRequest(tournament_id=tid), metadata=bob),
                    C.FAILED_PRECONDITION, "not_registered")  # fmt: skip
    await _rejected(stub.Register(pb.RegisterRequest(tournament_id=tid, player="bot:x"),
                                  metadata=bob), C.PERMISSION_DENIED, "not_organiser")  # fmt: skip
    await _rejected(stub.Start(pb.StartRequest(tournament_id=tid), metadata=bob),
                    C.PERMISSION_DENIED, "not_organiser")  # fmt: skip
    await _rejected(stub.Start(pb.StartRequest(tournament_id=tid), metadata=ORGANISER),
                    C.FAILED_PRECONDITION, "not_enough_players")  # fmt: skip
    await _rejected(stub.GetTournament(pb.GetTournamentRequest(tournament_id="nope"),
                                       metadata=ORGANISER), C.NOT_FOUND, "tournament_not_found")  # fmt: skip
    await _rejected(stub.GetTournament(pb.GetTournamentRequest(tournament_id="a b"),
                                       metadata=ORGANISER), C.INVALID_ARGUMENT, "bad_tournament_id")  # fmt: skip
    assert await _seq(stack, tid) == before  # nothing appended
    await stub.Register(pb.RegisterRequest(tournament_id=tid), metadata=bob)
    await stub.Start(pb.StartRequest(tournament_id=tid), metadata=ORGANISER)
    before = await _seq(stack, tid)
    await _rejected(stub.Register(pb.RegisterRequest(tournament_id=tid), metadata=auth("guest:carol")),
                    C.FAILED_PRECONDITION, "registration_closed")  # fmt: skip
    await _rejected(stub.Start(pb.StartRequest(tournament_id=tid), metadata=ORGANISER),
                    C.FAILED_PRECONDITION, "already_started")  # fmt: skip
    events = await tournament_events(stack.nats_url, tid)
    assert not any(getattr(e, "player", "") == "guest:carol" for e in events)
    assert len(events) >= before and sum(isinstance(e, RoundStarted) for e in events) <= 1


async def test_the_fill_bot_plays_at_the_level_the_tournament_names(stack):
    await stack.replica()
    stub = stack.stub()
    await _rejected(create(stub, "tic_tac_toe", pb.FORMAT_SWISS, rounds=1, bot_fill=True,
                           bot_level="expert"),
                    grpc.StatusCode.INVALID_ARGUMENT, "bad_bot_level")  # fmt: skip
    greedy_before = REGISTRY.get_sample_value("bots_level_moves_total", {"level": "greedy"}) or 0
    tid = await create(stub, "tic_tac_toe", pb.FORMAT_SWISS, rounds=1, bot_fill=True,
                       bot_level="greedy")  # fmt: skip
    await register_bots(stub, tid, 3)  # bot:p0.. name no level: the worker's (random)
    started = await stub.Start(pb.StartRequest(tournament_id=tid), metadata=ORGANISER)
    assert started.options.bot_level == "greedy"
    assert f"bot:greedy-fill-{tid}" in {e.player for e in started.entrants}
    await finished(stub, tid)
    greedy = REGISTRY.get_sample_value("bots_level_moves_total", {"level": "greedy"}) or 0
    assert greedy > greedy_before  # the fill bot's moves, played at its level


async def test_bot_fill_and_late_registration(stack):
    await stack.replica()
    stub = stack.stub()
    tid = await create(stub, "tic_tac_toe", pb.FORMAT_SWISS, rounds=3, bot_fill=True,
                       late_registration_rounds=3)  # fmt: skip
    await register_bots(stub, tid, 3)
    started = await stub.Start(pb.StartRequest(tournament_id=tid), metadata=ORGANISER)
    assert len(started.entrants) == 4  # a bot evened the field
    assert any(e.player.startswith("bot:fill-") for e in started.entrants)
    late = await stub.Register(pb.RegisterRequest(tournament_id=tid, player="bot:late"),
                               metadata=ORGANISER)  # fmt: skip
    joined = next(e.joined_round for e in late.entrants if e.player == "bot:late")
    assert joined >= 2
    t = await finished(stub, tid)
    assert not t.rounds[0].byes  # 4 players in round 1
    for r in t.rounds:
        seated = [p for tb in r.tables for p in tb.players] + list(r.byes)
        assert ("bot:late" in seated) == (r.round >= joined)
