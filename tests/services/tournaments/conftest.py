"""Tournament fixtures: real nats-server and valkey-server, the real match
service and bot worker, and the tournament service, all on free ports."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Callable
from typing import Any

import grpc
import nats
import pytest

from services.bots.settings import BotSettings
from services.bots.worker import BotWorker
from services.common.auth import AuthSettings, Tokens, bearer_metadata
from services.common.servers import NatsServer, ValkeyServer
from services.match.server import MatchServer
from services.match.settings import MatchSettings
from services.tournaments.server import TournamentServer
from services.tournaments.settings import TournamentSettings
from tabletop.tournaments.v1 import tournaments_pb2 as pb
from tabletop.tournaments.v1 import tournaments_pb2_grpc as pb_grpc

SECRET = "test-secret-for-the-tournament-service-0123"
TOKENS = Tokens(AuthSettings(secret=SECRET))


def auth(sub: str, role: str = "player") -> tuple[tuple[str, str], ...]:
    return bearer_metadata(TOKENS.issue(sub, role=role))


ORGANISER = auth("organiser:ada", "organiser")


async def until(cond: Callable[[], Any], timeout: float = 60.0, every: float = 0.05) -> Any:
    """Poll an async condition until it is truthy (returns it) or time runs out."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout
    while True:
        v = await cond()
        if v:
            return v
        if loop.time() > deadline:
            raise AssertionError("condition not met in time")
        await asyncio.sleep(every)


class Stack:
    """NATS, Redis, a match service, a bot worker and tournament replicas."""

    def __init__(self, nats_url: str, redis_url: str) -> None:
        self.nats_url = nats_url
        self.redis_url = redis_url
        self.match: MatchServer | None = None
        self.bots: BotWorker | None = None
        self.replicas: list[TournamentServer] = []
        self.channels: list[grpc.aio.Channel] = []

    async def start(self, bot_kind: str = "random") -> Stack:
        self.match = await MatchServer(
            MatchSettings(
                nats_url=self.nats_url,
                redis_url=self.redis_url[:-1] + "1",
                grace_s=0.2,
                players_may_create=False,
                auth=AuthSettings(secret=SECRET),
            )
        ).start()
        self.bots = await BotWorker(
            BotSettings(
                redis_url=self.redis_url,
                match_addr=self.match.address,
                jwt_secret=SECRET,
                kind=bot_kind,
                claim_idle_s=3.0,
            )
        ).start()
        return self

    def settings(self, **changes: Any) -> TournamentSettings:
        assert self.match is not None
        base = TournamentSettings(
            nats_url=self.nats_url,
            redis_url=self.redis_url,
            match_addr=self.match.address,
            matchmaking_addr="",  # none (a queued race's tests start one and name it)
            sweep_s=0.2,
            reconcile_s=1.0,
            grace_s=0.2,
            players_may_create=False,
            auth=AuthSettings(secret=SECRET),
        )
        return base.with_(**changes)

    async def replica(self, **changes: Any) -> TournamentServer:
        server = await TournamentServer(self.settings(**changes)).start()
        self.replicas.append(server)
        return server

    def stub(self, server: TournamentServer | None = None) -> pb_grpc.TournamentServiceStub:
        server = server or self.replicas[0]
        channel = grpc.aio.insecure_channel(server.address)
        self.channels.append(channel)
        return pb_grpc.TournamentServiceStub(channel)

    async def close(self) -> None:
        for c in self.channels:
            await c.close()
        for r in self.replicas:
            await r.stop(0.1)
        if self.bots is not None:
            await self.bots.stop()
        if self.match is not None:
            await self.match.stop(0.1)


@pytest.fixture
async def stack(nats_server: NatsServer, valkey_server: ValkeyServer) -> AsyncIterator[Stack]:
    s = await Stack(nats_server.url, valkey_server.url).start()
    try:
        yield s
    finally:
        await s.close()


async def create(stub, game: str, fmt: int, rounds: int = 0, **options: Any) -> str:
    reply = await stub.CreateTournament(
        pb.CreateTournamentRequest(
            name="test", game=game, format=fmt, rounds=rounds,
            options=pb.TournamentOptions(**options), seed="fixed-seed",
        ),
        metadata=ORGANISER,
    )  # fmt: skip
    return reply.tournament_id


async def register_bots(stub, tid: str, n: int, prefix: str = "bot:p") -> list[str]:
    players = [f"{prefix}{i}" for i in range(n)]
    for p in players:
        await stub.Register(pb.RegisterRequest(tournament_id=tid, player=p), metadata=ORGANISER)
    return players


async def finished(stub, tid: str, timeout: float = 30.0) -> pb.Tournament:
    async def done():
        t = await stub.GetTournament(pb.GetTournamentRequest(tournament_id=tid), metadata=ORGANISER)
        return t if t.status == pb.STATUS_FINISHED else None

    return await until(done, timeout=timeout, every=0.1)


async def match_subjects(nats_url: str) -> dict[str, int]:
    """Every match in the MATCHES stream (subject -> message count)."""
    nc = await nats.connect(nats_url)
    try:
        info = await nc.jetstream().stream_info("MATCHES", subjects_filter="match.*")
        return dict(info.state.subjects or {})
    finally:
        await nc.close()


async def tournament_events(nats_url: str, tid: str) -> list[Any]:
    from services.tournaments.model import decode_event

    nc = await nats.connect(nats_url)
    try:
        js = nc.jetstream()
        out, seq = [], 0
        while True:
            try:
                msg = await js.get_msg(
                    "TOURNAMENTS", seq=seq + 1, subject=f"tournament.{tid}", next=True
                )
            except nats.js.errors.NotFoundError:
                return out
            seq = msg.seq
            out.append(decode_event(msg.data))
    finally:
        await nc.close()
