"""Assembles and runs the match service: NATS, Redis, rules, gRPC.

``MatchServer(settings).start()`` connects to everything, makes sure the
streams exist, runs the turn timers (fire consumer and reconciler), and serves ``MatchService``, ``AuthService``, standard health
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

from engine_core.registry import default_registry
from services.common.auth import ServiceToken, Tokens
from services.common.grpcserver import GrpcServer, ServerConfig
from services.common.logging import get_logger
from services.common.natsurl import nats_servers
from services.common.ratelimit import (
    RateLimiter,
    RateLimitInterceptor,
    create_match_rate,
    match_rules,
    submit_move_rate,
)
from services.common.tasks import cancel_and_wait
from services.match.app import AppConfig, MatchApp
from services.match.cache import RedisProjectionCache
from services.match.index import MatchIndex
from services.match.observer import MatchObserver
from services.match.ports import InProcessRules, RulesClient
from services.match.relay import FinishedRelay
from services.match.servicer import AuthServicer, MatchServicer
from services.match.settings import MatchSettings
from services.match.store import JetStreamStore, StreamConfig, ensure_streams
from services.match.timers import TimerConfig, TimerSchedule
from tabletop.match.v1 import match_pb2, match_pb2_grpc

log = get_logger("match")

RULES_CALLER = "service:match"
"""The subject of the match service's token to the rules service."""

SERVICE_NAMES = (
    match_pb2.DESCRIPTOR.services_by_name["MatchService"].full_name,
    match_pb2.DESCRIPTOR.services_by_name["AuthService"].full_name,
)


def make_rules(settings: MatchSettings) -> RulesClient:
    """The rules client the settings ask for (in process when no address)."""
    if not settings.rules_addr:
        return InProcessRules()
    from services.match.rules_grpc import GrpcRules

    # A service token with every call, for a rules service that requires one
    # (TABLETOP_RULES_REQUIRE_SERVICE_TOKEN): whenever this replica can sign.
    token = None
    if settings.auth.can_sign:
        token = ServiceToken(Tokens(settings.auth), RULES_CALLER)
    else:
        log.info("rules_calls_without_token", hint="no key to sign a service token here")
    return GrpcRules(
        settings.rules_addr,
        timeout_s=settings.rules_timeout_s,
        token=token,
        streams=settings.rules_streams,
    )


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
        self._limiter: RateLimiter | None = None
        self._timers_stop = asyncio.Event()
        self._timers_task: asyncio.Task[None] | None = None
        self.relay: FinishedRelay | None = None
        self._relay_stop = asyncio.Event()
        self._relay_task: asyncio.Task[None] | None = None
        self.observer: MatchObserver | None = None

    @property
    def address(self) -> str:
        host = self.settings.host
        return f"{'127.0.0.1' if host in ('[::]', '0.0.0.0', '') else host}:{self.port}"

    async def start(self) -> MatchServer:
        s = self.settings
        if s.auth.uses_dev_secret:
            log.warning("dev_jwt_secret", hint="set TABLETOP_JWT_SECRET outside local development")
        self._nc = await nats.connect(
            nats_servers(s.nats_url),
            name="tabletop-match",
            max_reconnect_attempts=-1,
            reconnect_time_wait=0.2,
            connect_timeout=5,
        )
        js = self._nc.jetstream(timeout=s.store_timeout_s)
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
        timers = TimerSchedule(
            js,
            TimerConfig(
                stream=s.timer_stream,
                bucket=s.clocks_bucket,
                replicas=s.stream_replicas,
                ack_wait_s=s.timer_ack_wait_s,
                reconcile_s=s.timer_reconcile_s,
                grace_s=s.timer_grace_s,
            ),
        )
        await timers.open()
        store = JetStreamStore(js, config, timeout_s=s.store_timeout_s, nc=self._nc)
        self.app = MatchApp(
            rules=self.rules,
            store=store,
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
            timers=timers,
        )
        try:  # the watchers' one consumer, before the first match is created
            await self.app.feeds.start()
        except Exception as e:  # the first watcher tries again
            log.warning("feed_tap_not_started", error=repr(e))
        self._limiter = RateLimiter.connect(s.redis_url, s.limits)
        if s.relay_finished:
            self.relay = FinishedRelay(
                js,
                store,
                index,
                self.app.feeds,
                results_prefix=config.results_prefix,
                results_stream=s.results_stream,
                known=self.app.known_facts,
            )
            self._relay_task = asyncio.create_task(self.relay.run(self._relay_stop))
        server = GrpcServer(
            ServerConfig(
                host=s.host,
                port=s.port,
                grace_seconds=s.grace_s,
                max_connection_age_seconds=s.max_connection_age_s or None,
            ),
            guards=(RateLimitInterceptor(self._limiter, self.tokens, match_rules(s.limits)),),
        )
        server.add_service(
            match_pb2_grpc.add_MatchServiceServicer_to_server,
            MatchServicer(
                self.app,
                self.tokens,
                submit_move_rate(self._limiter).check,
                create_rate=create_match_rate(self._limiter).check,
                max_subscriptions=s.session_max_subscriptions,
            ),
            SERVICE_NAMES[0],
        )
        server.add_service(
            match_pb2_grpc.add_AuthServiceServicer_to_server,
            AuthServicer(self.tokens),
            SERVICE_NAMES[1],
        )
        self.port = await server.start()
        self.grpc = server
        self.observer = MatchObserver(
            index,
            self.app.store,
            stall_after_s=s.stall_after_s,
            scan_s=s.scan_s,
            games=default_registry().names(),
        )
        self.observer.start()
        if s.timers:
            self._timers_task = asyncio.create_task(self.app.run_timers(self._timers_stop))
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
        if self.observer is not None:
            await self.observer.stop()
        if self.grpc is not None:
            await self.grpc.stop(grace)
        if self._timers_task is not None:
            self._timers_stop.set()
            try:
                await asyncio.wait_for(asyncio.shield(self._timers_task), timeout=max(grace, 2.0))
            except (TimeoutError, Exception):
                await cancel_and_wait(self._timers_task)
            self._timers_task = None
        if self._metrics is not None:
            self._metrics.shutdown()
            self._metrics = None
        if self._relay_task is not None:
            # It writes its cursor and ends; what it had not settled is above
            # that cursor, for the next relay to start (a no-op if done).
            self._relay_stop.set()
            try:
                await asyncio.wait_for(asyncio.shield(self._relay_task), timeout=2.0)
            except (TimeoutError, Exception):
                await cancel_and_wait(self._relay_task)
            self._relay_task = None
        if self.app is not None:
            try:
                await asyncio.wait_for(self.app.drain(), timeout=max(grace, 0.5))
            except TimeoutError:
                log.warning("cache_writes_dropped")
            await self.app.cache_writes.close()
            await self.app.feeds.close()
        close = getattr(self.rules, "close", None)
        if close is not None:
            await close()
        if self._limiter is not None:
            await self._limiter.close()
            self._limiter = None
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
