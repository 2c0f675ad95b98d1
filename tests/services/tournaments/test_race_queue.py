"""A score race that queues its entrants through the real matchmaker: the
tournament service enqueues each entrant (service token) in the race's own
pool, follows the ticket to its match, queues the entrant again after each
match while the window is open (up to race_max_matches), and counts only
those matches. Entrants are players (not bots): each plays its seat through
the real match service with its own token, as a client would."""

from __future__ import annotations

import asyncio
import dataclasses
import json

import grpc
import pytest
import redis.asyncio as redis

from engine_core.bots import RandomBot
from engine_core.registry import default_registry
from services.bots.player import Identity, SeatPlayer
from services.matchmaking.server import MatchmakingProcess
from services.matchmaking.settings import MatchmakingSettings
from services.tournaments.adapters import GrpcMatches
from services.tournaments.model import (
    MatchResultRecorded,
    RaceMatched,
    RaceQueued,
    RaceTicketEnded,
    TimeControl,
    TournamentFinished,
)
from tabletop.match.v1 import match_pb2, match_pb2_grpc
from tabletop.matchmaking.v1 import matchmaking_pb2 as mm_pb
from tabletop.matchmaking.v1 import matchmaking_pb2_grpc as mm_grpc
from tabletop.tournaments.v1 import tournaments_pb2 as pb

from .conftest import ORGANISER, SECRET, TOKENS, auth, finished, tournament_events, until
from .test_crash import kill_at
from .test_service import _rejected

ENTRANTS = [f"guest:racer{i}" for i in range(4)]


@pytest.fixture
async def matchmaker(stack):
    settings = MatchmakingSettings(
        redis_url=stack.redis_url,
        jwt_secret=SECRET,
        tick_s=0.05,
        watch_update_s=0.2,
        watch_grace_s=2.0,
    )
    settings = dataclasses.replace(
        settings, match_addr=stack.match.address, nats_url=stack.nats_url
    )
    proc = await MatchmakingProcess(settings).start()
    try:
        yield proc
    finally:
        await proc.stop()


def mm_stub(stack, matchmaker) -> mm_grpc.MatchmakingServiceStub:
    channel = grpc.aio.insecure_channel(f"127.0.0.1:{matchmaker.port}")
    stack.channels.append(channel)  # closed with the stack
    return mm_grpc.MatchmakingServiceStub(channel)


class Players:
    """Plays every race match of the entrants as they appear in the stream."""

    def __init__(self, stack, tid: str) -> None:
        self.stack, self.tid = stack, tid
        self.channel = grpc.aio.insecure_channel(stack.match.address)
        self.stub = match_pb2_grpc.MatchServiceStub(self.channel)
        self.playing: dict[tuple[str, str], asyncio.Task] = {}
        self.game = default_registry().get("tic_tac_toe")

    async def follow(self, stop: asyncio.Event) -> None:
        while not stop.is_set():
            for e in await tournament_events(self.stack.nats_url, self.tid):
                if isinstance(e, RaceMatched) and (e.match_id, e.player) not in self.playing:
                    self.playing[e.match_id, e.player] = asyncio.create_task(
                        self._play(e.match_id, e.player)
                    )
            await asyncio.sleep(0.1)

    async def _play(self, match_id: str, player: str) -> None:
        got = await self.stub.GetMatch(
            match_pb2.GetMatchRequest(match_id=match_id), metadata=auth(player)
        )
        seat = [s.player for s in got.seats].index(player)
        await SeatPlayer(
            self.stub, match_id, self.game, Identity(player, TOKENS), seat, RandomBot()
        ).play()

    async def close(self) -> None:
        for task in self.playing.values():
            task.cancel()
        await asyncio.gather(*self.playing.values(), return_exceptions=True)
        await self.channel.close()


