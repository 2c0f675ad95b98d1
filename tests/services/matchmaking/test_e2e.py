"""The whole path with the real match service: tickets -> CreateMatch -> play
(bots by the bot worker) -> MatchFinished on JetStream -> ratings."""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import random
from collections.abc import AsyncIterator

import grpc
import pytest
from prometheus_client import REGISTRY

from engine_core.bots import RandomBot, bot_for
from engine_core.registry import default_registry
from services.bots.player import Identity, SeatPlayer, level_of
from services.bots.settings import BotSettings
from services.bots.worker import GROUP, JOBS, BotWorker
from services.common.auth import AuthSettings
from services.common.servers import free_port
from services.match.server import MatchServer
from services.match.settings import MatchSettings
from services.matchmaking.match_client import GrpcMatchCreator, ServiceToken
from services.matchmaking.matchmaker import Matchmaker
from services.matchmaking.server import MatchmakingProcess
from services.matchmaking.store import MATCHED, NewTicket, TicketStore
from tabletop.match.v1 import match_pb2, match_pb2_grpc
from tabletop.matchmaking.v1 import matchmaking_pb2 as pb
from tabletop.matchmaking.v1 import matchmaking_pb2_grpc as pb_grpc

from .conftest import SECRET, TOKENS, auth, run_until_settled, until
from .test_api import reason
from .test_ratings import DEFAULT_MU


@pytest.fixture
async def match_server(valkey_url: str, nats_url: str) -> AsyncIterator[MatchServer]:
    settings = MatchSettings(
        nats_url=nats_url,
        redis_url=valkey_url[:-1] + "1",  # its cache in another database
        grace_s=0.2,
        players_may_create=False,
        auth=AuthSettings(secret=SECRET),
    )
    server = await MatchServer(settings).start()
    try:
        yield server
    finally:
        await server.stop(0.2)


@contextlib.asynccontextmanager
async def mm_process(settings, match_server, nats_url) -> AsyncIterator[MatchmakingProcess]:
    s = dataclasses.replace(
        settings, match_addr=match_server.address, nats_url=nats_url, jwt_secret=SECRET
    )
    proc = await MatchmakingProcess(s).start()
    try:
        yield proc
    finally:
        await proc.stop()


async def watch_until_done(stub, player: str, ticket: str) -> pb.TicketUpdate:
    last = None
    async for u in stub.WatchTicket(pb.WatchTicketRequest(ticket_id=ticket), metadata=auth(player)):
        last = u
    assert last is not None
    return last


async def play_as(match_stub, match_id: str, player: str, seat: int) -> int:
    game = default_registry().get("tic_tac_toe")
    p = SeatPlayer(match_stub, match_id, game, Identity(player, TOKENS), seat, RandomBot())
    await p.play()
    return p.moves


async def test_a_bot_filled_match_is_played_to_the_end(
    settings, match_server, nats_url, rclient, js
) -> None:
    s = dataclasses.replace(settings, bot_fill_after_s=0.2)
    bots = BotSettings(
        redis_url=s.redis_url,
        match_addr=match_server.address,
        jwt_secret=SECRET,
        kind="greedy",
    )
    worker = await BotWorker(bots).start()
    try:
        async with (
            mm_process(s, match_server, nats_url) as proc,
            grpc.aio.insecure_channel(f"127.0.0.1:{proc.port}") as ch,
            grpc.aio.insecure_channel(match_server.address) as mch,
        ):
            stub = pb_grpc.MatchmakingServiceStub(ch)
            t = await stub.Enqueue(
                pb.EnqueueRequest(game="tic_tac_toe", allow_bots=True), metadata=auth("alice")
            )
            done = await watch_until_done(stub, "alice", t.ticket_id)
            assert done.state == pb.TICKET_STATE_MATCHED and done.matched.bots == 1
            match_id, seat = done.matched.match_id, done.matched.seat
            mstub = match_pb2_grpc.MatchServiceStub(mch)
            # alice plays her seat (random moves); the worker plays the bot's.
            moves = await asyncio.wait_for(play_as(mstub, match_id, "alice", seat), 30)
            state = await mstub.GetMatch(
                match_pb2.GetMatchRequest(match_id=match_id), metadata=auth("alice")
            )
            assert state.status == match_pb2.MATCH_STATUS_FINISHED
            bot_seats = [x for x in state.seats if x.bot]
            assert len(bot_seats) == 1 and bot_seats[0].player.startswith("bot:")
            assert state.version >= moves + 1

            async def acked() -> bool:
                pending = await rclient.xpending(JOBS, GROUP)
                return worker.finished == 1 and pending["pending"] == 0

            await until(acked)
            # The fact reached the ratings consumer: one human, so nobody is rated.
            await until(lambda: _seen(rclient, match_id))
            r = await stub.GetRating(
                pb.GetRatingRequest(player_id="alice", game="tic_tac_toe"), metadata=auth("alice")
            )
            assert r.matches == 0 and r.mu == pytest.approx(DEFAULT_MU)
            assert not await rclient.exists(f"mm:r:tic_tac_toe:{bot_seats[0].player}")
    finally:
        await worker.stop()


