"""The tournament service's settings, read once from ``TABLETOP_*`` variables.

| variable                                | default                  |
|-----------------------------------------|--------------------------|
| TABLETOP_TOURNAMENTS_HOST               | 127.0.0.1                |
| TABLETOP_TOURNAMENTS_PORT               | 0 (a free port)          |
| TABLETOP_TOURNAMENTS_METRICS_PORT       | -1 (off; 0 = a free port)|
| TABLETOP_NATS_URL                       | nats://127.0.0.1:4222    |
| TABLETOP_REDIS_URL                      | redis://127.0.0.1:6379/0 |
| TABLETOP_MATCH_ADDR                     | 127.0.0.1:50052          |
| TABLETOP_MATCHMAKING_ADDR               | 127.0.0.1:50053 (score races that queue; empty: none) |
| TABLETOP_TOURNAMENTS_STREAM             | TOURNAMENTS              |
| TABLETOP_TOURNAMENTS_STREAM_REPLICAS    | 1                        |
| TABLETOP_TOURNAMENTS_RESULTS_STREAM     | RESULTS                  |
| TABLETOP_TOURNAMENTS_DURABLE            | tournaments              |
| TABLETOP_TOURNAMENTS_SWEEP_S            | 1.0                      |
| TABLETOP_TOURNAMENTS_RECONCILE_S        | 10.0                     |
| TABLETOP_TOURNAMENTS_PLAYERS_MAY_CREATE | 1 (local development)    |
| TABLETOP_TOURNAMENTS_GRACE_S            | 5                        |
| TABLETOP_JWT_*                          | see services.common.auth |
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from typing import Any

from services.common.auth import AuthSettings


def _flag(value: str) -> bool:
    return value.strip().lower() in ("1", "true", "yes", "on")


@dataclass(frozen=True, slots=True)
class TournamentSettings:
    host: str = "127.0.0.1"
    port: int = 0
    metrics_port: int = -1
    nats_url: str = "nats://127.0.0.1:4222"
    redis_url: str = "redis://127.0.0.1:6379/0"
    match_addr: str = "127.0.0.1:50052"
    matchmaking_addr: str = "127.0.0.1:50053"
    stream: str = "TOURNAMENTS"
    stream_replicas: int = 1
    results_stream: str = "RESULTS"
    durable: str = "tournaments"
    sweep_s: float = 1.0
    reconcile_s: float = 10.0
    players_may_create: bool = True
    grace_s: float = 5.0
    auth: AuthSettings = field(default_factory=AuthSettings)

    @classmethod
    def from_env(cls, env: Mapping[str, str] | None = None) -> TournamentSettings:
        env = os.environ if env is None else env
        d = cls()

        def get(name: str, default: Any, cast: Any = str) -> Any:
            value = env.get(name)
            if value is None or value == "":
                return default
            try:
                return cast(value)
            except ValueError:
                raise ValueError(f"{name}={value!r} is not a valid {cast.__name__}") from None

        p = "TABLETOP_TOURNAMENTS_"
        return cls(
            host=get(p + "HOST", d.host),
            port=get(p + "PORT", d.port, int),
            metrics_port=get(p + "METRICS_PORT", d.metrics_port, int),
            nats_url=get("TABLETOP_NATS_URL", d.nats_url),
            redis_url=get("TABLETOP_REDIS_URL", d.redis_url),
            match_addr=get("TABLETOP_MATCH_ADDR", d.match_addr),
            matchmaking_addr=env.get("TABLETOP_MATCHMAKING_ADDR", d.matchmaking_addr),
            stream=get(p + "STREAM", d.stream),
            stream_replicas=get(p + "STREAM_REPLICAS", d.stream_replicas, int),
            results_stream=get(p + "RESULTS_STREAM", d.results_stream),
            durable=get(p + "DURABLE", d.durable),
            sweep_s=get(p + "SWEEP_S", d.sweep_s, float),
            reconcile_s=get(p + "RECONCILE_S", d.reconcile_s, float),
            players_may_create=get(p + "PLAYERS_MAY_CREATE", d.players_may_create, _flag),
            grace_s=get(p + "GRACE_S", d.grace_s, float),
            auth=AuthSettings.from_env(env),
        )

    def with_(self, **changes: Any) -> TournamentSettings:
        return replace(self, **changes)
