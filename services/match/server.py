"""Assembles and runs the match service: NATS, Redis, rules, gRPC.

``MatchServer(settings).start()`` connects to everything, makes sure the
streams exist, and serves ``MatchService``, ``AuthService``, standard health
checking and reflection. ``stop()`` turns health to NOT_SERVING, lets calls
finish within the grace period, writes the pending cache updates, and closes
the connections.
"""

from __future__ import annotations

import asyncio

import grpc
import nats
import redis.asyncio as redis
import structlog
from grpc_health.v1 import health, health_pb2, health_pb2_grpc
from grpc_reflection.v1alpha import reflection
from nats.aio.client import Client as NATS

from services.common.auth import Tokens
from services.match.app import AppConfig, MatchApp
from services.match.cache import RedisProjectionCache
from services.match.index import MatchIndex
from services.match.ports import InProcessRules, RulesClient
from services.match.servicer import AuthServicer, MatchServicer
from services.match.settings import MatchSettings
from services.match.store import JetStreamStore, StreamConfig, ensure_streams
from tabletop.match.v1 import match_pb2, match_pb2_grpc

log = structlog.get_logger("tabletop.match")

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
        self._server: grpc.aio.Server | None = None
        self._health = health.aio.HealthServicer()

    @property
    def address(self) -> str:
        return f"{self.settings.host}:{self.port}"

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
            ),
        )
        server = grpc.aio.server()
        match_pb2_grpc.add_MatchServiceServicer_to_server(
            MatchServicer(self.app, self.tokens), server
        )
        match_pb2_grpc.add_AuthServiceServicer_to_server(AuthServicer(self.tokens), server)
        health_pb2_grpc.add_HealthServicer_to_server(self._health, server)
        reflection.enable_server_reflection(
            (*SERVICE_NAMES, health.SERVICE_NAME, reflection.SERVICE_NAME), server
        )
        self.port = server.add_insecure_port(f"{s.host}:{s.port}")
        await server.start()
        self._server = server
        for name in ("", *SERVICE_NAMES):
            await self._health.set(name, health_pb2.HealthCheckResponse.SERVING)
        log.info("match_service_started", address=self.address, nats=s.nats_url, redis=s.redis_url)
        return self

    async def stop(self, grace: float | None = None) -> None:
        """Graceful: NOT_SERVING, finish calls within ``grace``, flush, close."""
        grace = self.settings.grace_s if grace is None else grace
        await self._health.enter_graceful_shutdown()
        if self._server is not None:
            await self._server.stop(grace)
            self._server = None
        if self.app is not None:
            try:
                await asyncio.wait_for(self.app.drain(), timeout=max(grace, 0.5))
            except TimeoutError:
                log.warning("cache_writes_dropped")
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

    async def wait(self) -> None:
        if self._server is not None:
            await self._server.wait_for_termination()
