"""The match index's writes against a real nats-server: what ``record``
stores, and that a write JetStream does not take is an error."""

from __future__ import annotations

import nats
import pytest

from services.match.index import IndexWriteError, MatchIndex
from services.match.model import STATUS_ACTIVE, STATUS_FINISHED, MatchMeta, MatchOptions


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
