"""Assembles and runs the match service: NATS, Redis, rules, gRPC.

``MatchServer(settings).start()`` connects to everything, makes sure the
streams exist, and serves ``MatchService``, ``AuthService``, standard health
checking and reflection. ``stop()`` turns health to NOT_SERVING, lets calls
finish within the grace period, writes the pending cache updates, and closes
the connections.
"""

from __future__ import annotations

import asyncio
from typing import Any

import nats
import redis.asyncio as redis
from nats.aio.client import Client as NATS
from prometheus_client import start_http_server

from services.common.auth import Tokens
from services.common.grpcserver import GrpcServer, ServerConfig
from services.common.logging import get_logger
from services.match.app import AppConfig, MatchApp
from services.match.cache import RedisProjectionCache
from services.match.index import MatchIndex
from services.match.ports import InProcessRules, RulesClient
from services.match.servicer import AuthServicer, MatchServicer
from services.match.settings import MatchSettings
from services.match.store import JetStreamStore, StreamConfig, ensure_streams
from tabletop.match.v1 import match_pb2, match_pb2_grpc

log = get_logger("match")

SERVICE_NAMES = (
    match_pb2.DESCRIPTOR.services_by_name["MatchService"].full_name,
    match_pb2.DESCRIPTOR.services_by_name["AuthService"].full_name,
)


def make_rules(settings: MatchSettings) -> RulesClient:
    """The rules client the settings ask for (in process when no address)."""
    if not settings.rules_addr:
        return InProcessRules()
    from services.match.rules_grpc import GrpcRules

    return GrpcRules(settings.rules_addr, timeout_s=settings.rules_timeout_s)


class MatchServer:
    def __init__(self, settings: MatchSettings, *, rules: RulesClient | None = None) -> None:
        self.settings = settings
        self.rules = rules or make_rules(settings)
        self.tokens = Tokens(settings.auth)
        self.port = 0
        self.app: MatchApp | None = None
        self._nc: NATS | None = None
        self._redis: redis.Redis | None = None
        self.grpc: GrpcServer | None = None
        self.metrics_port: int | None = None
        self._metrics: Any = None

    @property
    def address(self) -> str:
        host = self.settings.host
        return f"{'127.0.0.1' if host in ('[::]', '0.0.0.0', '') else host}:{self.port}"

    async def start(self) -> MatchServer:
        s = self.settings
        if s.auth.uses_dev_secret:
            log.warning("dev_jwt_secret", hint="set TABLETOP_JWT_SECRET outside local development")
        self._nc = await nats.connect(
            s.nats_url,
            name="tabletop-match",
            max_reconnect_attempts=-1,
            reconnect_time_wait=0.2,
            connect_timeout=5,
        )
        js = self._nc.jetstream(timeout=5.0)
        config = StreamConfig(
            name=s.stream,
            replicas=s.stream_replicas,
            duplicate_window_s=s.duplicate_window_s,
            results_name=s.results_stream,
        )
        await ensure_streams(js, config)
        index = MatchIndex(js, s.index_bucket, s.stream_replicas)
        await index.open()
        self._redis = redis.from_url(s.redis_url, socket_timeout=2.0, socket_connect_timeout=2.0)
        self.app = MatchApp(
            rules=self.rules,
            store=JetStreamStore(js, config),
            cache=RedisProjectionCache(self._redis, ttl_s=s.cache_ttl_s),
            index=index,
            config=AppConfig(
                rules_timeout_s=s.rules_timeout_s,
                max_decide_attempts=s.decide_attempts,
                hot_cache_size=s.hot_cache,
                allow_player_create=s.players_may_create,
                results_stream=s.results_stream,
                cache_write_interval_s=s.cache_write_interval_s,
            ),
        )
        server = GrpcServer(
            ServerConfig(
                host=s.host,
                port=s.port,
                grace_seconds=s.grace_s,
                max_connection_age_seconds=s.max_connection_age_s or None,
            )
        )
        server.add_service(
            match_pb2_grpc.add_MatchServiceServicer_to_server,
            MatchServicer(self.app, self.tokens),
            SERVICE_NAMES[0],
        )
        server.add_service(
            match_pb2_grpc.add_AuthServiceServicer_to_server,
            AuthServicer(self.tokens),
            SERVICE_NAMES[1],
        )
        self.port = await server.start()
        self.grpc = server
        if s.metrics_port >= 0:
            metrics_server, _thread = start_http_server(
                s.metrics_port, addr=s.host.strip("[]") or "0.0.0.0"
            )
            self.metrics_port = metrics_server.server_port
            self._metrics = metrics_server
        log.info(
            "match_service_started",
            address=self.address,
            metrics_port=self.metrics_port,
            nats=s.nats_url,
            redis=s.redis_url,
        )
        return self

    async def stop(self, grace: float | None = None) -> None:
        """Graceful: NOT_SERVING, finish calls within ``grace``, flush, close."""
        grace = self.settings.grace_s if grace is None else grace
        if self.grpc is not None:
            await self.grpc.stop(grace)
        if self._metrics is not None:
            self._metrics.shutdown()
            self._metrics = None
        if self.app is not None:
            try:
                await asyncio.wait_for(self.app.drain(), timeout=max(grace, 0.5))
            except TimeoutError:
                log.warning("cache_writes_dropped")
            await self.app.cache_writes.close()
        close = getattr(self.rules, "close", None)
        if close is not None:
            await close()
        if self._redis is not None:
            await self._redis.aclose()
            self._redis = None
        if self._nc is not None:
            await self._nc.close()
            self._nc = None
        log.info("match_service_stopped")

    async def serve_until_signal(self) -> None:
        """Serve until SIGTERM/SIGINT (graceful gRPC stop), then close the rest."""
        assert self.grpc is not None
        await self.grpc.wait_for_shutdown()
        await self.stop()