def _level_moves(level: str) -> float:
    return REGISTRY.get_sample_value("bots_level_moves_total", {"level": level}) or 0.0


async def test_a_ticket_asking_for_search_bots_is_played_by_search_bots(
    settings, match_server, nats_url, rclient
) -> None:
    """The level travels from the ticket to the bot ids of the match, and the
    worker plays those seats at it (its moves are counted under the level)."""
    s = dataclasses.replace(settings, bot_fill_after_s=0.2, bot_level="random")
    bots = BotSettings(
        redis_url=s.redis_url,
        match_addr=match_server.address,
        jwt_secret=SECRET,
        kind="random",
        search_time_s=0.002,
        search_iterations=3,
    )
    before = {lv: _level_moves(lv) for lv in ("random", "greedy", "search")}
    worker = await BotWorker(bots).start()
    try:
        async with (
            mm_process(s, match_server, nats_url) as proc,
            grpc.aio.insecure_channel(f"127.0.0.1:{proc.port}") as ch,
            grpc.aio.insecure_channel(match_server.address) as mch,
        ):
            stub = pb_grpc.MatchmakingServiceStub(ch)
            with pytest.raises(grpc.aio.AioRpcError) as e:
                await stub.Enqueue(
                    pb.EnqueueRequest(game="dice_forge", allow_bots=True, bot_level="hard"),
                    metadata=auth("alice"),
                )
            assert e.value.code() == grpc.StatusCode.INVALID_ARGUMENT
            assert reason(e.value) == "bad_bot_level"
            assert await rclient.zcard("mm:exp") == 0  # nothing was queued
            t = await stub.Enqueue(
                pb.EnqueueRequest(
                    game="dice_forge", player_counts=[3], allow_bots=True, bot_level="search"
                ),
                metadata=auth("alice"),
            )
            done = await watch_until_done(stub, "alice", t.ticket_id)
            assert done.state == pb.TICKET_STATE_MATCHED
            assert done.matched.bots == 2 and done.matched.bot_level == "search"
            match_id, seat = done.matched.match_id, done.matched.seat
            mstub = match_pb2_grpc.MatchServiceStub(mch)
            state = await mstub.GetMatch(
                match_pb2.GetMatchRequest(match_id=match_id), metadata=auth("alice")
            )
            bot_seats = sorted(x.player for x in state.seats if x.bot)
            assert bot_seats == ["bot:search-1", "bot:search-2"]
            # alice plays her seat with the greedy bot; the worker plays the others.
            game = default_registry().get("dice_forge")
            me = SeatPlayer(
                mstub,
                match_id,
                game,
                Identity("alice", TOKENS),
                seat,
                bot_for("greedy", game),
                level="greedy",
            )
            await asyncio.wait_for(me.play(), 120)
            await until(lambda: _worker_done(worker), timeout=30)
            assert worker.failed == 0
    finally:
        await worker.stop()
    moved = {lv: _level_moves(lv) - before[lv] for lv in before}
    assert moved["search"] > 0, "the worker played the bot seats at the search level"
    assert moved["random"] == 0 and moved["greedy"] == me.moves


