"""One matchmaking process: the gRPC API, a matchmaker loop and the ratings
consumer (each can be switched off in the settings), started and stopped together."""

from __future__ import annotations

import asyncio
import contextlib
import signal
from typing import Any

import nats
import redis.asyncio as redis

from engine_core.registry import default_registry
from services.common.auth import Tokens
from services.common.grpcserver import GrpcServer, ServerConfig
from services.common.logging import get_logger
from services.common.natsurl import nats_servers
from services.matchmaking.app import Matchmaking, TicketEvents
from services.matchmaking.matchmaker import Matchmaker
from services.matchmaking.ports import MatchCreator
from services.matchmaking.ratings import Ratings
from services.matchmaking.results import ResultsConsumer
from services.matchmaking.service import SERVICE_NAME, MatchmakingServicer
from services.matchmaking.settings import MatchmakingSettings
from services.matchmaking.store import TicketStore
from tabletop.matchmaking.v1 import matchmaking_pb2_grpc as pb_grpc

log = get_logger("matchmaking")


class MatchmakingProcess:
    def __init__(self, settings: MatchmakingSettings, creator: MatchCreator | None = None) -> None:
        self.settings = settings
        self.creator = creator
        # Timeouts so a dead Redis answers UNAVAILABLE instead of hanging calls
        # (generous: one pairing round's script may take a second on 10k tickets).
        self.redis = redis.from_url(
            settings.redis_url, socket_timeout=10.0, socket_connect_timeout=2.0
        )
        self.store = TicketStore(self.redis, settings)
        self.ratings = Ratings(self.redis, settings.rated_marker_ttl_s)
        # The subscription idles between messages: its own connection, no read timeout.
        self._events_redis = redis.from_url(settings.redis_url, socket_connect_timeout=2.0)
        self.events = TicketEvents(self._events_redis)
        self.server: GrpcServer | None = None
        self.matchmaker: Matchmaker | None = None
        self.consumer: ResultsConsumer | None = None
        self._nc: Any = None
        self._stop = asyncio.Event()
        self._tasks: list[asyncio.Task[None]] = []
        self.metrics_port: int | None = None
        self._closers: list[Any] = []

    @property
    def port(self) -> int:
        assert self.server is not None, "the API is not running"
        return self.server.port

    async def start(self) -> MatchmakingProcess:
        s = self.settings
        await self.redis.ping()
        if s.run_api:
            await self.events.start()
            tokens = Tokens(s.auth())
            app = Matchmaking(
                self.store, self.ratings, self.events, default_registry(), s, tokens=tokens
            )
            self.server = GrpcServer(
                ServerConfig(host=s.grpc_host, port=s.grpc_port, grace_seconds=s.grace_s)
            )
            self.server.add_service(
                pb_grpc.add_MatchmakingServiceServicer_to_server,
                MatchmakingServicer(app, tokens),
                SERVICE_NAME,
            )
            await self.server.start()
        if s.run_matchmaker:
            if self.creator is None:
                from services.matchmaking.match_client import GrpcMatchCreator

                client = GrpcMatchCreator.from_settings(s)
                self._closers.append(client.close)
                self.creator = client
            self.matchmaker = Matchmaker(self.store, self.creator, s, bot_kind=s.bot_level)
            self._tasks.append(asyncio.create_task(self.matchmaker.run(self._stop)))
        if s.run_ratings:
            self._nc = await nats.connect(nats_servers(s.nats_url), max_reconnect_attempts=-1)
            self.consumer = ResultsConsumer(
                self._nc.jetstream(),
                self.ratings,
                stream=s.results_stream,
                durable=s.ratings_durable,
                replicas=s.results_replicas,
            )
            self._tasks.append(asyncio.create_task(self.consumer.run(self._stop)))
        if s.metrics_port >= 0:
            from prometheus_client import start_http_server

            httpd, _ = start_http_server(s.metrics_port, addr=s.grpc_host)
            self.metrics_port = httpd.server_port
            self._closers.append(httpd.shutdown)
        log.info(
            "started",
            grpc_port=self.server.port if self.server else None,
            metrics_port=self.metrics_port,
            matchmaker=s.run_matchmaker,
            ratings=s.run_ratings,
        )
        return self

    async def stop(self) -> None:
        self._stop.set()
        if self.server is not None:
            await self.server.stop()
        for t in self._tasks:
            with contextlib.suppress(Exception):
                await t
        await self.events.stop()
        if self._nc is not None:
            with contextlib.suppress(Exception):
                await self._nc.drain()
        for close in self._closers:
            res = close()
            if asyncio.iscoroutine(res):
                await res
        await self.redis.aclose()
        await self._events_redis.aclose()

    async def wait(self) -> None:
        """Until SIGTERM/SIGINT (graceful) when serving the API."""
        if self.server is not None:
            await self.server.wait_for_shutdown()
            return
        loop = asyncio.get_running_loop()
        for sig in (signal.SIGTERM, signal.SIGINT):
            with contextlib.suppress(NotImplementedError, RuntimeError, ValueError):
                loop.add_signal_handler(sig, self._stop.set)
        await self._stop.wait()
