"""The match index's writes against a real nats-server: what ``record``
stores, and that a write JetStream does not take is an error."""

from __future__ import annotations

import msgspec
import nats
import pytest

from engine_core.types import Outcome
from services.match.index import IndexWriteError, MatchFinished, MatchIndex, finished_fact
from services.match.model import (
    KIND_MOVE,
    STATUS_ACTIVE,
    STATUS_FINISHED,
    Commit,
    MatchMeta,
    MatchOptions,
)


def meta(match_id: str) -> MatchMeta:
    return MatchMeta(
        match_id=match_id,
        game="tictactoe",
        players=("alice", "bob"),
        options="",
        match_options=MatchOptions(),
        rules_version="1",
        created_ms=1_764_648_000_123,
    )


@pytest.fixture
async def index(nats_server):
    nc = await nats.connect(nats_server.url)
    index = MatchIndex(nc.jetstream(), "TEST_INDEX", timeout_s=2.0)
    await index.open()
    yield index
    await nc.close()


async def test_record_keys_each_player_and_lists_the_active_match_until_it_finishes(
    index: MatchIndex,
) -> None:
    await index.record(meta("m1"), STATUS_ACTIVE)
    await index.record(meta("m2"), STATUS_ACTIVE)
    for player in ("alice", "bob"):
        mine = await index.matches_of(player)
        assert sorted((m.match_id, m.status) for m in mine) == [
            ("m1", STATUS_ACTIVE),
            ("m2", STATUS_ACTIVE),
        ]
    assert sorted(m.match_id for m in await index.active()) == ["m1", "m2"]

    await index.record(meta("m1"), STATUS_FINISHED)
    assert {m.match_id: m.status for m in await index.matches_of("bob")} == {
        "m1": STATUS_FINISHED,
        "m2": STATUS_ACTIVE,
    }
    assert [m.match_id for m in await index.active()] == ["m2"]
    assert [m.match_id for m in await index.matches_of("alice", STATUS_FINISHED)] == ["m1"]


async def test_a_write_no_stream_takes_is_an_error(index: MatchIndex) -> None:
    await index.js.delete_stream(index.active_stream)
    with pytest.raises(IndexWriteError, match="no responders"):
        await index.record(meta("m3"), STATUS_ACTIVE)
    assert index._acks._waiting == {}  # nothing left waiting


async def test_finishing_when_the_active_stream_is_gone_is_an_error(index: MatchIndex) -> None:
    await index.record(meta("m4"), STATUS_ACTIVE)
    await index.js.delete_stream(index.active_stream)
    with pytest.raises(
        IndexWriteError, match=r"STREAM\.PURGE\.TEST_INDEX_ACTIVE: JetStream refused: 404"
    ):
        await index.record(meta("m4"), STATUS_FINISHED)
    assert index._acks._waiting == {}


def fact(match_id: str) -> MatchFinished:
    return finished_fact(
        meta(match_id),
        Commit(
            version=9,
            kind=KIND_MOVE,
            time_ms=1_764_648_001_000,
            entropy=b"",
            events=(),
            redacted=(),
            rules_version="1",
            awaiting=(),
            outcome=Outcome(ranks=(1, 1), scores=(0.5, 0.5), reason="draw"),
        ),
    )


async def test_a_fact_is_stored_once_whoever_publishes_it(index: MatchIndex) -> None:
    await index.js.add_stream(name="TEST_RESULTS", subjects=["tresults.>"])
    assert await index.publish_finished("tresults", "TEST_RESULTS", fact("m5")) is True
    # again (a republish: the same message id, within the duplicate window)
    assert await index.publish_finished("tresults", "TEST_RESULTS", fact("m5")) is False
    stored = await index.js.get_last_msg("TEST_RESULTS", "tresults.m5")
    assert msgspec.json.decode(stored.data, type=MatchFinished) == fact("m5")
    assert stored.headers is not None and stored.headers["Nats-Msg-Id"] == "finished:m5"
    info = await index.js.stream_info("TEST_RESULTS")
    assert info.state.messages == 1
    assert index._acks._waiting == {}


async def test_a_fact_is_refused_as_published_before_when_its_subject_holds_one(
    index: MatchIndex,
) -> None:
    await index.js.add_stream(name="TEST_RESULTS2", subjects=["tresults2.>"])
    await index.js.publish("tresults2.m6", b"{}")  # there, with another message id
    assert await index.publish_finished("tresults2", "TEST_RESULTS2", fact("m6")) is False
    assert (await index.js.stream_info("TEST_RESULTS2")).state.messages == 1


async def test_a_fact_no_stream_takes_is_an_error(index: MatchIndex) -> None:
    with pytest.raises(IndexWriteError, match="no responders"):
        await index.publish_finished("nowhere", "NOWHERE", fact("m7"))
    await index.js.add_stream(name="TEST_RESULTS3", subjects=["tresults3.>"])
    with pytest.raises(IndexWriteError, match="JetStream refused"):  # not the stream named
        await index.publish_finished("tresults3", "OTHER", fact("m7"))
    assert index._acks._waiting == {}
