"""EndMatch: a service ends a running match from outside (a tournament's
round deadline), through the real service over NATS and Redis: one final
commit, seen by the projection, watchers and replays; moves refused after
it; the clock unlisted; retries idempotent; players and bad input refused
with nothing appended; the ratings consumer does not rate it."""

from __future__ import annotations

import asyncio
import time
from typing import Any

import grpc
import nats
import pytest
import redis.asyncio as redis

from services.common.errors import error_info
from services.match import endings
from services.match.endings import check_ranks
from services.match.model import KIND_ENDED
from services.matchmaking import ratings as ratings_module
from services.matchmaking.ratings import Ratings
from services.matchmaking.results import ResultsConsumer
from tabletop.match.v1 import match_pb2
from tests.services.match.conftest import stream_commits

A, B = "alice", "bob"  # rated ids (neither guests nor bots)
TC = match_pb2.TimeControl
HOUR = match_pb2.MatchOptions(time_control=TC(kind=TC.KIND_PER_MOVE, per_move_ms=3_600_000))


async def until(check, timeout: float = 20.0) -> Any:
    deadline = time.monotonic() + timeout
    while True:
        value = await check()
        if value:
            return value
        assert time.monotonic() < deadline, "timed out waiting for the condition"
        await asyncio.sleep(0.05)


def end_request(match_id: str, ranks=(2, 1), key: str = "t1:r1:t1:end", **kw: Any) -> Any:
    return match_pb2.EndMatchRequest(
        match_id=match_id,
        ranks=list(ranks),
        reason=kw.pop("reason", "round_deadline"),
        idempotency_key=key,
        **kw,
    )


async def refused(call, code: grpc.StatusCode, reason: str) -> Any:
    with pytest.raises(grpc.aio.AioRpcError) as e:
        await call
    assert e.value.code() == code, e.value.details()
    info = error_info(e.value)
    assert info is not None and info.reason == reason, (info, e.value.details())
    return info


async def test_a_service_ends_a_running_match(service, settings) -> None:
    a, svc = service.player(A), service.service("tournaments")
    match_id = await a.create("tic_tac_toe", [A, B], match_options=HOUR)
    await a.submit(match_id, '{"type": "place_mark", "cell": 4}')
    watch = a.watch(match_id)  # a watcher from the start sees the final commit and the end
    first = await watch.read()
    assert first.version == 0

    reply = await svc.stub.EndMatch(end_request(match_id), metadata=svc.metadata)
    assert reply.version == 2
    assert list(reply.outcome.ranks) == [2, 1] and list(reply.outcome.scores) == [0.0, 1.0]
    assert reply.outcome.reason == "adjudicated:round_deadline"

    seen = [first]
    while (c := await watch.read()) is not grpc.aio.EOF:  # it ends once the match is finished
        seen.append(c)
    assert [c.version for c in seen] == [0, 1, 2]
    last = seen[-1]
    assert last.ended_by_service and not last.forfeit and not last.HasField("seat")
    assert last.status == match_pb2.MATCH_STATUS_FINISHED
    assert last.outcome.reason == "adjudicated:round_deadline"

    got = await a.get(match_id)
    assert got.status == match_pb2.MATCH_STATUS_FINISHED and list(got.awaiting) == []
    assert list(got.outcome.ranks) == [2, 1] and list(got.legal_moves_json) == []
    assert all(not c.deadline for c in got.clocks)  # no clock runs any more

    replayed = [c async for c in a.replay(match_id)]
    assert [c.version for c in replayed] == [0, 1, 2] and replayed[-1].ended_by_service

    # a move after it: the finished-match answer
    b = service.player(B)
    await refused(
        b.submit(match_id, '{"type": "place_mark", "cell": 0}'),
        grpc.StatusCode.FAILED_PRECONDITION,
        "game_over",
    )
    # nothing in memory: the same end from the cache or the stream
    service.app.forget()
    again = await a.get(match_id)
    assert again.status == match_pb2.MATCH_STATUS_FINISHED
    assert again.outcome.reason == "adjudicated:round_deadline" and again.version == 2

    commits = await stream_commits(settings.nats_url, match_id)
    assert [c.kind for c in commits] == ["created", "move", KIND_ENDED]
    assert commits[-1].player == "svc:tournaments"
    # the turn timer no longer lists it
    assert match_id not in await service.app.timers.clocked()


async def test_retries_are_idempotent_and_a_reused_key_is_refused(service, settings) -> None:
    a, svc = service.player(A), service.service("tournaments")
    match_id = await a.create("tic_tac_toe", [A, B], match_options=HOUR)
    first = await svc.stub.EndMatch(
        end_request(match_id, expected_version=0), metadata=svc.metadata
    )
    for _ in range(2):  # the same request again: the first answer, nothing appended
        again = await svc.stub.EndMatch(
            end_request(match_id, expected_version=0), metadata=svc.metadata
        )
        assert again == first
    service.app.forget()  # and from another replica's point of view (no memory)
    assert await svc.stub.EndMatch(end_request(match_id), metadata=svc.metadata) == first
    # the same key with another result
    await refused(
        svc.stub.EndMatch(end_request(match_id, ranks=(1, 2)), metadata=svc.metadata),
        grpc.StatusCode.FAILED_PRECONDITION,
        "idempotency_key_reused",
    )
    # another key on the ended match: finished already, nothing appended
    info = await refused(
        svc.stub.EndMatch(end_request(match_id, key="other"), metadata=svc.metadata),
        grpc.StatusCode.FAILED_PRECONDITION,
        "game_over",
    )
    assert info.metadata["outcome_reason"] == "adjudicated:round_deadline"
    assert len(await stream_commits(settings.nats_url, match_id)) == 2


