"""Service-to-service clients spread their calls over every replica.

Two stand-in MatchService servers; the clients that call the match service
(matchmaking's match creator, the bot worker) are pointed at a target naming
both, as a ``dns:///`` name of a headless Service resolves to every pod.
With gRPC's default policy (pick_first) every call would go to one of them.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from typing import Any

import grpc
import pytest

from services.bots.settings import BotSettings
from services.bots.worker import BotWorker
from services.common.auth import AuthSettings, Tokens
from services.common.grpcserver import GrpcServer, ServerConfig, balanced_channel_options
from services.matchmaking.match_client import GrpcMatchCreator, ServiceToken
from tabletop.match.v1 import match_pb2

SECRET = "balancing-test-secret-0123456789abcdef"
CREATE = "/tabletop.match.v1.MatchService/CreateMatch"


def _replica(counts: dict[int, int], index: int):  # type: ignore[no-untyped-def]
    async def create(
        request: match_pb2.CreateMatchRequest, context
    ) -> match_pb2.CreateMatchResponse:  # type: ignore[no-untyped-def]
        counts[index] = counts.get(index, 0) + 1
        return match_pb2.CreateMatchResponse(match_id=f"m{index}", version=0)

    def register(_servicer, server):  # type: ignore[no-untyped-def]
        server.add_generic_rpc_handlers(
            (
                grpc.method_handlers_generic_handler(
                    "tabletop.match.v1.MatchService",
                    {
                        "CreateMatch": grpc.unary_unary_rpc_method_handler(
                            create,
                            request_deserializer=match_pb2.CreateMatchRequest.FromString,
                            response_serializer=match_pb2.CreateMatchResponse.SerializeToString,
                        )
                    },
                ),
            )
        )

    return register


async def _calls_spread(call: Any, counts: dict[int, int]) -> None:
    """Once both replicas are connected (the first calls may all go to the
    one that connected first), round robin alternates between them."""
    deadline = asyncio.get_running_loop().time() + 10
    while set(counts) != {0, 1}:
        assert asyncio.get_running_loop().time() < deadline, f"one replica only: {counts}"
        await call()
    counts.clear()
    for _ in range(20):
        await call()
    assert counts == {0: 10, 1: 10}


@pytest.fixture
async def replicas() -> AsyncIterator[tuple[str, dict[int, int]]]:
    counts: dict[int, int] = {}
    servers = []
    for i in range(2):
        server = GrpcServer(ServerConfig(host="127.0.0.1"), interceptors=())
        server.add_service(_replica(counts, i), None, "tabletop.match.v1.MatchService")
        await server.start()
        servers.append(server)
    try:
        yield "ipv4:" + ",".join(s.address for s in servers), counts
    finally:
        for s in servers:
            await s.stop(0)


async def test_the_default_policy_would_pin_one_replica(replicas) -> None:  # type: ignore[no-untyped-def]
    target, counts = replicas
    async with grpc.aio.insecure_channel(target) as channel:
        call = channel.unary_unary(
            CREATE,
            request_serializer=match_pb2.CreateMatchRequest.SerializeToString,
            response_deserializer=match_pb2.CreateMatchResponse.FromString,
        )
        for _ in range(20):
            await call(match_pb2.CreateMatchRequest(game="tic_tac_toe"), timeout=5)
    assert len(counts) == 1  # what the options below are for


async def test_balanced_channel_options_spread_calls(replicas) -> None:  # type: ignore[no-untyped-def]
    target, counts = replicas
    async with grpc.aio.insecure_channel(target, options=balanced_channel_options()) as channel:
        call = channel.unary_unary(
            CREATE,
            request_serializer=match_pb2.CreateMatchRequest.SerializeToString,
            response_deserializer=match_pb2.CreateMatchResponse.FromString,
        )
        await _calls_spread(
            lambda: call(match_pb2.CreateMatchRequest(game="tic_tac_toe"), timeout=5), counts
        )


async def test_matchmaking_creates_matches_on_every_replica(replicas) -> None:  # type: ignore[no-untyped-def]
    target, counts = replicas
    creator = GrpcMatchCreator(target, ServiceToken(Tokens(AuthSettings(secret=SECRET))))
    try:
        await _calls_spread(
            lambda: creator.create_match("tic_tac_toe", ["guest:a", "guest:b"], "", key="k"),
            counts,
        )
    finally:
        await creator.channel.close()


async def test_the_bot_worker_calls_every_replica(replicas) -> None:  # type: ignore[no-untyped-def]
    target, counts = replicas
    worker = BotWorker(BotSettings(match_addr=target, jwt_secret=SECRET))
    try:
        await _calls_spread(
            lambda: worker.stub.CreateMatch(match_pb2.CreateMatchRequest(game="x"), timeout=5),
            counts,
        )
    finally:
        await worker.channel.close()
        await worker.redis.aclose()