async def test_the_worker_plays_a_game_with_hidden_information(
    settings, match_server, nats_url, rclient
) -> None:
    bots = BotSettings(
        redis_url=settings.redis_url,
        match_addr=match_server.address,
        jwt_secret=SECRET,
    )
    worker = await BotWorker(bots).start()
    try:
        async with grpc.aio.insecure_channel(match_server.address) as mch:
            mstub = match_pb2_grpc.MatchServiceStub(mch)
            service = (("authorization", f"Bearer {ServiceToken(TOKENS)()}"),)
            players = ["bot:random-1", "bot:random-2"]
            created = await mstub.CreateMatch(
                match_pb2.CreateMatchRequest(game="arcane_academy", players=players),
                metadata=service,
            )
            # As the matchmaker hands a bot-filled match over.
            await rclient.xadd(
                JOBS,
                {
                    "match_id": created.match_id,
                    "game": "arcane_academy",
                    "bots": '{"bot:random-1": 0, "bot:random-2": 1}',
                },
            )

            async def finished() -> bool:
                m = await mstub.GetMatch(
                    match_pb2.GetMatchRequest(match_id=created.match_id), metadata=service
                )
                return m.status == match_pb2.MATCH_STATUS_FINISHED

            await until(finished, timeout=60, every=0.2)
            await until(lambda: _worker_done(worker))
            assert worker.failed == 0
    finally:
        await worker.stop()


async def test_the_worker_plays_each_seat_at_the_level_its_id_names(
    settings, match_server, nats_url, rclient
) -> None:
    """A search bot (a tiny time budget, in the worker's thread pool) and a greedy
    bot play a hidden-information game to its end from their views alone."""
    bots = BotSettings(
        redis_url=settings.redis_url,
        match_addr=match_server.address,
        jwt_secret=SECRET,
        search_time_s=0.002,
        search_iterations=3,
    )
    worker = await BotWorker(bots).start()
    try:
        async with grpc.aio.insecure_channel(match_server.address) as mch:
            mstub = match_pb2_grpc.MatchServiceStub(mch)
            service = (("authorization", f"Bearer {ServiceToken(TOKENS)()}"),)
            players = ["bot:search-1", "bot:greedy-2"]
            created = await mstub.CreateMatch(
                match_pb2.CreateMatchRequest(game="dwarves_duel", players=players),
                metadata=service,
            )
            await rclient.xadd(
                JOBS,
                {
                    "match_id": created.match_id,
                    "game": "dwarves_duel",
                    "bots": '{"bot:search-1": 0, "bot:greedy-2": 1}',
                },
            )

            async def finished() -> bool:
                m = await mstub.GetMatch(
                    match_pb2.GetMatchRequest(match_id=created.match_id), metadata=service
                )
                return m.status == match_pb2.MATCH_STATUS_FINISHED

            await until(finished, timeout=120, every=0.2)
            await until(lambda: _worker_done(worker))
            assert worker.failed == 0
    finally:
        await worker.stop()


def test_a_bot_id_names_its_level() -> None:
    assert level_of("bot:search-1", "greedy") == "search"
    assert level_of("bot:random-12", "greedy") == "random"
    assert level_of("bot:a-1", "greedy") == "greedy"
    assert level_of("bot:7", "search") == "search"


async def _worker_done(worker: BotWorker) -> bool:
    return worker.finished == 1


