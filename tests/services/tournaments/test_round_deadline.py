"""A round's own deadline, through the real stack: a player who never moves,
clocks far longer than the round, and a short round deadline. The deadline
passes, the unfinished match is adjudicated by the rule (the seat the game
waits for loses), once, whatever the replicas, and the tournament goes on."""

from __future__ import annotations

import asyncio

import grpc
import msgspec
import nats

from services.match.model import KIND_ENDED, decode_commit
from services.matchmaking.ratings import decode_fact, rated_seats
from services.tournaments import formats
from services.tournaments.adapters import GrpcMatches
from services.tournaments.app import adjudication, result_event
from services.tournaments.model import (
    MatchAdjudicated,
    MatchResultRecorded,
    RoundDeadlinePassed,
    RoundStarted,
    Table,
)
from services.tournaments.ports import MatchEnd
from tabletop.tournaments.v1 import tournaments_pb2 as pb

from .conftest import (
    ORGANISER,
    TOKENS,
    finished,
    register_bots,
    tournament_events,
    until,
)
from .sim import Sim
from .test_crash import kill_at
from .test_service import _rejected

IDLE = "guest:idle"  # registered, never moves (no bot plays the seat)
HOUR = pb.TimeControl(kind=pb.TimeControl.KIND_PER_MOVE, seconds=3600)


async def _create(stub, deadline_s: float, rounds: int = 2) -> str:
    reply = await stub.CreateTournament(
        pb.CreateTournamentRequest(
            name="deadline", game="tic_tac_toe", format=pb.FORMAT_SWISS, rounds=rounds,
            options=pb.TournamentOptions(round_deadline_s=deadline_s), time_control=HOUR,
            seed="fixed-seed",
        ),
        metadata=ORGANISER,
    )  # fmt: skip
    return reply.tournament_id


async def _field(stub, tid: str) -> list[str]:
    bots = await register_bots(stub, tid, 3)
    await stub.Register(pb.RegisterRequest(tournament_id=tid, player=IDLE), metadata=ORGANISER)
    return [*bots, IDLE]


def _check_once(events: list, rounds: int) -> list[MatchAdjudicated]:
    """Each round's deadline passed once; the idle player's match of each
    round adjudicated once (the idle seat last, the other first); every
    other match recorded from its real result; no match both."""
    passed = [e for e in events if isinstance(e, RoundDeadlinePassed)]
    assert [e.round for e in passed] == list(range(1, rounds + 1))
    started = {e.round: e for e in events if isinstance(e, RoundStarted)}
    for e in passed:  # the deadline is the round's start plus round_deadline_s
        assert e.deadline_ms == started[e.round].at_ms + 3000
        assert e.at_ms >= e.deadline_ms
    judged = [e for e in events if isinstance(e, MatchAdjudicated)]
    assert [e.round for e in judged] == list(range(1, rounds + 1))
    for e in judged:
        assert e.reason == "round_deadline" and not e.void
        idle = e.players.index(IDLE)
        assert e.awaiting == (idle,)
        assert e.ranks[idle] == 2 and e.ranks[1 - idle] == 1
    recorded = [e.match_id for e in events if isinstance(e, MatchResultRecorded)]
    ids = [tb.match_id for r in started.values() for tb in r.tables]
    assert sorted(recorded + [e.match_id for e in judged]) == sorted(ids)
    return judged


async def test_the_round_deadline_adjudicates_a_stalled_match(stack):
    await stack.replica()
    await stack.replica()  # two replicas sweep: each step is appended once
    stub = stack.stub()
    tid = await _create(stub, 3.0)
    await _field(stub, tid)
    await stub.Start(pb.StartRequest(tournament_id=tid), metadata=ORGANISER)
    t = await finished(stub, tid, timeout=60)
    assert len(t.rounds) == 2 and all(r.completed and r.deadline_passed for r in t.rounds)
    assert all(r.deadline for r in t.rounds)
    events = await tournament_events(stack.nats_url, tid)
    judged = _check_once(events, 2)
    rows = {s.player: s for s in t.standings}
    assert rows[IDLE].points == 0 and rows[IDLE].played == 2
    assert t.standings[-1].player == IDLE
    assert sum(s.points for s in t.standings) == 4  # 4 matches, a point each (no void)
    for e in judged:
        await _ended_as_adjudicated(stack, e)