async def test_a_queued_race_plays_its_entrants_through_the_matchmaker(stack, matchmaker):
    await stack.replica(matchmaking_addr=f"127.0.0.1:{matchmaker.port}")
    stub = stack.stub()
    reply = await stub.CreateTournament(
        pb.CreateTournamentRequest(
            name="queued race", game="tic_tac_toe", format=pb.FORMAT_SCORE_RACE,
            options=pb.TournamentOptions(race_seconds=10, race_scoring="sum", race_queue=True,
                                         race_max_matches=2),
        ),
        metadata=ORGANISER,
    )  # fmt: skip
    tid = reply.tournament_id
    for p in ENTRANTS:
        await stub.Register(pb.RegisterRequest(tournament_id=tid, player=p), metadata=ORGANISER)
    # An outsider queues in the public queue for the same game and clock: the
    # race's pool keeps the entrants among themselves.
    mm = mm_stub(stack, matchmaker)
    outsider = await mm.Enqueue(
        mm_pb.EnqueueRequest(game="tic_tac_toe", player_counts=[2], time_control="none"),
        metadata=auth("guest:outsider"),
    )
    await stub.Start(pb.StartRequest(tournament_id=tid), metadata=ORGANISER)
    players = Players(stack, tid)
    stop = asyncio.Event()
    follower = asyncio.create_task(players.follow(stop))
    try:
        # A match between two entrants made elsewhere in the window: not the
        # race's, so it must not count.
        matches = GrpcMatches(stack.match.address, TOKENS)
        other = await matches.create("tic_tac_toe", ENTRANTS[:2], "", TimeControl(), False, "x")
        await matches.close()

        async def everyone_played_twice():
            events = await tournament_events(stack.nats_url, tid)
            counted = [e for e in events if isinstance(e, MatchResultRecorded)]
            return len(counted) == 4  # 4 entrants x 2 matches / 2 seats

        await until(everyone_played_twice, timeout=60)  # fmt: skip
        t = await finished(stub, tid, timeout=60)
    finally:
        stop.set()
        await follower
        await players.close()
    events = await tournament_events(stack.nats_url, tid)
    queued = [e for e in events if isinstance(e, RaceQueued)]
    matched = [e for e in events if isinstance(e, RaceMatched)]
    results = [e for e in events if isinstance(e, MatchResultRecorded)]
    # each entrant queued, matched and counted exactly twice (the cap)
    for p in ENTRANTS:
        assert sum(e.player == p for e in matched) == 2, p
        assert sum(e.player == p for e in queued) >= 2
    race_ids = {e.match_id for e in matched}
    assert len(race_ids) == 4
    assert {e.match_id for e in results} == race_ids  # only the race's own matches count
    assert other not in race_ids
    for e in results:
        assert set(e.players) <= set(ENTRANTS)  # the pool: entrants meet only each other
    rows = {s.player: s for s in t.standings}
    assert all(rows[p].played == 2 for p in ENTRANTS)
    assert sum(isinstance(e, TournamentFinished) for e in events) == 1
    # the outsider was never seated with an entrant
    state = await mm.CancelTicket(
        mm_pb.CancelTicketRequest(ticket_id=outsider.ticket_id), metadata=auth("guest:outsider")
    )
    assert state.state == mm_pb.TICKET_STATE_CANCELLED


async def test_queue_options_are_checked(stack, matchmaker):
    await stack.replica(matchmaking_addr=f"127.0.0.1:{matchmaker.port}")
    stub = stack.stub()
    C = grpc.StatusCode
    for fmt, opts in [
        (pb.FORMAT_SWISS, pb.TournamentOptions(race_queue=True)),
        (pb.FORMAT_SCORE_RACE, pb.TournamentOptions(race_seconds=5, race_max_matches=20_000)),
    ]:
        await _rejected(
            stub.CreateTournament(
                pb.CreateTournamentRequest(game="tic_tac_toe", format=fmt, rounds=2, options=opts),
                metadata=ORGANISER,
            ),
            C.INVALID_ARGUMENT,
            "bad_race_queue",
        )
    # a pool is for services: a player cannot slip into a race's pool
    mm = mm_stub(stack, matchmaker)
    await _rejected(
        mm.Enqueue(
            mm_pb.EnqueueRequest(game="tic_tac_toe", pool="tournament:x"),
            metadata=auth("guest:sneaky"),
        ),
        C.PERMISSION_DENIED,
        "pool_service_only",
    )


