"""Enqueue and WatchTicket limits per caller, shared by two matchmaking replicas."""

from __future__ import annotations

import contextlib
import dataclasses

import grpc
import pytest

from services.common.errors import error_info, retry_info
from services.common.ratelimit import LimitSettings, Rate
from services.matchmaking.server import MatchmakingProcess
from tabletop.matchmaking.v1 import matchmaking_pb2 as pb
from tabletop.matchmaking.v1 import matchmaking_pb2_grpc as pb_grpc

from .conftest import auth

LIMITS = LimitSettings(enqueue=Rate(3, 60), streams=1)


@contextlib.asynccontextmanager
async def _replica(settings):
    s = dataclasses.replace(settings, run_matchmaker=False, run_ratings=False, limits=LIMITS)
    proc = await MatchmakingProcess(s).start()
    channel = grpc.aio.insecure_channel(f"127.0.0.1:{proc.port}")
    try:
        yield pb_grpc.MatchmakingServiceStub(channel)
    finally:
        await channel.close()
        await proc.stop()


async def test_enqueue_and_watch_are_limited_per_caller(settings, rclient) -> None:
    async with _replica(settings) as a, _replica(settings) as b:
        tickets = []
        for i in range(3):
            stub = a if i % 2 else b
            t = await stub.Enqueue(pb.EnqueueRequest(game="tic_tac_toe"), metadata=auth("flood"))
            tickets.append(t.ticket_id)
            await stub.CancelTicket(
                pb.CancelTicketRequest(ticket_id=t.ticket_id), metadata=auth("flood")
            )
        with pytest.raises(grpc.aio.AioRpcError) as e:
            await a.Enqueue(pb.EnqueueRequest(game="tic_tac_toe"), metadata=auth("flood"))
        assert e.value.code() == grpc.StatusCode.RESOURCE_EXHAUSTED
        assert error_info(e.value).reason == "rate_limited"
        assert error_info(e.value).metadata["rule"] == "enqueue"
        assert retry_info(e.value).retry_delay.ToMilliseconds() > 0
        # someone else queues as usual
        mine = await b.Enqueue(pb.EnqueueRequest(game="tic_tac_toe"), metadata=auth("calm"))
        # one open watch per caller (the limit here), across replicas
        first = a.WatchTicket(
            pb.WatchTicketRequest(ticket_id=mine.ticket_id), metadata=auth("calm")
        )
        assert (await first.read()).state == pb.TICKET_STATE_SEARCHING
        second = b.WatchTicket(
            pb.WatchTicketRequest(ticket_id=mine.ticket_id), metadata=auth("calm")
        )
        with pytest.raises(grpc.aio.AioRpcError) as e:
            await second.read()
        assert error_info(e.value).reason == "too_many_streams"
        first.cancel()
