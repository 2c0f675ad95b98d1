"""A replica killed (SIGKILL) between the finishing commit and the
``MatchFinished`` fact: a fresh replica's relay publishes the fact, once, and
the ratings consumer rates the match once."""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
import time

import grpc
import nats
import pytest

from services.common.auth import Tokens, bearer_metadata
from services.match.relay import FinishedRelay
from services.match.store import FINISHED_HEADERS
from services.matchmaking.ratings import Ratings
from services.matchmaking.results import ResultsConsumer
from tabletop.match.v1 import match_pb2, match_pb2_grpc
from tests.services.match.conftest import stream_commits

PLAYERS = ["guest:a", "guest:b"]
WIN = [("guest:a", 0), ("guest:b", 3), ("guest:a", 1), ("guest:b", 4), ("guest:a", 2)]


def spawn_crashing(settings, at: str = "commit") -> tuple[subprocess.Popen, str]:
    """``at``: ``TABLETOP_TEST_CRASH_AT`` (see tests/faults/crashing_match.py)."""
    env = {
        **os.environ,
        "TABLETOP_TEST_CRASH_AT": at,
        "TABLETOP_NATS_URL": settings.nats_url,
        "TABLETOP_REDIS_URL": settings.redis_url,
        "TABLETOP_JWT_SECRET": settings.auth.secret,
        "TABLETOP_MATCH_PORT": "0",
        "TABLETOP_MATCH_RELAY_FINISHED": "0",  # the fact is lost with this process
    }
    proc = subprocess.Popen(
        [sys.executable, "-m", "tests.faults.crashing_match"],
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
    )
    assert proc.stdout is not None
    line = ""
    while "listening on" not in line:
        line = proc.stdout.readline()
        assert line, "the service exited before listening"
    return proc, json.loads(line)["address"]


async def facts_on(nats_url: str, match_id: str) -> int:
    nc = await nats.connect(nats_url)
    try:
        info = await nc.jetstream().stream_info("RESULTS", subjects_filter=f"results.{match_id}")
        return (info.state.subjects or {}).get(f"results.{match_id}", 0)
    finally:
        await nc.close()


async def poll(condition, timeout: float = 15.0) -> None:
    deadline = time.monotonic() + timeout
    while not await condition():
        if time.monotonic() > deadline:
            pytest.fail("condition not met in time")
        await asyncio.sleep(0.05)


async def finish_and_die(settings, meta, at: str = "commit") -> str:
    """A match won on a replica that is killed before the fact goes out
    (``at="commit"``: before the last move is answered, too)."""
    proc, address = spawn_crashing(settings, at)
    try:
        async with grpc.aio.insecure_channel(address) as channel:
            stub = match_pb2_grpc.MatchServiceStub(channel)
            match_id = (
                await stub.CreateMatch(
                    match_pb2.CreateMatchRequest(game="tic_tac_toe", players=PLAYERS),
                    metadata=meta["guest:a"],
                )
            ).match_id
            for i, (player, cell) in enumerate(WIN):
                request = match_pb2.SubmitMoveRequest(
                    match_id=match_id,
                    move_json=f'{{"type": "place_mark", "cell": {cell}}}',
                    idempotency_key=f"m{i}",
                )
                if i < len(WIN) - 1:
                    await stub.SubmitMove(request, metadata=meta[player])
                elif at == "commit":
                    with pytest.raises(grpc.aio.AioRpcError) as e:
                        await stub.SubmitMove(request, metadata=meta[player], timeout=10)
                    assert e.value.code() == grpc.StatusCode.UNAVAILABLE
                else:  # the answer was on its way: it may or may not have come
                    try:
                        reply = await stub.SubmitMove(request, metadata=meta[player], timeout=10)
                    except grpc.aio.AioRpcError as e:
                        assert e.code() == grpc.StatusCode.UNAVAILABLE
                    else:
                        assert reply.status == match_pb2.MATCH_STATUS_FINISHED
        assert await asyncio.to_thread(proc.wait, 15) == -9
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    return match_id