async def test_a_replica_killed_after_enqueueing_is_taken_over(stack, matchmaker):
    addr = f"127.0.0.1:{matchmaker.port}"
    first = await stack.replica(matchmaking_addr=addr)
    stub = stack.stub(first)
    reply = await stub.CreateTournament(
        pb.CreateTournamentRequest(
            name="race", game="tic_tac_toe", format=pb.FORMAT_SCORE_RACE,
            options=pb.TournamentOptions(race_seconds=8, race_queue=True, race_max_matches=1),
        ),
        metadata=ORGANISER,
    )  # fmt: skip
    tid = reply.tournament_id
    pair = ENTRANTS[:2]
    # one entrant first (alone in the pool its ticket searches on while no
    # replica runs); the other registers once the race has been taken over
    await stub.Register(pb.RegisterRequest(tournament_id=tid, player=pair[0]), metadata=ORGANISER)
    state = kill_at(first, "after_race_enqueue")  # enqueued, RaceQueued not appended
    # started through a replica without a matchmaker (it leaves the queueing
    # to those with one), so the first to queue is the one that dies
    bare = await stack.replica(matchmaking_addr="")
    await stack.stub(bare).Start(pb.StartRequest(tournament_id=tid), metadata=ORGANISER)
    await until(lambda: asyncio.sleep(0, state["dead"]), timeout=30)
    await first.stop(0)
    assert not [
        e for e in await tournament_events(stack.nats_url, tid) if isinstance(e, RaceQueued)
    ]
    second = await stack.replica(matchmaking_addr=addr)
    (queued,) = await until(
        lambda: _of(stack, tid, RaceQueued), timeout=20
    )  # the same idempotency key answered the ticket made before the kill
    assert queued.player == pair[0]
    await stack.stub(second).Register(
        pb.RegisterRequest(tournament_id=tid, player=pair[1]), metadata=ORGANISER
    )
    players = Players(stack, tid)
    stop = asyncio.Event()
    follower = asyncio.create_task(players.follow(stop))
    try:
        t = await finished(stack.stub(second), tid, timeout=60)
    finally:
        stop.set()
        await follower
        await players.close()
    events = await tournament_events(stack.nats_url, tid)
    queued = [e for e in events if isinstance(e, RaceQueued)]
    # the ticket made before the kill is the one recorded (its key answered
    # its id): one ticket per entrant, one match of the two
    assert sorted(e.player for e in queued) == sorted(pair)
    matched = [e for e in events if isinstance(e, RaceMatched)]
    assert len(matched) == 2 and len({e.match_id for e in matched}) == 1
    assert [e.match_id for e in events if isinstance(e, MatchResultRecorded)] == [
        matched[0].match_id
    ]
    assert all(s.played == 1 for s in t.standings)


async def pool_tickets(redis_url: str, tid: str) -> list[dict[str, str]]:
    """Every ticket the matchmaker holds in the race's pool (ended ones too)."""
    client = redis.from_url(redis_url, decode_responses=True)
    try:
        found = []
        async for key in client.scan_iter("mm:t:*"):
            h = await client.hgetall(key)
            if h.get("pool") == f"tournament:{tid}":
                found.append(h)
        return found
    finally:
        await client.aclose()


@pytest.mark.parametrize("orphan", ["matched", "finished"])
async def test_a_ticket_matched_while_no_replica_had_recorded_it_still_counts(
    stack, matchmaker, orphan
):
    """A replica dies between the Enqueue and the RaceQueued of both entrants;
    the matchmaker matches the two orphan tickets (and, ``finished``, the
    match is even played to its end, its MatchFinished fact going by while no
    tournament knew the match) before another replica takes over. The same
    idempotency key answers the takeover with those tickets: they are the
    ones recorded, the match counts, and no entrant is ever in two tickets."""
    addr = f"127.0.0.1:{matchmaker.port}"
    first = await stack.replica(matchmaking_addr=addr)
    stub = stack.stub(first)
    reply = await stub.CreateTournament(
        pb.CreateTournamentRequest(
            name="race", game="tic_tac_toe", format=pb.FORMAT_SCORE_RACE,
            options=pb.TournamentOptions(race_seconds=10, race_queue=True, race_max_matches=1),
        ),
        metadata=ORGANISER,
    )  # fmt: skip
    tid = reply.tournament_id
    pair = ENTRANTS[:2]
    for p in pair:
        await stub.Register(pb.RegisterRequest(tournament_id=tid, player=p), metadata=ORGANISER)
    # both entrants are enqueued in one batch, then the replica dies before
    # appending either RaceQueued
    state = kill_at(first, "after_race_enqueue")
    bare = await stack.replica(matchmaking_addr="")  # leaves the queueing to the first
    await stack.stub(bare).Start(pb.StartRequest(tournament_id=tid), metadata=ORGANISER)
    await until(lambda: asyncio.sleep(0, state["dead"]), timeout=30)
    await first.stop(0)

    async def orphans_matched():
        tickets = await pool_tickets(stack.redis_url, tid)
        done = len(tickets) == 2 and all(h["state"] == "matched" for h in tickets)
        return tickets if done else None

    orphans = await until(orphans_matched, timeout=20)
    (match_id,) = {h["match_id"] for h in orphans}
    assert not await _of(stack, tid, RaceQueued)  # no replica recorded them
    players = Players(stack, tid)
    if orphan == "finished":
        await asyncio.gather(*(players._play(match_id, p) for p in pair))
        matches = GrpcMatches(stack.match.address, TOKENS)
        try:
            assert await until(lambda: matches.result(match_id), timeout=20)
        finally:
            await matches.close()
    second = await stack.replica(matchmaking_addr=addr)
    stop = asyncio.Event()
    follower = asyncio.create_task(players.follow(stop))
    try:
        t = await finished(stack.stub(second), tid, timeout=60)
    finally:
        stop.set()
        await follower
        await players.close()
    events = await tournament_events(stack.nats_url, tid)
    queued = [e for e in events if isinstance(e, RaceQueued)]
    # the takeover recorded the orphan tickets themselves, once each
    assert sorted((e.player, e.ticket_id) for e in queued) == sorted(
        (json.loads(h["players"])[0], h["id"]) for h in orphans
    )
    # and the matchmaker never held a second ticket of either entrant
    assert len(await pool_tickets(stack.redis_url, tid)) == 2
    matched = [e for e in events if isinstance(e, RaceMatched)]
    assert sorted(e.player for e in matched) == sorted(pair)
    assert {e.match_id for e in matched} == {match_id}
    assert [e.match_id for e in events if isinstance(e, MatchResultRecorded)] == [match_id]
    assert all(s.played == 1 for s in t.standings)


