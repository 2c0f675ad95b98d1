"""Match service fixtures: real nats-server and valkey-server, the service
on a free port, and a small client that plays with bearer tokens."""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable
from typing import Any

import grpc
import nats
import pytest

from engine_core.registry import Registry, default_registry
from services.common.auth import AuthSettings, Tokens, bearer_metadata
from services.common.servers import NatsServer, ValkeyServer
from services.match.model import decode_commit
from services.match.ports import InProcessRules, RulesClient
from services.match.server import MatchServer
from services.match.settings import MatchSettings
from tabletop.match.v1 import match_pb2, match_pb2_grpc
from tests.services.match.secret_game import GAME as SECRET_GAME

SECRET = "test-secret-for-the-match-service-0123456789"


def make_registry() -> Registry:
    """Every shipped game plus the test game with secrets."""
    registry = Registry()
    for game in default_registry():
        registry.register(game)
    registry.register(SECRET_GAME)
    return registry


@pytest.fixture
def settings(nats_server: NatsServer, valkey_server: ValkeyServer) -> MatchSettings:
    return MatchSettings(
        nats_url=nats_server.url,
        redis_url=valkey_server.url,
        grace_s=0.5,
        auth=AuthSettings(secret=SECRET),
    )


@pytest.fixture
def tokens(settings: MatchSettings) -> Tokens:
    return Tokens(settings.auth)


class Player:
    """A client of one service instance holding one token."""

    def __init__(self, channel: grpc.aio.Channel, token: str | None, player_id: str = "") -> None:
        self.stub = match_pb2_grpc.MatchServiceStub(channel)
        self.token = token
        self.id = player_id
        self.metadata = bearer_metadata(token) if token else ()

    async def create(self, game: str, players: list[str], **kw: Any) -> str:
        reply = await self.stub.CreateMatch(
            match_pb2.CreateMatchRequest(game=game, players=players, **kw), metadata=self.metadata
        )
        return reply.match_id

    async def submit(self, match_id: str, move: str, **kw: Any) -> match_pb2.SubmitMoveResponse:
        return await self.stub.SubmitMove(
            match_pb2.SubmitMoveRequest(match_id=match_id, move_json=move, **kw),
            metadata=self.metadata,
        )

    async def get(self, match_id: str) -> match_pb2.GetMatchResponse:
        return await self.stub.GetMatch(
            match_pb2.GetMatchRequest(match_id=match_id), metadata=self.metadata
        )

    def watch(self, match_id: str, **kw: Any) -> Any:
        return self.stub.WatchMatch(
            match_pb2.WatchMatchRequest(match_id=match_id, **kw), metadata=self.metadata
        )

    def replay(self, match_id: str, **kw: Any) -> Any:
        return self.stub.ReplayMatch(
            match_pb2.ReplayMatchRequest(match_id=match_id, **kw), metadata=self.metadata
        )


class Service:
    """One running match service instance and the players talking to it."""

    def __init__(self, server: MatchServer, tokens: Tokens) -> None:
        self.server = server
        self.tokens = tokens
        self.channel = grpc.aio.insecure_channel(server.address)

    @property
    def app(self) -> Any:
        return self.server.app

    def player(self, player_id: str) -> Player:
        return Player(self.channel, self.tokens.issue(player_id), player_id)

    def service(self, name: str = "matchmaking") -> Player:
        return Player(self.channel, self.tokens.issue(f"svc:{name}", role="service"), f"svc:{name}")

    def anonymous(self) -> Player:
        return Player(self.channel, None)

    async def close(self) -> None:
        await self.channel.close()
        await self.server.stop(0.2)


@pytest.fixture
async def start_service(
    settings: MatchSettings, tokens: Tokens
) -> AsyncIterator[Callable[..., Any]]:
    """``await start_service(rules=..., **settings_changes)``: a running instance."""
    started: list[Service] = []

    async def start(rules: RulesClient | None = None, **changes: Any) -> Service:
        server = MatchServer(
            settings.with_(**changes), rules=rules or InProcessRules(make_registry())
        )
        await server.start()
        service = Service(server, tokens)
        started.append(service)
        return service

    yield start
    for service in reversed(started):
        await service.close()


@pytest.fixture
async def service(start_service: Callable[..., Any]) -> Service:
    return await start_service()


async def stream_commits(nats_url: str, match_id: str, stream: str = "MATCHES") -> list[Any]:
    """Every commit of a match as stored, read straight from JetStream."""
    nc = await nats.connect(nats_url)
    try:
        js = nc.jetstream()
        out = []
        seq = 0
        while True:
            try:
                msg = await js.get_msg(stream, seq=seq + 1, subject=f"match.{match_id}", next=True)
            except nats.js.errors.NotFoundError:
                return out
            seq = msg.seq
            out.append(decode_commit(msg.data))
    finally:
        await nc.close()