async def test_two_players_matched_play_and_their_ratings_move(
    settings, match_server, nats_url, rclient, js
) -> None:
    async with (
        mm_process(settings, match_server, nats_url) as proc,
        grpc.aio.insecure_channel(f"127.0.0.1:{proc.port}") as ch,
        grpc.aio.insecure_channel(match_server.address) as mch,
    ):
        stub = pb_grpc.MatchmakingServiceStub(ch)
        tickets = {
            p: (
                await stub.Enqueue(
                    pb.EnqueueRequest(game="tic_tac_toe", time_control="20s"), metadata=auth(p)
                )
            ).ticket_id
            for p in ("ann", "ben")
        }
        done = {p: await watch_until_done(stub, p, t) for p, t in tickets.items()}
        match_id = done["ann"].matched.match_id
        assert done["ben"].matched.match_id == match_id
        mstub = match_pb2_grpc.MatchServiceStub(mch)
        await asyncio.wait_for(
            asyncio.gather(
                *(play_as(mstub, match_id, p, done[p].matched.seat) for p in ("ann", "ben"))
            ),
            30,
        )
        final = await mstub.GetMatch(
            match_pb2.GetMatchRequest(match_id=match_id), metadata=auth("ann")
        )
        ranks = {x.player: final.outcome.ranks[x.seat] for x in final.seats}
        # the clock the tickets asked for
        tc = final.match_options.time_control
        assert tc.kind == match_pb2.TimeControl.KIND_PER_MOVE and tc.per_move_ms == 20_000
        await until(lambda: _seen(rclient, match_id))
        ratings = {
            p: await stub.GetRating(
                pb.GetRatingRequest(player_id=p, game="tic_tac_toe"), metadata=auth(p)
            )
            for p in ("ann", "ben")
        }
        assert all(r.matches == 1 for r in ratings.values())
        if ranks["ann"] == ranks["ben"]:  # a draw moves both towards each other: equal here
            assert ratings["ann"].mu == pytest.approx(ratings["ben"].mu)
        else:
            winner = min(ranks, key=ranks.get)
            loser = max(ranks, key=ranks.get)
            assert ratings[winner].mu > DEFAULT_MU > ratings[loser].mu


async def test_a_thousand_tickets_through_the_match_service(
    settings, match_server, rclient
) -> None:
    s = dataclasses.replace(settings, ticket_ttl_s=60.0, window_growth=50.0, tick_s=0.05)
    store = TicketStore(rclient, s)
    rng = random.Random(5)
    games = [(g.name, list(range(g.min_players, g.max_players + 1))) for g in default_registry()]
    ids = []
    for i in range(1000):
        game, counts = rng.choice(games)
        accepted = tuple(sorted(rng.sample(counts, rng.randint(1, len(counts)))))
        size = 2 if rng.random() < 0.1 and max(accepted) >= 2 else 1
        players = tuple(f"e{i}-{k}" for k in range(size))
        ids.append(
            await store.enqueue(NewTicket(game, players, accepted, "", False, rng.gauss(25, 6)))
        )
    creator = GrpcMatchCreator(match_server.address, ServiceToken(TOKENS))
    makers = [Matchmaker(TicketStore(rclient, s), creator, s, name=n) for n in ("a", "b")]
    try:
        await run_until_settled(store, ids, makers)
    finally:
        await creator.close()
    recs = await store.get_many(ids)
    assert all(r.state in ("matched", "expired") for r in recs)
    by_match: dict[str, list] = {}
    for r in recs:
        if r.state == MATCHED:
            by_match.setdefault(r.match_id, []).append(r)
    assert sum(len(v) for v in by_match.values()) > 900
    seated: set[str] = set()
    async with grpc.aio.insecure_channel(match_server.address) as mch:
        mstub = match_pb2_grpc.MatchServiceStub(mch)
        service = (("authorization", f"Bearer {ServiceToken(TOKENS)()}"),)
        for match_id, tickets in by_match.items():
            m = await mstub.GetMatch(match_pb2.GetMatchRequest(match_id=match_id), metadata=service)
            players = [x.player for x in sorted(m.seats, key=lambda x: x.seat)]
            assert sorted(players) == sorted(p for t in tickets for p in t.players)
            assert m.game == tickets[0].game and len(players) in tickets[0].player_counts
            for t in tickets:
                for p, seat in t.seats.items():
                    assert players[seat] == p
            assert not seated & set(players), "a player is in two matches"
            seated |= set(players)


async def _seen(rclient, match_id: str) -> bool:
    return bool(await rclient.exists(f"mm:rated:{match_id}"))