async def test_an_entrant_searching_in_a_public_queue_is_not_adopted(stack, matchmaker):
    """An entrant who queued themselves publicly holds a ticket the race did
    not make: it is never recorded as the race's (a public match would then
    count); the entrant is queued in the pool once that ticket ends."""
    await stack.replica(matchmaking_addr=f"127.0.0.1:{matchmaker.port}")
    stub = stack.stub()
    reply = await stub.CreateTournament(
        pb.CreateTournamentRequest(
            name="race", game="tic_tac_toe", format=pb.FORMAT_SCORE_RACE,
            options=pb.TournamentOptions(race_seconds=30, race_queue=True, race_max_matches=1),
        ),
        metadata=ORGANISER,
    )  # fmt: skip
    tid = reply.tournament_id
    busy, free = ENTRANTS[:2]
    for p in (busy, free):
        await stub.Register(pb.RegisterRequest(tournament_id=tid, player=p), metadata=ORGANISER)
    mm = mm_stub(stack, matchmaker)
    public = await mm.Enqueue(
        mm_pb.EnqueueRequest(game="tic_tac_toe", player_counts=[2], time_control="5m"),
        metadata=auth(busy),
    )  # another clock than the race's: it meets nobody here
    await stub.Start(pb.StartRequest(tournament_id=tid), metadata=ORGANISER)
    # both were due in the same step: once free's ticket is appended, busy's
    # Enqueue has been answered too
    (first,) = await until(lambda: _of(stack, tid, RaceQueued), timeout=20)
    assert first.player == free
    assert public.ticket_id not in {e.ticket_id for e in await _of(stack, tid, RaceQueued)}
    await mm.CancelTicket(
        mm_pb.CancelTicketRequest(ticket_id=public.ticket_id), metadata=auth(busy)
    )

    async def both_matched():
        matched = await _of(stack, tid, RaceMatched)
        return matched if len(matched) == 2 else None

    matched = await until(both_matched, timeout=20)
    queued = {e.player: e.ticket_id for e in await _of(stack, tid, RaceQueued)}
    assert queued.keys() == {busy, free} and queued[busy] != public.ticket_id
    assert len({e.match_id for e in matched}) == 1  # the two entrants, in the pool


async def _of(stack, tid: str, kind) -> list:
    return [e for e in await tournament_events(stack.nats_url, tid) if isinstance(e, kind)]


def test_who_is_due_for_the_queue():
    from services.match.model import now_ms
    from services.tournaments.app import TournamentApp
    from services.tournaments.model import (
        Options,
        PlayerRegistered,
        PlayerWithdrawn,
        RaceTicketEnded,
        RegistrationClosed,
        TournamentCreated,
        fold,
    )

    opts = Options(race_seconds=60, race_queue=True, race_max_matches=1)
    created = TournamentCreated(tournament_id="t", name="r", game="tic_tac_toe",
                                format="score_race", rounds=0, seed="s", options=opts)  # fmt: skip
    players = ["guest:a", "guest:b", "guest:c", "bot:d"]
    evs = [created, *(PlayerRegistered(player=p) for p in players)]
    evs.append(RegistrationClosed(seeds=tuple(players), at_ms=now_ms()))
    t = fold(list(enumerate(evs, 1)))
    app = TournamentApp.__new__(TournamentApp)
    app._race_refused = set()
    assert app.race_due(t) == ["guest:a", "guest:b", "guest:c"]  # never a bot
    seq = len(evs)
    for e in [
        RaceQueued(player="guest:a", ticket_id="k1"),  # searching: not due
        RaceQueued(player="guest:b", ticket_id="k2"),
        RaceMatched(player="guest:b", ticket_id="k2", match_id="m1"),  # playing: not due
        PlayerWithdrawn(player="guest:c"),  # withdrawn: never again
    ]:
        seq += 1
        t.apply(seq, e)
    assert app.race_due(t) == []
    t.apply(seq + 1, RaceTicketEnded(player="guest:a", ticket_id="k1", state="expired"))
    assert app.race_due(t) == ["guest:a"]  # expired unmatched: queued again
    t.apply(seq + 2, MatchResultRecorded(round=0, table=0, match_id="m1", players=("guest:b",),
                                         ranks=(1,), scores=(1.0,)))  # fmt: skip
    assert app.race_due(t) == ["guest:a"]  # b played its one match (race_max_matches 1)


