"""The match service's settings, read once from ``TABLETOP_*`` variables.

| variable                              | default                  |
|---------------------------------------|--------------------------|
| TABLETOP_MATCH_HOST                   | 127.0.0.1                |
| TABLETOP_MATCH_PORT                   | 0 (a free port)          |
| TABLETOP_MATCH_METRICS_PORT           | -1 (off; 0 = a free port)|
| TABLETOP_NATS_URL (comma-separated ok) | nats://127.0.0.1:4222    |
| TABLETOP_REDIS_URL                    | redis://127.0.0.1:6379/0 |
| TABLETOP_RULES_ADDR                   | "" (rules in process)    |
| TABLETOP_RULES_TIMEOUT_S              | 2.0                      |
| TABLETOP_RULES_STREAMS                | 2 (ApplyMoves streams; 0 = unary) |
| TABLETOP_MATCH_STREAM                 | MATCHES                  |
| TABLETOP_MATCH_STREAM_REPLICAS        | 1                        |
| TABLETOP_MATCH_DUPLICATE_WINDOW_S     | 120                      |
| TABLETOP_MATCH_STORE_TIMEOUT_S        | 5.0 (a JetStream call)   |
| TABLETOP_MATCH_RELAY_FINISHED         | 1 (relay MatchFinished)  |
| TABLETOP_MATCH_DECIDE_ATTEMPTS        | 5 (races lost in a row)  |
| TABLETOP_MATCH_HOT_CACHE              | 1024 matches             |
| TABLETOP_MATCH_CACHE_TTL_S            | 86400                    |
| TABLETOP_MATCH_CACHE_WRITE_INTERVAL_S | 0.1 (Redis written behind, coalesced) |
| TABLETOP_MATCH_PLAYERS_MAY_CREATE     | 1 (local development)    |
| TABLETOP_MATCH_GRACE_S                | 5                        |
| TABLETOP_MATCH_SESSION_MAX_SUBSCRIPTIONS | 64 (per PlaySession stream) |
| TABLETOP_MATCH_MAX_CONNECTION_AGE_S   | 0 (never)                |
| TABLETOP_MATCH_SCAN_S                 | 30 (active/stalled scan; 0 = off) |
| TABLETOP_MATCH_STALL_AFTER_S          | 600 (no commit for this long: stalled) |
| TABLETOP_MATCH_TIMERS                 | 1 (run the turn timers)  |
| TABLETOP_MATCH_TIMER_STREAM           | TIMERS                   |
| TABLETOP_MATCH_CLOCKS_BUCKET          | MATCH_CLOCKS             |
| TABLETOP_MATCH_TIMER_ACK_WAIT_S       | 10 (a fire's redelivery) |
| TABLETOP_MATCH_TIMER_RECONCILE_S      | 5                        |
| TABLETOP_MATCH_TIMER_GRACE_S          | 2 (overdue before fired) |
| TABLETOP_JWT_*                        | see services.common.auth |
| TABLETOP_LIMIT_*, TABLETOP_LIMITS_ENABLED | see services.common.ratelimit |
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from typing import Any

from services.common.auth import AuthSettings
from services.common.ratelimit import LimitSettings


def _flag(value: str) -> bool:
    return value.strip().lower() in ("1", "true", "yes", "on")


@dataclass(frozen=True, slots=True)
class MatchSettings:
    host: str = "127.0.0.1"
    port: int = 0
    metrics_port: int = -1
    nats_url: str = "nats://127.0.0.1:4222"
    redis_url: str = "redis://127.0.0.1:6379/0"
    rules_addr: str = ""
    rules_timeout_s: float = 2.0
    rules_streams: int = 2  # ApplyMoves streams to the rules service (0 = unary calls)
    stream: str = "MATCHES"
    stream_replicas: int = 1
    duplicate_window_s: float = 120.0
    store_timeout_s: float = 5.0
    relay_finished: bool = True  # follow the stream for finished matches (see relay.py)
    results_stream: str = "RESULTS"
    index_bucket: str = "MATCH_INDEX"
    decide_attempts: int = 5
    hot_cache: int = 1024
    cache_ttl_s: int = 86400
    cache_write_interval_s: float = 0.1
    players_may_create: bool = True
    grace_s: float = 5.0
    session_max_subscriptions: int = 64  # open subscriptions and creates per PlaySession
    max_connection_age_s: float = 0.0  # GOAWAY after this: clients re-resolve (0 = never)
    scan_s: float = 30.0
    stall_after_s: float = 600.0
    timers: bool = True
    timer_stream: str = "TIMERS"
    clocks_bucket: str = "MATCH_CLOCKS"
    timer_ack_wait_s: float = 10.0
    timer_reconcile_s: float = 5.0
    timer_grace_s: float = 2.0
    auth: AuthSettings = field(default_factory=AuthSettings)
    limits: LimitSettings = field(default_factory=LimitSettings)

    @classmethod
    def from_env(cls, env: Mapping[str, str] | None = None) -> MatchSettings:
        env = os.environ if env is None else env
        d = cls()

        def get(name: str, default: Any, cast: Any = str) -> Any:
            value = env.get(name)
            return default if value is None or value == "" else cast(value)

        return cls(
            host=get("TABLETOP_MATCH_HOST", d.host),
            port=get("TABLETOP_MATCH_PORT", d.port, int),
            metrics_port=get("TABLETOP_MATCH_METRICS_PORT", d.metrics_port, int),
            nats_url=get("TABLETOP_NATS_URL", d.nats_url),
            redis_url=get("TABLETOP_REDIS_URL", d.redis_url),
            rules_addr=get("TABLETOP_RULES_ADDR", d.rules_addr),
            rules_timeout_s=get("TABLETOP_RULES_TIMEOUT_S", d.rules_timeout_s, float),
            rules_streams=get("TABLETOP_RULES_STREAMS", d.rules_streams, int),
            stream=get("TABLETOP_MATCH_STREAM", d.stream),
            stream_replicas=get("TABLETOP_MATCH_STREAM_REPLICAS", d.stream_replicas, int),
            duplicate_window_s=get(
                "TABLETOP_MATCH_DUPLICATE_WINDOW_S", d.duplicate_window_s, float
            ),
            store_timeout_s=get("TABLETOP_MATCH_STORE_TIMEOUT_S", d.store_timeout_s, float),
            relay_finished=get("TABLETOP_MATCH_RELAY_FINISHED", d.relay_finished, _flag),
            decide_attempts=get("TABLETOP_MATCH_DECIDE_ATTEMPTS", d.decide_attempts, int),
            hot_cache=get("TABLETOP_MATCH_HOT_CACHE", d.hot_cache, int),
            cache_ttl_s=get("TABLETOP_MATCH_CACHE_TTL_S", d.cache_ttl_s, int),
            cache_write_interval_s=get(
                "TABLETOP_MATCH_CACHE_WRITE_INTERVAL_S", d.cache_write_interval_s, float
            ),
            players_may_create=get(
                "TABLETOP_MATCH_PLAYERS_MAY_CREATE", d.players_may_create, _flag
            ),
            grace_s=get("TABLETOP_MATCH_GRACE_S", d.grace_s, float),
            session_max_subscriptions=get(
                "TABLETOP_MATCH_SESSION_MAX_SUBSCRIPTIONS", d.session_max_subscriptions, int
            ),
            max_connection_age_s=get(
                "TABLETOP_MATCH_MAX_CONNECTION_AGE_S", d.max_connection_age_s, float
            ),
            scan_s=get("TABLETOP_MATCH_SCAN_S", d.scan_s, float),
            stall_after_s=get("TABLETOP_MATCH_STALL_AFTER_S", d.stall_after_s, float),
            timers=get("TABLETOP_MATCH_TIMERS", d.timers, _flag),
            timer_stream=get("TABLETOP_MATCH_TIMER_STREAM", d.timer_stream),
            clocks_bucket=get("TABLETOP_MATCH_CLOCKS_BUCKET", d.clocks_bucket),
            timer_ack_wait_s=get("TABLETOP_MATCH_TIMER_ACK_WAIT_S", d.timer_ack_wait_s, float),
            timer_reconcile_s=get("TABLETOP_MATCH_TIMER_RECONCILE_S", d.timer_reconcile_s, float),
            timer_grace_s=get("TABLETOP_MATCH_TIMER_GRACE_S", d.timer_grace_s, float),
            auth=AuthSettings.from_env(env),
            limits=LimitSettings.from_env(env),
        )

    def with_(self, **changes: Any) -> MatchSettings:
        return replace(self, **changes)