async def _ended_as_adjudicated(stack, e: MatchAdjudicated) -> None:
    """The match service ended the adjudicated match with the same result
    (one final commit, ended by the service); its MatchFinished fact says so,
    and the ratings consumer rates nobody for it."""
    matches = GrpcMatches(stack.match.address, TOKENS)
    try:
        end = await matches.result(e.match_id)
    finally:
        await matches.close()
    assert end is not None
    assert (end.players, end.ranks, end.scores) == (e.players, e.ranks, e.scores)
    assert end.reason == "adjudicated:round_deadline"
    nc = await nats.connect(stack.nats_url)
    try:
        js = nc.jetstream()
        last = decode_commit((await js.get_last_msg("MATCHES", f"match.{e.match_id}")).data)
        info = await js.stream_info("MATCHES", subjects_filter=f"match.{e.match_id}")
        msg = await js.get_last_msg("RESULTS", f"results.{e.match_id}")
    finally:
        await nc.close()
    # one final commit: the match's last, ended by the service
    assert (
        last.kind == KIND_ENDED and last.version + 1 == info.state.subjects[f"match.{e.match_id}"]
    )
    fact = decode_fact(msg.data)
    assert fact.reason == "adjudicated:round_deadline" and tuple(fact.ranks) == e.ranks
    rateable = msgspec.structs.replace(fact, players=("alice", "bob"), bots=(False, False))
    assert rated_seats(rateable) == []  # rated players or not: not rated


async def test_a_replica_killed_at_the_adjudication_is_taken_over(stack):
    first = await stack.replica()
    stub = stack.stub(first)
    tid = await _create(stub, 3.0, rounds=1)
    await _field(stub, tid)
    state = kill_at(first, "before_adjudicate")
    await stub.Start(pb.StartRequest(tournament_id=tid), metadata=ORGANISER)
    await until(lambda: asyncio.sleep(0, state["dead"]), timeout=60)
    await first.stop(0)
    events = await tournament_events(stack.nats_url, tid)
    assert [type(e) for e in events[-1:]] == [RoundDeadlinePassed]  # died right after it
    second = await stack.replica()
    t = await finished(stack.stub(second), tid, timeout=60)
    (judged,) = _check_once(await tournament_events(stack.nats_url, tid), 1)
    assert {s.player: s.points for s in t.standings}[IDLE] == 0
    await _ended_as_adjudicated(stack, judged)


async def test_a_replica_killed_between_ending_the_match_and_the_event_is_taken_over(stack):
    """Killed after EndMatch, before its append of MatchAdjudicated: the
    match is ended at the match service, the tournament has no event for it.
    The next replica finds it ended (GetMatch, or the MatchFinished fact
    redelivered) and appends the adjudication the match service stored, once.
    (The first replica's fact handling is made to fail, so the fact of the
    ended match cannot be recorded there before the kill: it is redelivered
    to the next one.)"""
    first = await stack.replica()
    stub = stack.stub(first)
    tid = await _create(stub, 3.0, rounds=1)
    await _field(stub, tid)
    state = kill_at(first, "after_end_match")

    async def no_facts(*_a, **_k):
        raise RuntimeError("this replica records no facts")  # nak: redelivered later

    first.app.record = no_facts  # only the sweep's own adjudication can record here
    await stub.Start(pb.StartRequest(tournament_id=tid), metadata=ORGANISER)
    await until(lambda: asyncio.sleep(0, state["dead"]), timeout=60)
    await first.stop(0)
    events = await tournament_events(stack.nats_url, tid)
    # died right after EndMatch: the deadline passed, the match is not adjudicated here
    # (the other table's finished match may have been recorded by the same sweep)
    assert RoundDeadlinePassed in [type(e) for e in events]
    assert not any(isinstance(e, MatchAdjudicated) for e in events)
    (judged_id,) = [tb.match_id for e in events if isinstance(e, RoundStarted) for tb in e.tables
                    if IDLE in tb.players]  # fmt: skip
    matches = GrpcMatches(stack.match.address, TOKENS)
    try:  # ended at the match service already
        assert (await matches.result(judged_id)).reason == "adjudicated:round_deadline"
    finally:
        await matches.close()
    second = await stack.replica()
    t = await finished(stack.stub(second), tid, timeout=60)
    (judged,) = _check_once(await tournament_events(stack.nats_url, tid), 1)
    assert {s.player: s.points for s in t.standings}[IDLE] == 0
    await _ended_as_adjudicated(stack, judged)


async def test_bad_round_deadlines_are_refused(stack):
    await stack.replica()
    stub = stack.stub()
    for bad in (-1.0, 0.5, float("inf"), float("nan"), 8 * 24 * 3600.0):
        await _rejected(_create(stub, bad), grpc.StatusCode.INVALID_ARGUMENT, "bad_round_deadline")
    race = pb.CreateTournamentRequest(
        game="tic_tac_toe", format=pb.FORMAT_SCORE_RACE,
        options=pb.TournamentOptions(race_seconds=10, round_deadline_s=5),
    )  # fmt: skip
    await _rejected(
        stub.CreateTournament(race, metadata=ORGANISER),
        grpc.StatusCode.INVALID_ARGUMENT,
        "bad_round_deadline",
    )
    listed = await stub.ListTournaments(pb.ListTournamentsRequest(), metadata=ORGANISER)
    assert list(listed.tournaments) == []