async def test_a_dead_workers_match_is_taken_over(
    settings, match_server, nats_url, rclient
) -> None:
    base = BotSettings(
        redis_url=settings.redis_url,
        match_addr=match_server.address,
        jwt_secret=SECRET,
        claim_idle_s=1.0,
    )
    async with grpc.aio.insecure_channel(match_server.address) as mch:
        mstub = match_pb2_grpc.MatchServiceStub(mch)
        service = (("authorization", f"Bearer {ServiceToken(TOKENS)()}"),)
        created = await mstub.CreateMatch(
            match_pb2.CreateMatchRequest(game="tic_tac_toe", players=["bot:a-1", "bot:a-2"]),
            metadata=service,
        )
        first = await BotWorker(
            dataclasses.replace(base, consumer="first", move_delay_s=0.5)
        ).start()
        await rclient.xadd(
            JOBS,
            {
                "match_id": created.match_id,
                "game": "tic_tac_toe",
                "bots": '{"bot:a-1": 0, "bot:a-2": 1}',
            },
        )

        async def version() -> int:
            m = await mstub.GetMatch(
                match_pb2.GetMatchRequest(match_id=created.match_id), metadata=service
            )
            return m.version if m.status != match_pb2.MATCH_STATUS_FINISHED else -1

        await until(version)  # the first worker has played a move
        await first.stop()  # ... and dies mid-match
        played = await version()
        assert played >= 1, "the match ended before the worker stopped"
        second = await BotWorker(dataclasses.replace(base, consumer="second")).start()
        try:
            await until(lambda: _worker_done(second), timeout=30)
            assert await version() == -1
            pending = await rclient.xpending(JOBS, GROUP)
            assert pending["pending"] == 0
        finally:
            await second.stop()


async def test_tickets_wait_while_the_match_service_is_down(
    settings, valkey_url, nats_url, rclient
) -> None:
    s = dataclasses.replace(settings, max_create_failures=2, max_backoff_s=0.2)
    port = free_port()
    ms = MatchSettings(
        nats_url=nats_url,
        redis_url=valkey_url[:-1] + "1",
        port=port,
        grace_s=0.2,
        auth=AuthSettings(secret=SECRET),
    )
    store = TicketStore(rclient, s)
    ids = [
        await store.enqueue(NewTicket("tic_tac_toe", (p,), (2,), "", False, 25.0))
        for p in ("dan", "eve")
    ]
    creator = GrpcMatchCreator(f"127.0.0.1:{port}", ServiceToken(TOKENS), timeout_s=1.0)
    mm = Matchmaker(store, creator, s)
    try:
        for _ in range(4):  # more than max_create_failures: unreachable is not refused
            stats = await mm.run_once()
            assert stats.unreachable and stats.matches == 0
        assert [r.state for r in await store.get_many(ids)] == ["searching"] * 2
        server = await MatchServer(ms).start()
        try:
            # Once the channel has reconnected, the next round makes the match.
            async def matched() -> bool:
                return (await mm.run_once()).matches == 1

            await until(matched, timeout=30, every=0.2)
        finally:
            await server.stop(0.2)
    finally:
        await creator.close()
    recs = await store.get_many(ids)
    assert {r.state for r in recs} == {MATCHED}


async def test_a_poison_ticket_does_not_expire_the_others(settings, match_server, rclient) -> None:
    """A ticket whose player the match service refuses (written straight to
    the store, as an older replica without today's checks could have) ends
    alone; the ticket it was grouped with goes back to the queue, uncounted,
    and is matched with the next player."""
    s = dataclasses.replace(settings, max_create_failures=5)
    store = TicketStore(rclient, s)
    poison = await store.enqueue(NewTicket("tic_tac_toe", ("p" * 306,), (2,), "", False, 25.0))
    honest = await store.enqueue(NewTicket("tic_tac_toe", ("honest",), (2,), "", False, 25.0))
    creator = GrpcMatchCreator(match_server.address, ServiceToken(TOKENS), timeout_s=5.0)
    mm = Matchmaker(store, creator, s)
    try:
        stats = await mm.run_once()
        assert stats.claimed == 1 and stats.matches == 0
        bad, good = await store.get_many([poison, honest])
        assert (bad.state, bad.reason) == ("expired", "match_refused")
        assert good.state == "searching"
        assert await rclient.hget(f"mm:t:{honest}", "failures") is None  # not counted
        late = await store.enqueue(NewTicket("tic_tac_toe", ("late",), (2,), "", False, 25.0))
        assert (await mm.run_once()).matches == 1
        recs = await store.get_many([honest, late])
        assert {r.state for r in recs} == {MATCHED}
        assert recs[0].match_id == recs[1].match_id
    finally:
        await creator.close()
