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
from services.matchmaking.ratings import Ratings
from services.matchmaking.results import ResultsConsumer
from tabletop.match.v1 import match_pb2, match_pb2_grpc
from tests.services.match.conftest import stream_commits

PLAYERS = ["guest:a", "guest:b"]
WIN = [("guest:a", 0), ("guest:b", 3), ("guest:a", 1), ("guest:b", 4), ("guest:a", 2)]


def spawn_crashing(settings) -> tuple[subprocess.Popen, str]:
    env = {
        **os.environ,
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


async def test_a_fact_lost_by_a_killed_replica_is_relayed_once(
    start_service, settings, nats_server, valkey_server
) -> None:
    tokens = Tokens(settings.auth)
    meta = {p: bearer_metadata(tokens.issue(p)) for p in PLAYERS}
    proc, address = spawn_crashing(settings)
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
                else:
                    with pytest.raises(grpc.aio.AioRpcError) as e:
                        await stub.SubmitMove(request, metadata=meta[player], timeout=10)
                    assert e.value.code() == grpc.StatusCode.UNAVAILABLE
        assert await asyncio.to_thread(proc.wait, 15) == -9
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
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
