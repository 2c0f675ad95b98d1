"""Enqueue with an idempotency key: a retry (after a lost reply, from a mobile
client or a tournament replica taking over) gets the ticket the first call
made, never a second one, whichever replica it reaches; the same key with
another request is refused and queues nothing."""

from __future__ import annotations

import asyncio

import grpc
import pytest
import redis.asyncio as redis

from services.common.errors import error_info
from services.matchmaking.inprocess import InProcessMatchCreator
from services.matchmaking.matchmaker import Matchmaker
from services.matchmaking.store import idempotency_key
from tabletop.matchmaking.v1 import matchmaking_pb2 as pb

from .conftest import auth, running_api

SERVICE = "service:tournaments"


def svc():
    return auth(SERVICE, "service")


async def tickets(client: redis.Redis) -> set[str]:
    return {k.decode() async for k in client.scan_iter("mm:t:*")}


async def refused(call, code: grpc.StatusCode, reason: str):
    with pytest.raises(grpc.aio.AioRpcError) as e:
        await call
    assert e.value.code() == code, e.value.details()
    info = error_info(e.value)
    assert info is not None and info.reason == reason
    return info


async def test_the_same_key_twice_is_one_ticket(api, rclient) -> None:
    req = pb.EnqueueRequest(game="tic_tac_toe", player_counts=[2], idempotency_key="tap-1")
    first = await api.stub.Enqueue(req, metadata=auth("alice"))
    assert first.state == pb.TICKET_STATE_SEARCHING and not first.replayed
    again = await api.stub.Enqueue(req, metadata=auth("alice"))
    assert again.ticket_id == first.ticket_id
    assert again.state == pb.TICKET_STATE_SEARCHING and again.replayed
    assert await tickets(rclient) == {f"mm:t:{first.ticket_id}"}
    # the key is alice's: bob's equal key is another key (and another ticket)
    bobs = await api.stub.Enqueue(req, metadata=auth("bob"))
    assert bobs.ticket_id != first.ticket_id and not bobs.replayed
    # without a key nothing changed: alice is queued already
    info = await refused(
        api.stub.Enqueue(
            pb.EnqueueRequest(game="tic_tac_toe", player_counts=[2]), metadata=auth("alice")
        ),
        grpc.StatusCode.ALREADY_EXISTS,
        "already_queued",
    )
    assert info.metadata["ticket_id"] == first.ticket_id
    # the key lives the ticket's whole life (search, claim, result)
    s = api.app.settings
    life_ms = (s.ticket_ttl_s + s.claim_timeout_s + s.result_ttl_s) * 1000
    assert await rclient.pttl(idempotency_key("alice", "tap-1")) > life_ms - 10_000


async def test_two_replicas_racing_on_a_key_make_one_ticket(api, settings, valkey_url) -> None:
    other = redis.from_url(valkey_url)  # the second replica's own connections
    try:
        async with running_api(settings, other) as second:
            req = pb.EnqueueRequest(
                game="tic_tac_toe", player_counts=[2], party=["carol"], pool="tournament:t1",
                idempotency_key="t1:race:carol:0",
            )  # fmt: skip
            answers = await asyncio.gather(
                *(stub.Enqueue(req, metadata=svc()) for stub in [api.stub, second.stub] * 8)
            )
            assert len({a.ticket_id for a in answers}) == 1
            assert sum(not a.replayed for a in answers) == 1  # one made it, 15 replayed
            assert len(await tickets(other)) == 1
    finally:
        await other.aclose()


async def test_the_same_key_with_another_request_is_refused_and_queues_nothing(
    api, rclient
) -> None:
    base = dict(game="dice_forge", player_counts=[2], party=["dave"], idempotency_key="k")
    first = await api.stub.Enqueue(pb.EnqueueRequest(**base), metadata=svc())
    variants = [
        {"party": ["erin"]},
        {"player_counts": [2, 3]},
        {"game": "tic_tac_toe"},
        {"options_json": '{"cards": "random"}'},
        {"time_control": "30s"},
        {"allow_bots": True},
        {"allow_bots": True, "bot_level": "search"},
        {"pool": "tournament:other"},
    ]
    before = await tickets(rclient)
    for change in variants:
        req = pb.EnqueueRequest(**(base | change))
        info = await refused(
            api.stub.Enqueue(req, metadata=svc()),
            grpc.StatusCode.FAILED_PRECONDITION,
            "idempotency_key_reused",
        )
        assert info.metadata["ticket_id"] == first.ticket_id, change
    assert await tickets(rclient) == before
    assert await rclient.get("mm:p:erin") is None  # erin was never queued
    # the first request itself still answers its ticket (default options
    # spelt "{}" are the same request)
    again = await api.stub.Enqueue(pb.EnqueueRequest(**base, options_json="{}"), metadata=svc())
    assert again.ticket_id == first.ticket_id and again.replayed


async def test_a_key_of_an_ended_ticket_answers_its_final_state(api, rclient, settings) -> None:
    req = pb.EnqueueRequest(game="tic_tac_toe", player_counts=[2], idempotency_key="c")
    cancelled = await api.stub.Enqueue(req, metadata=auth("frank"))
    await api.stub.CancelTicket(
        pb.CancelTicketRequest(ticket_id=cancelled.ticket_id), metadata=auth("frank")
    )
    again = await api.stub.Enqueue(req, metadata=auth("frank"))
    assert again.ticket_id == cancelled.ticket_id and again.replayed
    assert again.state == pb.TICKET_STATE_CANCELLED
    # matched: the retry answers the matched ticket (not a new search)
    made = {}
    for p in ("gina", "hank"):
        made[p] = await api.stub.Enqueue(
            pb.EnqueueRequest(game="tic_tac_toe", player_counts=[2], idempotency_key="m"),
            metadata=auth(p),
        )
    stats = await Matchmaker(api.app.store, InProcessMatchCreator(), settings).run_once()
    assert stats.matches == 1
    for p in ("gina", "hank"):
        again = await api.stub.Enqueue(
            pb.EnqueueRequest(game="tic_tac_toe", player_counts=[2], idempotency_key="m"),
            metadata=auth(p),
        )
        assert again.ticket_id == made[p].ticket_id and again.replayed
        assert again.state == pb.TICKET_STATE_MATCHED
        # an ended ticket is readable as long as its key answers with it
        key_left = await rclient.pttl(idempotency_key(p, "m"))
        assert await rclient.pttl(f"mm:t:{again.ticket_id}") >= key_left - 1000
        updates = [
            u
            async for u in api.stub.WatchTicket(
                pb.WatchTicketRequest(ticket_id=again.ticket_id), metadata=auth(p)
            )
        ]
        assert updates[-1].state == pb.TICKET_STATE_MATCHED and updates[-1].matched.match_id


async def test_a_bad_key_is_refused(api, rclient) -> None:
    for key in ["k" * 201, "tab\tkey"]:
        await refused(
            api.stub.Enqueue(
                pb.EnqueueRequest(game="tic_tac_toe", idempotency_key=key), metadata=auth("ivy")
            ),
            grpc.StatusCode.INVALID_ARGUMENT,
            "bad_key",
        )
    assert await tickets(rclient) == set()
