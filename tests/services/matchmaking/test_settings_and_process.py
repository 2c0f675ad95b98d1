"""Settings from the environment; the whole process up and down."""

from __future__ import annotations

import asyncio
import dataclasses

import grpc
import pytest
from grpc_health.v1 import health_pb2, health_pb2_grpc

from services.common.results import ensure_results_stream
from services.common.servers import ValkeyServer
from services.matchmaking.inprocess import InProcessMatchCreator
from services.matchmaking.server import MatchmakingProcess
from services.matchmaking.settings import MatchmakingSettings
from tabletop.matchmaking.v1 import matchmaking_pb2 as pb
from tabletop.matchmaking.v1 import matchmaking_pb2_grpc as pb_grpc

from .conftest import auth


def test_settings_read_the_environment_once() -> None:
    s = MatchmakingSettings.from_env(
        {
            "TABLETOP_REDIS_URL": "redis://r:1/0",
            "TABLETOP_MATCHMAKING_WATCH_GRACE_S": "2.5",
            "TABLETOP_MATCHMAKING_RUN_RATINGS": "false",
            "TABLETOP_MATCHMAKING_GRPC_PORT": "7000",
        },
        tick_s=0.5,
    )
    assert (s.redis_url, s.watch_grace_s, s.run_ratings, s.grpc_port, s.tick_s) == (
        "redis://r:1/0",
        2.5,
        False,
        7000,
        0.5,
    )
    with pytest.raises(ValueError, match="TABLETOP_MATCHMAKING_TICK_S"):
        MatchmakingSettings.from_env({"TABLETOP_MATCHMAKING_TICK_S": "soon"})
    assert MatchmakingSettings.from_env({"TABLETOP_MATCHMAKING_BOT_LEVEL": "search"}).bot_level == (
        "search"
    )
    with pytest.raises(ValueError, match="TABLETOP_MATCHMAKING_BOT_LEVEL='expert'"):
        MatchmakingSettings.from_env({"TABLETOP_MATCHMAKING_BOT_LEVEL": "expert"})
    assert s.window(0) == s.window_base and s.window(1e9) == s.window_max


async def test_the_process_serves_health_pairs_and_rates(settings, nats_url, rclient, js) -> None:
    s = dataclasses.replace(settings, nats_url=nats_url, metrics_port=0)
    await ensure_results_stream(js)
    await js.purge_stream("RESULTS")  # the server is shared by the session's tests
    proc = await MatchmakingProcess(s, creator=InProcessMatchCreator()).start()
    try:
        async with grpc.aio.insecure_channel(f"127.0.0.1:{proc.port}") as ch:
            health = health_pb2_grpc.HealthStub(ch)
            res = await health.Check(health_pb2.HealthCheckRequest(service=""))
            assert res.status == health_pb2.HealthCheckResponse.SERVING
            stub = pb_grpc.MatchmakingServiceStub(ch)
            tickets = [
                (
                    await stub.Enqueue(pb.EnqueueRequest(game="tic_tac_toe"), metadata=auth(p))
                ).ticket_id
                for p in ("ann", "ben")
            ]
            for t, p in zip(tickets, ("ann", "ben"), strict=True):
                updates = [
                    u
                    async for u in stub.WatchTicket(
                        pb.WatchTicketRequest(ticket_id=t), metadata=auth(p)
                    )
                ]
                assert updates[-1].state == pb.TICKET_STATE_MATCHED
            board = await stub.Leaderboard(
                pb.LeaderboardRequest(game="tic_tac_toe"), metadata=auth("ann")
            )
            assert list(board.entries) == []
        assert proc.metrics_port
    finally:
        await asyncio.wait_for(proc.stop(), 10)


async def test_a_dead_redis_is_unavailable_not_a_crash(settings, tmp_path) -> None:
    with ValkeyServer(data_dir=tmp_path / "valkey") as own:
        s = dataclasses.replace(
            settings, redis_url=own.url, run_matchmaker=False, run_ratings=False
        )
        proc = await MatchmakingProcess(s).start()
        try:
            async with grpc.aio.insecure_channel(f"127.0.0.1:{proc.port}") as ch:
                stub = pb_grpc.MatchmakingServiceStub(ch)
                await stub.Enqueue(pb.EnqueueRequest(game="tic_tac_toe"), metadata=auth("amy"))
                own.stop()
                with pytest.raises(grpc.aio.AioRpcError) as e:
                    await stub.Enqueue(pb.EnqueueRequest(game="tic_tac_toe"), metadata=auth("bea"))
                assert e.value.code() == grpc.StatusCode.UNAVAILABLE
                own.start()  # same port: the service recovers without a restart
                res = await stub.Enqueue(
                    pb.EnqueueRequest(game="tic_tac_toe"), metadata=auth("bea")
                )
                assert res.ticket_id
        finally:
            await asyncio.wait_for(proc.stop(), 10)
