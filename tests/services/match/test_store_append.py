"""The store's append against a real nats-server: each answer JetStream can
give an append, and what the store makes of it."""

from __future__ import annotations

import asyncio
import uuid

import nats
import pytest

from services.match.model import Commit
from services.match.ports import AppendConflict
from services.match.store import (
    AppendOutcomeUnknown,
    JetStreamStore,
    StoreUnavailable,
    StreamConfig,
    delivery_sequences,
    ensure_streams,
)

RUN = uuid.uuid4().hex[:8]


def commit(version: int) -> Commit:
    return Commit(
        version=version,
        kind="move",
        time_ms=1,
        entropy=b"",
        events=(),
        redacted=(),
        rules_version="1",
    )


@pytest.fixture
async def nc(nats_server):
    nc = await nats.connect(nats_server.url)
    await ensure_streams(nc.jetstream(), StreamConfig())
    yield nc
    await nc.close()


async def test_appends_at_once_are_each_acked_with_their_own_sequence(nc) -> None:
    store = JetStreamStore(nc.jetstream(), StreamConfig(), nc=nc)
    first, dup = await store.append(f"a1{RUN}", commit(0), 0, f"a1{RUN}:0")
    assert dup is False
    # several at once, each answered under its own reply token
    results = await asyncio.gather(
        *(store.append(f"b{i}{RUN}", commit(0), 0, f"b{i}{RUN}:0") for i in range(20))
    )
    assert sorted(seq for seq, _ in results) == list(range(first + 1, first + 21))
    assert store.acks._waiting == {}


async def test_a_stale_expected_sequence_is_a_conflict(nc) -> None:
    store = JetStreamStore(nc.jetstream(), StreamConfig(), nc=nc)
    seq, _ = await store.append(f"c1{RUN}", commit(0), 0, f"c1{RUN}:0")
    await store.append(f"c1{RUN}", commit(1), seq, f"c1{RUN}:1")
    with pytest.raises(AppendConflict):
        await store.append(f"c1{RUN}", commit(1), seq, f"c1{RUN}:1-other")


async def test_a_subject_no_stream_stores_is_refused(nc) -> None:
    config = StreamConfig(subject_prefix="nowhere")
    store = JetStreamStore(nc.jetstream(), config, nc=nc)
    with pytest.raises(StoreUnavailable) as e:
        await store.append(f"d1{RUN}", commit(0), 0, f"d1{RUN}:0")
    assert not isinstance(e.value, AppendOutcomeUnknown)


async def test_a_refusal_of_jetstream_is_store_unavailable(nc) -> None:
    # the subject is stored by MATCHES, the append expects another stream
    store = JetStreamStore(nc.jetstream(), StreamConfig(name="OTHER"), nc=nc)
    with pytest.raises(StoreUnavailable) as e:
        await store.append(f"e1{RUN}", commit(0), 0, f"e1{RUN}:0")
    assert not isinstance(e.value, AppendOutcomeUnknown)
    assert "refused" in str(e.value)


async def test_no_answer_in_time_is_an_unknown_outcome(nc) -> None:
    # someone listens on the subject but never answers: no JetStream ack
    silent = await nc.subscribe("quiet.*")
    store = JetStreamStore(
        nc.jetstream(), StreamConfig(subject_prefix="quiet"), timeout_s=0.3, nc=nc
    )
    with pytest.raises(AppendOutcomeUnknown):
        await store.append(f"f1{RUN}", commit(0), 0, f"f1{RUN}:0")
    assert store.acks._waiting == {}
    await silent.unsubscribe()


async def test_an_append_while_disconnected_is_refused_unsent(nats_server) -> None:
    nc = await nats.connect(nats_server.url, max_reconnect_attempts=-1, reconnect_time_wait=0.2)
    try:
        await ensure_streams(nc.jetstream(), StreamConfig())
        store = JetStreamStore(nc.jetstream(), StreamConfig(), nc=nc)
        await store.append(f"g1{RUN}", commit(0), 0, f"g1{RUN}:0")
        nats_server.stop()
        for _ in range(100):
            if not nc.is_connected:
                break
            await asyncio.sleep(0.05)
        with pytest.raises(StoreUnavailable) as e:
            await store.append(f"g1{RUN}", commit(1), 1, f"g1{RUN}:1")
        assert not isinstance(e.value, AppendOutcomeUnknown)
    finally:
        nats_server.start()
        await nc.close()


def test_delivery_sequences_read_both_reply_subject_forms() -> None:
    assert delivery_sequences("$JS.ACK.MATCHES.tap.1.42.7.1700000000000000000.3") == (42, 7)
    assert delivery_sequences(
        "$JS.ACK.hub.ACCHASH.MATCHES.tap.1.42.7.1700000000000000000.3.tok"
    ) == (42, 7)
    assert delivery_sequences("_INBOX.abc") is None
    assert delivery_sequences("") is None


async def test_the_tap_reads_the_sequences_nats_py_reads(nc) -> None:
    """A real delivery's reply subject gives what ``Msg.metadata`` gives."""
    js = nc.jetstream()
    await js.publish(f"match.h{RUN}", b"x")
    sub = await js.subscribe(f"match.h{RUN}", ordered_consumer=True)
    msg = await sub.next_msg(timeout=5)
    assert delivery_sequences(msg.reply) == (
        msg.metadata.sequence.stream,
        msg.metadata.sequence.consumer,
    )
    await sub.unsubscribe()
