"""Assembles and runs the tournament service: NATS, Redis, the match service,
gRPC, and the process manager.

``TournamentServer(settings).start()`` connects, makes sure the streams exist,
serves ``TournamentService`` with health checking and reflection, and runs
the process manager (facts consumer and sweeps) in the background. ``stop()``
turns health to NOT_SERVING, stops the manager, lets calls finish within the
grace period and closes the connections.
"""

from __future__ import annotations

import asyncio
import contextlib
from typing import Any

import nats
import redis.asyncio as redis
from nats.aio.client import Client as NATS
from prometheus_client import start_http_server

from services.common.auth import Tokens
from services.common.grpcserver import GrpcServer, ServerConfig
from services.common.logging import get_logger
from services.common.natsurl import nats_servers
from services.tournaments.adapters import (
    GrpcMatches,
    GrpcMatchmaking,
    RedisBotJobs,
    RedisSeeding,
)
from services.tournaments.app import AppConfig, TournamentApp
from services.tournaments.manager import ProcessManager
from services.tournaments.servicer import TournamentServicer
from services.tournaments.settings import TournamentSettings
from services.tournaments.store import TournamentStore, ensure_tournament_stream
from tabletop.tournaments.v1 import tournaments_pb2, tournaments_pb2_grpc

log = get_logger("tournaments")

SERVICE_NAME = tournaments_pb2.DESCRIPTOR.services_by_name["TournamentService"].full_name


class TournamentServer:
    def __init__(self, settings: TournamentSettings) -> None:
        self.settings = settings
        self.tokens = Tokens(settings.auth)
        self.port = 0
        self.app: TournamentApp | None = None
        self.manager: ProcessManager | None = None
        self.grpc: GrpcServer | None = None
        self.metrics_port: int | None = None
        self._metrics: Any = None
        self._nc: NATS | None = None
        self._redis: redis.Redis | None = None
        self._matches: GrpcMatches | None = None
        self._queue: GrpcMatchmaking | None = None
        self._stop = asyncio.Event()
        self._task: asyncio.Task[None] | None = None

    @property
    def address(self) -> str:
        host = self.settings.host
        return f"{'127.0.0.1' if host in ('[::]', '0.0.0.0', '') else host}:{self.port}"

    async def start(self) -> TournamentServer:
        s = self.settings
        if s.auth.uses_dev_secret:
            log.warning("dev_jwt_secret", hint="set TABLETOP_JWT_SECRET outside local development")
        self._nc = await nats.connect(
            nats_servers(s.nats_url),
            name="tabletop-tournaments",
            max_reconnect_attempts=-1,
            reconnect_time_wait=0.2,
            connect_timeout=5,
        )
        js = self._nc.jetstream(timeout=5.0)
        await ensure_tournament_stream(js, s.stream, s.stream_replicas)
        self._redis = redis.from_url(s.redis_url, socket_timeout=2.0, socket_connect_timeout=2.0)
        self._matches = GrpcMatches(s.match_addr, self.tokens)
        if s.matchmaking_addr:
            self._queue = GrpcMatchmaking(s.matchmaking_addr, self.tokens)
        self.app = TournamentApp(
            store=TournamentStore(js, s.stream),
            matches=self._matches,
            bots=RedisBotJobs(self._redis),
            seeding=RedisSeeding(self._redis),
            config=AppConfig(players_may_create=s.players_may_create),
            queue=self._queue,
        )
        self.manager = ProcessManager(
            self.app,
            js,
            results_stream=s.results_stream,
            durable=s.durable,
            sweep_s=s.sweep_s,
            reconcile_s=s.reconcile_s,
            replicas=s.stream_replicas,
        )
        server = GrpcServer(ServerConfig(host=s.host, port=s.port, grace_seconds=s.grace_s))
        server.add_service(
            tournaments_pb2_grpc.add_TournamentServiceServicer_to_server,
            TournamentServicer(self.app, self.tokens),
            SERVICE_NAME,
        )
        self.port = await server.start()
        self.grpc = server
        self._task = asyncio.create_task(self._run_manager())
        if s.metrics_port >= 0:
            metrics_server, _thread = start_http_server(
                s.metrics_port, addr=s.host.strip("[]") or "0.0.0.0"
            )
            self.metrics_port = metrics_server.server_port
            self._metrics = metrics_server
        log.info(
            "tournament_service_started",
            address=self.address,
            metrics_port=self.metrics_port,
            nats=s.nats_url,
            match=s.match_addr,
        )
        return self

    async def _run_manager(self) -> None:
        assert self.manager is not None
        while not self._stop.is_set():
            try:
                await self.manager.run(self._stop)
            except Exception:
                if self._stop.is_set():
                    return
                log.exception("process_manager_failed")
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(self._stop.wait(), 1.0)

    async def stop(self, grace: float | None = None) -> None:
        grace = self.settings.grace_s if grace is None else grace
        self._stop.set()
        if self.grpc is not None:
            await self.grpc.stop(grace)
        if self._task is not None:
            await asyncio.wait([self._task], timeout=max(grace, 2.0))  # never raises
            self._task.cancel()
        if self._metrics is not None:
            self._metrics.shutdown()
            self._metrics = None
        if self._matches is not None:
            await self._matches.close()
        if self._queue is not None:
            await self._queue.close()
        if self._redis is not None:
            await self._redis.aclose()
            self._redis = None
        if self._nc is not None:
            await self._nc.close()
            self._nc = None
        log.info("tournament_service_stopped")

    async def serve_until_signal(self) -> None:
        assert self.grpc is not None
        await self.grpc.wait_for_shutdown()
        await self.stop()