def test_a_result_ended_by_the_round_deadline_is_the_adjudication():
    players = ("p0", "p1")
    e = result_event(1, 2, "m", MatchEnd(players, (2, 1), (0.0, 1.0), "adjudicated:round_deadline"))
    assert isinstance(e, MatchAdjudicated) and (e.round, e.table, e.match_id) == (1, 2, "m")
    assert (e.ranks, e.scores, e.awaiting, e.void) == ((2, 1), (0.0, 1.0), (0,), False)
    void = result_event(
        1, 1, "m", MatchEnd(players, (1, 1), (0.0, 0.0), "adjudicated:round_deadline")
    )
    assert isinstance(void, MatchAdjudicated) and void.void and void.awaiting == ()
    played = result_event(1, 1, "m", MatchEnd(players, (1, 2), (1.0, 0.0), "three_in_a_row"))
    assert isinstance(played, MatchResultRecorded) and played.reason == "three_in_a_row"
    other = result_event(1, 1, "m", MatchEnd(players, (1, 2), (1.0, 0.0), "adjudicated:admin"))
    assert isinstance(other, MatchResultRecorded)  # ended by someone else: its result as stored


def test_the_adjudication_rule():
    assert adjudication(("a", "b"), (1,)) == ((1, 2), (1.0, 0.0), False)
    # four seats, two slow: they share last place
    assert adjudication(("a", "b", "c", "d"), (0, 2)) == ((3, 1, 3, 1), (0.0, 1.0, 0.0, 1.0), False)
    # everyone (or nobody that can be told) awaited: void, no points
    assert adjudication(("a", "b"), (0, 1)) == ((1, 1), (0.0, 0.0), True)
    assert adjudication(("a", "b"), ()) == ((1, 1), (0.0, 0.0), True)


def test_after_the_deadline_a_drawn_bracket_table_is_not_replayed_and_void_scores_nothing():
    sim = Sim("tic_tac_toe", "single_elimination", 2, max_games=3)
    sim.close()
    plan = formats.plan_next(sim.t, sim.game)
    players = tuple(plan.tables[0])
    sim._add(RoundStarted(round=1, tables=(Table(table=1, players=players, match_id="m1"),),
                          stage=plan.stage, at_ms=1000))  # fmt: skip
    sim._add(MatchResultRecorded(round=1, table=1, match_id="m1", players=players,
                                 ranks=(1, 1), scores=(0.0, 0.0)))  # fmt: skip
    tb = sim.t.rounds[0].tables[0]
    assert formats.needs_rematch(sim.t, tb)  # a draw is replayed while there is time
    sim._add(RoundDeadlinePassed(round=1, deadline_ms=4000))
    assert not formats.needs_rematch(sim.t, tb)
    assert formats.table_winner(sim.t, tb) == "p0"  # out of time: the better seed
    # a void adjudication gives nobody a point
    sim2 = Sim("tic_tac_toe", "swiss", 2, rounds=1)
    sim2.close()
    sim2._add(RoundStarted(round=1, tables=(Table(table=1, players=("p0", "p1"), match_id="m"),)))
    sim2._add(RoundDeadlinePassed(round=1, deadline_ms=1))
    sim2._add(MatchAdjudicated(round=1, table=1, match_id="m", players=("p0", "p1"),
                               ranks=(1, 1), scores=(0.0, 0.0), void=True))  # fmt: skip
    assert sim2.t.recorded("m")
    assert [(s.points, s.played) for s in formats.standings(sim2.t)] == [(0.0, 1), (0.0, 1)]


async def test_a_stalled_final_table_is_adjudicated_in_an_elimination_of_tables(stack):
    await stack.replica()
    stub = stack.stub()
    reply = await stub.CreateTournament(
        pb.CreateTournamentRequest(
            name="deadline", game="dice_forge", format=pb.FORMAT_SINGLE_ELIMINATION,
            options=pb.TournamentOptions(table_size=4, advance=2, round_deadline_s=3),
            time_control=HOUR, seed="fixed-seed",
        ),
        metadata=ORGANISER,
    )  # fmt: skip
    tid = reply.tournament_id
    await register_bots(stub, tid, 3)
    await stub.Register(pb.RegisterRequest(tournament_id=tid, player=IDLE), metadata=ORGANISER)
    await stub.Start(pb.StartRequest(tournament_id=tid), metadata=ORGANISER)
    t = await finished(stub, tid, timeout=60)
    (final,) = t.rounds  # four players: one final table
    assert final.deadline_passed and final.tables[0].finished
    events = await tournament_events(stack.nats_url, tid)
    (judged,) = [e for e in events if isinstance(e, MatchAdjudicated)]
    idle = judged.players.index(IDLE)
    # the game waits for the idle seat alone: it is last, the three others share first
    assert judged.awaiting == (idle,) and not judged.void
    assert judged.ranks[idle] == 4 and sorted(judged.ranks) == [1, 1, 1, 4]
    assert t.standings[-1].player == IDLE and t.standings[-1].rank == 4
    await _ended_as_adjudicated(stack, judged)
    assert {s.rank for s in t.standings[:3]} == {1, 2, 3}  # shared first place, then by seed
