"""The loopback NATS JetStream cluster helper: three real nats-server nodes
with routes; an R3 stream keeps taking writes with one node down."""

from __future__ import annotations

import asyncio
import time

import nats
import pytest
from nats.js.api import StorageType, StreamConfig

from services.common.cluster import NatsCluster


@pytest.fixture
def cluster(tmp_path):  # type: ignore[no-untyped-def]
    with NatsCluster(3, data_dir=tmp_path / "cluster") as c:
        yield c


async def _publish(js, subject: str, data: bytes, deadline_s: float = 20.0):  # type: ignore[no-untyped-def]
    """Publish, retrying while the stream elects a new leader."""
    deadline = time.monotonic() + deadline_s
    while True:
        try:
            return await js.publish(subject, data, timeout=1.0)
        except (
            nats.errors.TimeoutError,
            nats.js.errors.NoStreamResponseError,
            nats.js.errors.ServiceUnavailableError,
        ):
            if time.monotonic() > deadline:
                raise
            await asyncio.sleep(0.2)


async def test_three_nodes_form_one_jetstream_cluster(cluster: NatsCluster) -> None:
    assert cluster.meta_leader() in {n.server_name for n in cluster.nodes}
    nc = await nats.connect(cluster.urls)
    try:
        js = nc.jetstream(timeout=5.0)
        info = await js.add_stream(
            StreamConfig(name="T", subjects=["t.>"], num_replicas=3, storage=StorageType.FILE)
        )
        assert info.config.num_replicas == 3
        ack = await _publish(js, "t.1", b"one")
        info = await js.stream_info("T")
        assert info.cluster is not None
        nodes = {info.cluster.leader, *(r.name for r in info.cluster.replicas or [])}
        assert nodes == {n.server_name for n in cluster.nodes}
        assert ack.seq == 1
    finally:
        await nc.close()


async def test_an_r3_stream_survives_a_killed_node(cluster: NatsCluster) -> None:
    nc = await nats.connect(cluster.urls, max_reconnect_attempts=-1, reconnect_time_wait=0.1)
    try:
        js = nc.jetstream(timeout=5.0)
        await js.add_stream(
            StreamConfig(name="T", subjects=["t.>"], num_replicas=3, storage=StorageType.FILE)
        )
        for i in range(5):
            await _publish(js, "t.x", str(i).encode())
        leader = (await js.stream_info("T")).cluster.leader  # type: ignore[union-attr]
        cluster.node(leader).stop(kill=True)  # the stream's leader dies
        for i in range(5, 10):
            await _publish(js, "t.x", str(i).encode())
        assert (await js.stream_info("T")).state.messages == 10

        cluster.node(leader).start()  # it comes back with its store and catches up
        cluster.wait_healthy()
        ok = [n.healthz()[0] for n in cluster.nodes]
        assert ok == [200, 200, 200]
        msgs = [(await js.get_msg("T", seq)).data for seq in range(1, 11)]
        assert msgs == [str(i).encode() for i in range(10)]
    finally:
        await nc.close()