@pytest.mark.parametrize("at", ["commit", "fact"])
async def test_a_fact_lost_by_a_killed_replica_is_relayed_once(
    start_service, settings, nats_server, valkey_server, at
) -> None:
    """The relay that starts after the crash finds the commit from its
    cursor: whether the replica died before the last move's answer
    (``commit``) or after it, before its fact (``fact``: the answer goes out
    first)."""
    tokens = Tokens(settings.auth)
    meta = {p: bearer_metadata(tokens.issue(p)) for p in PLAYERS}
    match_id = await finish_and_die(settings, meta, at)
    commits = await stream_commits(settings.nats_url, match_id)
    assert commits[-1].version == 5 and commits[-1].outcome is not None
    assert await facts_on(settings.nats_url, match_id) == 0  # lost with the process

    # A fresh replica relays it; the ratings consumer rates it once.
    fresh = await start_service()

    async def relayed() -> bool:
        return await facts_on(settings.nats_url, match_id) == 1

    await poll(relayed)
    assert fresh.server.relay is not None and fresh.server.relay.relayed == 1
    summaries = await fresh.app.index.matches_of("guest:a")
    assert [s.status for s in summaries] == ["finished"]

    # Everything else that could publish it again does not store it twice: a
    # retry of the final move, another replica's relay, a restart.
    final = match_pb2.SubmitMoveRequest(
        match_id=match_id, move_json='{"type": "place_mark", "cell": 2}', idempotency_key="m4"
    )
    again = await fresh.player("guest:a").stub.SubmitMove(final, metadata=meta["guest:a"])
    assert again.version == 5 and again.status == match_pb2.MATCH_STATUS_FINISHED
    await fresh.close()
    other = await start_service()
    assert await other.server.relay.relay(match_id, await _seq_of_last(settings, match_id)) is False
    assert await facts_on(settings.nats_url, match_id) == 1

    import redis.asyncio as redis

    client = redis.from_url(valkey_server.url)
    nc = await nats.connect(settings.nats_url)
    try:
        consumer = ResultsConsumer(nc.jetstream(), Ratings(client))
        stop = asyncio.Event()
        task = asyncio.create_task(consumer.run(stop))

        async def rated() -> bool:
            return consumer.rated == 1

        await poll(rated)
        stop.set()
        await task
        assert (consumer.rated, consumer.duplicates) == (1, 0)
    finally:
        await nc.close()
        await client.aclose()


async def _seq_of_last(settings, match_id: str) -> int:
    nc = await nats.connect(settings.nats_url)
    try:
        msg = await nc.jetstream().get_last_msg("MATCHES", f"match.{match_id}")
        assert msg.seq is not None
        return msg.seq
    finally:
        await nc.close()


async def test_a_running_relay_relays_what_another_replica_lost_and_moves_its_cursor(
    start_service, settings, nats_server
) -> None:
    """A replica that runs when another one dies after the finishing commit
    relays the fact from its tap's delivery, once; its cursor then passes the
    commit, so a relay started later does not look at it again."""
    tokens = Tokens(settings.auth)
    meta = {p: bearer_metadata(tokens.issue(p)) for p in PLAYERS}
    running = await start_service()
    relay = running.server.relay
    assert relay is not None
    match_id = await finish_and_die(settings, meta)
    assert await facts_on(settings.nats_url, match_id) == 0  # lost with the process

    async def relayed() -> bool:
        return await facts_on(settings.nats_url, match_id) == 1

    await poll(relayed)
    assert relay.relayed == 1
    last = await _seq_of_last(settings, match_id)

    async def cursor_past() -> bool:
        cursor = await running.app.index.relay_cursor()
        return cursor is not None and cursor >= last

    await poll(cursor_past)
    later = await start_service()
    assert later.server.relay is not None

    async def started() -> bool:
        return later.server.relay.live_after is not None

    await poll(started)
    assert later.server.relay.floor >= last and not later.server.relay.unsettled
    assert later.server.relay.relayed == 0
    assert await facts_on(settings.nats_url, match_id) == 1


async def test_the_cursor_never_passes_a_finishing_commit_without_its_fact() -> None:
    """The relay's position stays below the oldest finishing commit it has
    not settled, however far the tap moved on."""
    relay = FinishedRelay(None, None, None, None, delay_s=0.0)  # type: ignore[arg-type]
    relay.live_after = relay.floor = 10  # caught up to where the tap started
    relay.on_commit(11, "a", {"Nats-Msg-Id": "a:1"})
    assert relay.cursor == 11
    relay.on_commit(12, "b", dict(FINISHED_HEADERS))
    relay.on_commit(13, "c", None)
    relay.on_commit(14, "d", dict(FINISHED_HEADERS))
    assert relay.cursor == 11
    relay.known.add("b")  # its fact is stored (by the write path)
    relay.known.add("d")
    await relay._settle_due()
    assert relay.cursor == 14 and not relay.unsettled
    relay.known.add("e")
    relay.on_commit(15, "e", dict(FINISHED_HEADERS))  # known at once: nothing to settle
    assert relay.cursor == 15
