"""Two replicas on one NATS and one Redis: a copy of a match held in memory by
one replica may be behind the stream; no answer may be decided on it unchecked.
And an idempotency key names one request: another payload under it is refused."""

from __future__ import annotations

import asyncio
import json

import grpc
import pytest

from services.common.errors import error_info
from tests.services.match.conftest import stream_commits

TTT = ["guest:x", "guest:o"]


def mark(cell: int) -> str:
    return json.dumps({"type": "place_mark", "cell": cell})


async def two_replicas(start_service):
    a = await start_service()
    b = await start_service()
    match_id = await a.player(TTT[0]).create("tic_tac_toe", TTT)
    await b.player(TTT[0]).get(match_id)  # B now holds version 0 in memory
    return a, b, match_id


async def test_expected_version_is_checked_against_the_head_not_a_stale_copy(
    start_service, settings
) -> None:
    a, b, match_id = await two_replicas(start_service)
    first = await a.player(TTT[0]).submit(match_id, mark(0), expected_version=0)
    assert first.version == 1
    # B still holds version 0; seat 1 plays on version 1 through B
    reply = await b.player(TTT[1]).submit(match_id, mark(4), expected_version=1)
    assert reply.version == 2 and reply.seat == 1
    # and an expected version that really is stale is still refused, with the truth
    with pytest.raises(grpc.aio.AioRpcError) as e:
        await a.player(TTT[0]).submit(match_id, mark(8), expected_version=1)
    assert e.value.code() == grpc.StatusCode.ABORTED
    info = error_info(e.value)
    assert info is not None and info.reason == "stale_version"
    assert info.metadata["current_version"] == "2"
    versions = [c.version for c in await stream_commits(settings.nats_url, match_id)]
    assert versions == [0, 1, 2]


async def test_a_retry_through_a_stale_replica_gets_the_first_answer_every_time(
    start_service, settings
) -> None:
    a, b, match_id = await two_replicas(start_service)
    await a.player(TTT[0]).submit(match_id, mark(0), expected_version=0)
    first = await a.player(TTT[1]).submit(
        match_id, mark(4), expected_version=1, idempotency_key="m2"
    )
    for _ in range(3):  # B holds version 0, older than the retried move's version
        again = await b.player(TTT[1]).submit(
            match_id, mark(4), expected_version=1, idempotency_key="m2"
        )
        assert again == first
    commits = await stream_commits(settings.nats_url, match_id)
    assert [c.version for c in commits] == [0, 1, 2]


async def test_a_retry_past_the_duplicate_window_through_a_stale_replica(
    start_service, settings
) -> None:
    # No Nats-Msg-Id deduplication to lean on: the stale copy meets the
    # expected-sequence check, catches up and finds the key.
    a = await start_service(duplicate_window_s=0.1)
    b = await start_service(duplicate_window_s=0.1)
    match_id = await a.player(TTT[0]).create("tic_tac_toe", TTT)
    await b.player(TTT[0]).get(match_id)
    first = await a.player(TTT[0]).submit(match_id, mark(0), idempotency_key="m1")
    second = await a.player(TTT[1]).submit(match_id, mark(4), idempotency_key="m2")
    assert (first.version, second.version) == (1, 2)
    await asyncio.sleep(0.3)  # past the window: a duplicate id is no longer recognised
    again = await b.player(TTT[0]).submit(match_id, mark(0), idempotency_key="m1")
    assert again == first
    again = await b.player(TTT[1]).submit(
        match_id, mark(4), expected_version=1, idempotency_key="m2"
    )
    assert again.version == 2
    commits = await stream_commits(settings.nats_url, match_id)
    assert [c.version for c in commits] == [0, 1, 2]


async def test_a_rejection_by_a_stale_replica_is_decided_on_the_head(start_service) -> None:
    a, b, match_id = await two_replicas(start_service)
    await a.player(TTT[0]).submit(match_id, mark(0))
    # on B's copy it is still seat 0's turn: "not your turn" would be wrong
    reply = await b.player(TTT[1]).submit(match_id, mark(4))
    assert reply.version == 2


# ------------------------------------------------------------- key reuse
async def reused(call) -> None:
    with pytest.raises(grpc.aio.AioRpcError) as e:
        await call
    assert e.value.code() == grpc.StatusCode.FAILED_PRECONDITION
    info = error_info(e.value)
    assert info is not None and info.reason == "idempotency_key_reused"


async def test_a_used_key_with_another_move_is_refused(start_service, settings) -> None:
    a, b, match_id = await two_replicas(start_service)
    x = a.player(TTT[0])
    first = await x.submit(match_id, mark(0), idempotency_key="k")
    await reused(x.submit(match_id, mark(1), idempotency_key="k"))
    await reused(b.player(TTT[0]).submit(match_id, mark(1), idempotency_key="k"))
    # the same move is still answered (a condition is not the request), and
    # nothing was applied twice
    assert await x.submit(match_id, mark(0), idempotency_key="k", expected_version=5) == first
    assert await x.submit(match_id, mark(0), idempotency_key="k") == first
    assert await b.player(TTT[0]).submit(match_id, mark(0), idempotency_key="k") == first
    commits = await stream_commits(settings.nats_url, match_id)
    assert [c.version for c in commits] == [0, 1]
    assert json.loads(commits[1].move) == {"type": "place_mark", "cell": 0}


async def test_a_used_creation_key_with_other_players_is_refused(service) -> None:
    mm = service.service()
    m1 = await mm.create("tic_tac_toe", TTT, idempotency_key="ticket-1")
    await reused(mm.create("tic_tac_toe", ["guest:x", "guest:z"], idempotency_key="ticket-1"))
    await reused(mm.create("secret_bids", TTT, idempotency_key="ticket-1"))
    assert await mm.create("tic_tac_toe", TTT, idempotency_key="ticket-1") == m1


async def test_a_commit_without_a_request_digest_still_answers_retries(service, settings) -> None:
    # Commits written before the digest existed have none: a retry is
    # answered from them as before.
    x = service.player(TTT[0])
    match_id = await x.create("tic_tac_toe", TTT)
    app = service.app
    from services.match import writes
    from services.match.model import request_digest

    real = writes.request_digest
    writes.request_digest = lambda *_: ""  # type: ignore[assignment]
    try:
        first = await x.submit(match_id, mark(0), idempotency_key="old")
    finally:
        writes.request_digest = real
    assert request_digest("move", mark(0), 0) != ""
    commits = await stream_commits(settings.nats_url, match_id)
    assert commits[1].request == ""
    app.forget()
    assert await x.submit(match_id, mark(0), idempotency_key="old") == first


def test_request_digests_of_another_version_are_not_compared() -> None:
    # During a rolling upgrade, replicas that digest requests differently run
    # side by side; a retry reaching the other one must not be refused.
    from services.match.model import request_digest, same_request

    one = request_digest("move", mark(0), None)
    assert one.startswith("1:")
    assert same_request(one, request_digest("move", mark(0), None))
    assert not same_request(one, request_digest("move", mark(1), None))
    assert same_request("2:" + one[2:], request_digest("move", mark(1), None))
    assert same_request("", one)
