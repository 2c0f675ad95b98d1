"""The match service given every node of a 3-node JetStream cluster in
TABLETOP_NATS_URL (comma-separated): it starts although a server of the list
is down, and keeps taking moves when the node it is connected to dies."""

from __future__ import annotations

import asyncio
import time

import grpc
import nats
import pytest

from services.common.auth import AuthSettings, Tokens
from services.common.cluster import NatsCluster
from services.common.servers import free_port
from services.match.ports import InProcessRules
from services.match.server import MatchServer
from services.match.settings import MatchSettings
from services.match.store import JetStreamStore, StoreUnavailable, StreamConfig, ensure_streams

from .conftest import SECRET, Player


@pytest.fixture
def cluster(tmp_path):  # type: ignore[no-untyped-def]
    with NatsCluster(3, data_dir=tmp_path / "cluster") as c:
        yield c


async def _submit(player: Player, match_id: str, cell: int, deadline_s: float = 30.0):  # type: ignore[no-untyped-def]
    """Submit with a key, retrying UNAVAILABLE while the cluster re-elects."""
    deadline = time.monotonic() + deadline_s
    key = f"cell-{cell}"
    while True:
        try:
            return await player.submit(
                match_id, f'{{"type":"place_mark","cell":{cell}}}', idempotency_key=key
            )
        except grpc.aio.AioRpcError as e:
            if e.code() != grpc.StatusCode.UNAVAILABLE or time.monotonic() > deadline:
                raise
            await asyncio.sleep(0.3)


async def test_the_match_service_uses_every_node_of_the_list(cluster, valkey_server) -> None:
    dead = f"nats://127.0.0.1:{free_port()}"  # a server of the list that never answers
    settings = MatchSettings(
        nats_url=",".join([dead, *cluster.urls]),
        redis_url=valkey_server.url,
        stream_replicas=3,
        grace_s=0.2,
        auth=AuthSettings(secret=SECRET),
    )
    server = await MatchServer(settings, rules=InProcessRules()).start()
    tokens = Tokens(settings.auth)
    channel = grpc.aio.insecure_channel(server.address)
    try:
        alice = Player(channel, tokens.issue("alice"), "alice")
        bob = Player(channel, tokens.issue("bob"), "bob")
        match_id = await alice.create("tic_tac_toe", ["alice", "bob"])
        assert (await _submit(alice, match_id, 0)).version == 1
        connected = server._nc.connected_url.netloc  # type: ignore[union-attr]
        victim = next(n for n in cluster.nodes if f":{n.port}" in connected)
        victim.stop(kill=True)
        assert (await _submit(bob, match_id, 4)).version == 2
        assert (await _submit(alice, match_id, 8)).version == 3
        assert f":{victim.port}" not in server._nc.connected_url.netloc  # type: ignore[union-attr]
        assert (await alice.get(match_id)).version == 3
    finally:
        await channel.close()
        await server.stop(0.2)


async def test_a_read_of_a_stream_without_a_leader_is_unavailable_not_an_api_error(
    cluster,
) -> None:
    """With two of three nodes gone, the stream has no leader and the last
    node answers reads with 503 10008 "JetStream system temporarily
    unavailable": a refusal of the moment, so ``StoreUnavailable`` (the
    client's UNAVAILABLE, to retry), not a raw API error (its INTERNAL)."""
    nc = await nats.connect(cluster.urls, max_reconnect_attempts=-1, reconnect_time_wait=0.1)
    try:
        js = nc.jetstream(timeout=0.5)
        config = StreamConfig(replicas=3)
        await ensure_streams(js, config)
        store = JetStreamStore(js, config, timeout_s=0.5, nc=nc)
        assert await store.last_seq("m1") == 0
        survivor = cluster.nodes[0]
        for node in cluster.nodes[1:]:
            node.stop(kill=True)
        refusals: list[str] = []
        deadline = time.monotonic() + 30.0
        while not any("10008" in r for r in refusals):
            assert time.monotonic() < deadline, f"never refused as leaderless: {refusals}"
            try:
                await store.last_seq("m1")
            except StoreUnavailable as e:  # anything else fails the test
                refusals.append(str(e))
            await asyncio.sleep(0.05)
        assert f":{survivor.port}" in nc.connected_url.netloc  # type: ignore[union-attr]
    finally:
        await nc.close()