async def test_a_match_finished_by_play_is_not_ended(service, settings) -> None:
    a, b, svc = service.player(A), service.player(B), service.service()
    match_id = await a.create("tic_tac_toe", [A, B])
    for who, cell in ((a, 0), (b, 3), (a, 1), (b, 4), (a, 2)):
        await who.submit(match_id, f'{{"type": "place_mark", "cell": {cell}}}')
    info = await refused(
        svc.stub.EndMatch(end_request(match_id), metadata=svc.metadata),
        grpc.StatusCode.FAILED_PRECONDITION,
        "game_over",
    )
    assert not info.metadata["outcome_reason"].startswith("adjudicated:")
    assert len(await stream_commits(settings.nats_url, match_id)) == 6


async def test_players_and_bad_requests_are_refused_with_nothing_appended(
    service, settings
) -> None:
    a, svc = service.player(A), service.service()
    match_id = await a.create("tic_tac_toe", [A, B], match_options=HOUR)
    await refused(
        a.stub.EndMatch(end_request(match_id), metadata=a.metadata),
        grpc.StatusCode.PERMISSION_DENIED,
        "service_only",
    )
    bad = [
        (end_request(match_id, ranks=(1,)), "bad_ranks"),
        (end_request(match_id, ranks=(1, 1, 3)), "bad_ranks"),
        (end_request(match_id, ranks=(2, 2)), "bad_ranks"),
        (end_request(match_id, ranks=(0, 1)), "bad_ranks"),
        (end_request(match_id, ranks=(1, 3)), "bad_ranks"),
        (end_request(match_id, scores=[1.0]), "bad_scores"),
        (end_request(match_id, scores=[float("nan"), 0.0]), "bad_scores"),
        (end_request(match_id, reason=""), "bad_end_reason"),
        (end_request(match_id, reason="Round Deadline"), "bad_end_reason"),
        (end_request(match_id, reason="x" * 41), "bad_end_reason"),
        (end_request(match_id, key=""), "bad_key"),
        (end_request(match_id, key="k" * 201), "bad_key"),
    ]
    for request, reason in bad:
        await refused(
            svc.stub.EndMatch(request, metadata=svc.metadata),
            grpc.StatusCode.INVALID_ARGUMENT,
            reason,
        )
    await refused(
        svc.stub.EndMatch(end_request(match_id, expected_version=3), metadata=svc.metadata),
        grpc.StatusCode.ABORTED,
        "stale_version",
    )
    await refused(
        svc.stub.EndMatch(end_request("nosuchmatch"), metadata=svc.metadata),
        grpc.StatusCode.NOT_FOUND,
        "match_not_found",
    )
    assert len(await stream_commits(settings.nats_url, match_id)) == 1
    assert (await a.get(match_id)).status == match_pb2.MATCH_STATUS_ACTIVE
    # and a valid one still works afterwards, a void end with the given scores
    reply = await svc.stub.EndMatch(
        end_request(match_id, ranks=(1, 1), scores=[0.0, 0.0]), metadata=svc.metadata
    )
    assert list(reply.outcome.ranks) == [1, 1] and list(reply.outcome.scores) == [0.0, 0.0]


async def test_the_ratings_consumer_does_not_rate_an_ended_match(
    service, settings, valkey_server
) -> None:
    a, b, svc = service.player(A), service.player(B), service.service()
    ended = await a.create("tic_tac_toe", [A, B], match_options=HOUR)
    await svc.stub.EndMatch(end_request(ended), metadata=svc.metadata)
    played = await a.create("tic_tac_toe", [A, B])  # a real one after it: rated
    for who, cell in ((a, 0), (b, 3), (a, 1), (b, 4), (a, 2)):
        await who.submit(played, f'{{"type": "place_mark", "cell": {cell}}}')
    client = redis.from_url(valkey_server.url)
    nc = await nats.connect(settings.nats_url)
    try:
        ratings = Ratings(client)
        consumer = ResultsConsumer(nc.jetstream(), ratings)
        stop = asyncio.Event()
        task = asyncio.create_task(consumer.run(stop))

        async def both_seen() -> bool:
            return consumer.rated + consumer.duplicates >= 2

        await until(both_seen)
        stop.set()
        await task
        rows = await ratings.get_many("tic_tac_toe", [A, B])
        assert [r.matches for r in rows] == [1, 1]  # the played match only
    finally:
        await nc.close()
        await client.aclose()


def test_the_ratings_know_the_reason_the_match_service_writes() -> None:
    assert ratings_module.ADJUDICATED_PREFIX == endings.ADJUDICATED_PREFIX


def test_competition_ranks() -> None:
    assert check_ranks([1, 1, 3], 3) == (1, 1, 3)
    assert check_ranks([3, 1, 3, 1], 4) == (3, 1, 3, 1)
    assert check_ranks([1, 2, 2, 4], 4) == (1, 2, 2, 4)
    for bad in ([1, 2, 3, 3, 6], [2, 1, 1], [1, 1, 2], [0], [1, 3]):
        with pytest.raises(Exception, match="ranks"):
            check_ranks(bad, len(bad))