async def test_an_entrant_who_withdraws_is_not_queued_again(stack, matchmaker):
    await stack.replica(matchmaking_addr=f"127.0.0.1:{matchmaker.port}")
    stub = stack.stub()
    reply = await stub.CreateTournament(
        pb.CreateTournamentRequest(
            name="race", game="tic_tac_toe", format=pb.FORMAT_SCORE_RACE,
            options=pb.TournamentOptions(race_seconds=30, race_queue=True),
        ),
        metadata=ORGANISER,
    )  # fmt: skip
    tid = reply.tournament_id
    loner = ENTRANTS[0]  # alone in the race's pool: searching until it withdraws
    await stub.Register(pb.RegisterRequest(tournament_id=tid, player=loner), metadata=ORGANISER)
    await stub.Start(pb.StartRequest(tournament_id=tid), metadata=ORGANISER)

    async def events_of(kind):
        return [e for e in await tournament_events(stack.nats_url, tid) if isinstance(e, kind)]

    (queued,) = await until(lambda: events_of(RaceQueued), timeout=20)
    await stub.Withdraw(pb.WithdrawRequest(tournament_id=tid, player=loner), metadata=ORGANISER)
    (ended,) = await until(lambda: events_of(RaceTicketEnded), timeout=20)
    assert ended.ticket_id == queued.ticket_id and ended.state == "cancelled"
    # the matchmaker agrees, and nobody queues the entrant again
    mm = mm_stub(stack, matchmaker)
    last = None
    async for u in mm.WatchTicket(
        mm_pb.WatchTicketRequest(ticket_id=queued.ticket_id), metadata=auth(loner)
    ):
        last = u
    assert last is not None and last.state == mm_pb.TICKET_STATE_CANCELLED
    again = await mm.Enqueue(
        mm_pb.EnqueueRequest(game="tic_tac_toe", player_counts=[2]), metadata=auth(loner)
    )  # the entrant holds no ticket (one open ticket per player): it may queue itself
    assert again.ticket_id != queued.ticket_id
    assert len(await events_of(RaceQueued)) == 1


def test_the_race_ticket_keys_are_deterministic_and_bounded():
    from services.tournaments.app import RACE_KEY_CHARS, race_ticket_key
    from services.tournaments.model import Options, RegistrationClosed, TournamentCreated, fold

    assert race_ticket_key("t1", "guest:a", 0) == "t1:race:guest:a:0"
    assert race_ticket_key("t1", "guest:a", 1) != race_ticket_key("t1", "guest:a", 0)
    assert race_ticket_key("t1", "guest:a", 0) != race_ticket_key("t2", "guest:a", 0)
    tid, long_a, long_b = "t" * 64, "p" * 199 + "a", "p" * 199 + "b"
    ka, kb = race_ticket_key(tid, long_a, 3), race_ticket_key(tid, long_b, 3)
    assert len(ka) <= RACE_KEY_CHARS and ka != kb and ka == race_ticket_key(tid, long_a, 3)
    # n is the entrant's RaceQueued so far, read from the stream
    opts = Options(race_seconds=60, race_queue=True)
    created = TournamentCreated(tournament_id="t", name="r", game="tic_tac_toe",
                                format="score_race", rounds=0, seed="s", options=opts)  # fmt: skip
    t = fold([(1, created), (2, RegistrationClosed(seeds=(), at_ms=0))])
    assert t.race_queued_of("guest:a") == 0
    t.apply(3, RaceQueued(player="guest:a", ticket_id="k1"))
    t.apply(4, RaceTicketEnded(player="guest:a", ticket_id="k1", state="expired"))
    t.apply(5, RaceQueued(player="guest:a", ticket_id="k2"))
    assert t.race_queued_of("guest:a") == 2 and t.race_queued_of("guest:b") == 0
