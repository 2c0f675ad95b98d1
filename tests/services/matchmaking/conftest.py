"""Real valkey and nats-server for the matchmaking tests, plus the service wired up."""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import AsyncIterator, Iterator

import grpc
import nats
import pytest
import redis.asyncio as redis

from engine_core.registry import default_registry
from services.common.auth import AuthSettings, Tokens
from services.common.grpcserver import GrpcServer, ServerConfig
from services.common.servers import NatsServer, ValkeyServer
from services.matchmaking.app import Matchmaking, TicketEvents
from services.matchmaking.ratings import Ratings
from services.matchmaking.service import SERVICE_NAME, MatchmakingServicer
from services.matchmaking.settings import MatchmakingSettings
from services.matchmaking.store import TicketStore
from tabletop.matchmaking.v1 import matchmaking_pb2_grpc as pb_grpc

SECRET = "test-secret-of-at-least-32-bytes-long!!"


@pytest.fixture(scope="session")
def valkey_url() -> Iterator[str]:
    """One valkey for the session; each test starts with FLUSHALL (``rclient``)."""
    with ValkeyServer() as server:
        yield server.url


@pytest.fixture(scope="session")
def nats_url() -> Iterator[str]:
    with NatsServer() as server:
        yield server.url


@pytest.fixture
def settings(valkey_url: str) -> MatchmakingSettings:
    return MatchmakingSettings(
        redis_url=valkey_url,
        jwt_secret=SECRET,
        tick_s=0.05,
        watch_update_s=0.2,
        watch_grace_s=1.0,
    )


@pytest.fixture
async def rclient(valkey_url: str) -> AsyncIterator[redis.Redis]:
    client = redis.from_url(valkey_url)
    await client.flushall()
    yield client
    await client.aclose()


@pytest.fixture
async def js(nats_url: str):
    nc = await nats.connect(nats_url)
    js = nc.jetstream()
    yield js
    await nc.drain()


TOKENS = Tokens(AuthSettings(secret=SECRET))


def token(sub: str, role: str = "player") -> str:
    return TOKENS.issue(sub, role=role)


def auth(sub: str, role: str = "player") -> tuple[tuple[str, str]]:
    return (("authorization", f"Bearer {token(sub, role)}"),)


class Api:
    """A matchmaking gRPC server on a free port and a client stub."""

    def __init__(self, server: GrpcServer, stub, app: Matchmaking, events: TicketEvents):
        self.server = server
        self.stub = stub
        self.app = app
        self.events = events


@contextlib.asynccontextmanager
async def running_api(settings: MatchmakingSettings, client: redis.Redis) -> AsyncIterator[Api]:
    store = TicketStore(client, settings)
    events = TicketEvents(client)
    await events.start()
    app = Matchmaking(store, Ratings(client), events, default_registry(), settings)
    server = GrpcServer(ServerConfig(host="127.0.0.1", port=0, grace_seconds=0))
    server.add_service(
        pb_grpc.add_MatchmakingServiceServicer_to_server,
        MatchmakingServicer(app, TOKENS),
        SERVICE_NAME,
    )
    await server.start()
    channel = grpc.aio.insecure_channel(server.address)
    try:
        yield Api(server, pb_grpc.MatchmakingServiceStub(channel), app, events)
    finally:
        await channel.close()
        await server.stop()
        await events.stop()


@pytest.fixture
async def api(settings: MatchmakingSettings, rclient: redis.Redis) -> AsyncIterator[Api]:
    async with running_api(settings, rclient) as a:
        yield a


async def until(cond, timeout: float = 10.0, every: float = 0.02):
    """Poll an async condition until it is truthy (returns it) or time runs out."""
    deadline = asyncio.get_running_loop().time() + timeout
    while True:
        v = await cond()
        if v:
            return v
        if asyncio.get_running_loop().time() > deadline:
            raise AssertionError("condition not met in time")
        await asyncio.sleep(every)


async def run_until_settled(store, ids, makers, *, settle_s: float = 2.0, timeout: float = 90.0):
    """Run matchmakers until nothing more gets matched (the number of tickets
    still searching or being matched, ``ZCARD mm:exp``, has not moved for
    ``settle_s``), stop them (a round in flight completes), then expire what is
    left with a sweep dated past every ticket's expiry: each ticket has ended,
    however fast the machine is."""
    stop = asyncio.Event()
    tasks = [asyncio.create_task(m.run(stop)) for m in makers]
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout
    last, since = -1, loop.time()
    try:
        while True:
            await asyncio.sleep(0.1)
            open_tickets = await store.redis.zcard("mm:exp")
            if open_tickets == 0:
                break
            if open_tickets != last:
                last, since = open_tickets, loop.time()
            elif loop.time() - since >= settle_s:
                break
            if loop.time() > deadline:
                raise AssertionError("matchmaking did not settle")
    finally:
        stop.set()
        await asyncio.gather(*tasks)
    await store.sweep(at_ms=int(time.time() * 1000) + 10**9)
