"""Pools: tickets of a closed pool meet only each other (a tournament's
score race queues its entrants in one), and only services may name one."""

from __future__ import annotations

import grpc
import pytest

from services.common.errors import error_info
from services.matchmaking.inprocess import InProcessMatchCreator
from services.matchmaking.matchmaker import Matchmaker
from services.matchmaking.store import MATCHED, NewTicket, TicketStore, clock_options_key
from tabletop.matchmaking.v1 import matchmaking_pb2 as pb

from .conftest import auth


def test_the_public_queues_keep_their_keys():
    # no pool: the key is what it was before pools (tickets queued by an older
    # replica still meet the new ones)
    assert clock_options_key("", "") == clock_options_key("", "", "")
    assert clock_options_key("", "30s") == clock_options_key("", "30s", "")
    assert clock_options_key("", "") != clock_options_key("", "", "tournament:a")
    assert clock_options_key("", "", "tournament:a") != clock_options_key("", "", "tournament:b")


async def test_tickets_of_a_pool_meet_only_each_other(rclient, settings) -> None:
    store = TicketStore(rclient, settings)

    def ticket(player: str, pool: str) -> NewTicket:
        return NewTicket("tic_tac_toe", (player,), (2,), "", False, 25.0, pool=pool)

    ids = {
        "a1": await store.enqueue(ticket("a1", "tournament:a")),
        "pub1": await store.enqueue(ticket("pub1", "")),
        "b1": await store.enqueue(ticket("b1", "tournament:b")),
        "a2": await store.enqueue(ticket("a2", "tournament:a")),
        "pub2": await store.enqueue(ticket("pub2", "")),
    }
    creator = InProcessMatchCreator()
    stats = await Matchmaker(store, creator, settings).run_once()
    assert stats.matches == 2
    recs = {p: r for p, r in zip(ids, await store.get_many(list(ids.values())), strict=True)}
    assert recs["a1"].state == recs["a2"].state == MATCHED
    assert recs["a1"].match_id == recs["a2"].match_id
    assert recs["pub1"].match_id == recs["pub2"].match_id != recs["a1"].match_id
    assert recs["b1"].state == "searching"  # alone in its pool


async def test_only_a_service_names_a_pool(api) -> None:
    with pytest.raises(grpc.aio.AioRpcError) as e:
        await api.stub.Enqueue(
            pb.EnqueueRequest(game="tic_tac_toe", pool="tournament:x"), metadata=auth("alice")
        )
    assert e.value.code() == grpc.StatusCode.PERMISSION_DENIED
    assert error_info(e.value).reason == "pool_service_only"
    with pytest.raises(grpc.aio.AioRpcError) as e:
        await api.stub.Enqueue(
            pb.EnqueueRequest(game="tic_tac_toe", party=["bob"], pool="x" * 201),
            metadata=auth("svc", "service"),
        )
    assert error_info(e.value).reason == "bad_pool"
    ok = await api.stub.Enqueue(
        pb.EnqueueRequest(game="tic_tac_toe", party=["bob"], pool="tournament:x"),
        metadata=auth("svc", "service"),
    )
    rec = await api.app.store.get(ok.ticket_id)
    assert rec is not None and rec.state == "searching"
