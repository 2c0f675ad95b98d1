"""The gateway's settings, read once from ``TABLETOP_*`` variables.

| variable                          | default                       |
|-----------------------------------|-------------------------------|
| TABLETOP_GATEWAY_HOST             | 127.0.0.1                     |
| TABLETOP_GATEWAY_PORT             | 8080 (0 = a free port)        |
| TABLETOP_GATEWAY_METRICS_PORT     | -1 (off; 0 = a free port)     |
| TABLETOP_MATCH_ADDR               | 127.0.0.1:50052               |
| TABLETOP_MATCHMAKING_ADDR         | 127.0.0.1:50053               |
| TABLETOP_RULES_ADDR               | 127.0.0.1:50051               |
| TABLETOP_TOURNAMENTS_ADDR         | 127.0.0.1:50054               |
| TABLETOP_GATEWAY_CORS_ORIGINS     | "" (same origin only)         |
| TABLETOP_GATEWAY_TIMEOUT_S        | 10                            |
| TABLETOP_GATEWAY_MAX_BODY_BYTES   | 65536                         |
| TABLETOP_GATEWAY_MAX_SOCKET_SUBS  | 8 (streams per WebSocket)     |
| TABLETOP_GATEWAY_PING_S           | 20 (WebSocket pings)          |
| TABLETOP_GATEWAY_WEB_DIR          | web/ of the project           |
| TABLETOP_GATEWAY_TRUSTED_PROXIES  | 127.0.0.1 (addresses or CIDRs whose X-Forwarded-For is believed) |
| TABLETOP_JWT_*                    | see services.common.auth (verifying the WebSocket's token) |

A browser's address is the connection's, or, when the connection comes from
a trusted proxy, the last address in ``X-Forwarded-For`` that is not one
(uvicorn's ``forwarded_allow_ips``). Its guest logins are counted against it
(services.common.ratelimit): trust the ingress controller's addresses, never
``*``, with which a client could name any address it likes.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from services.common.auth import AuthSettings

WEB_DIR = Path(__file__).resolve().parents[2] / "web"


@dataclass(frozen=True, slots=True)
class GatewaySettings:
    host: str = "127.0.0.1"
    port: int = 8080
    metrics_port: int = -1
    match_addr: str = "127.0.0.1:50052"
    matchmaking_addr: str = "127.0.0.1:50053"
    rules_addr: str = "127.0.0.1:50051"
    tournaments_addr: str = "127.0.0.1:50054"
    cors_origins: tuple[str, ...] = ()
    timeout_s: float = 10.0
    max_body_bytes: int = 64 * 1024
    max_socket_subscriptions: int = 8
    ping_s: float = 20.0
    web_dir: str = str(WEB_DIR)
    trusted_proxies: tuple[str, ...] = ("127.0.0.1",)
    auth: AuthSettings = field(default_factory=AuthSettings)

    @classmethod
    def from_env(cls, env: Mapping[str, str] | None = None) -> GatewaySettings:
        env = os.environ if env is None else env
        d = cls()

        def get(name: str, default: Any, cast: Any = str) -> Any:
            value = env.get(name)
            return default if value is None or value == "" else cast(value)

        origins = get("TABLETOP_GATEWAY_CORS_ORIGINS", "")
        return cls(
            host=get("TABLETOP_GATEWAY_HOST", d.host),
            port=get("TABLETOP_GATEWAY_PORT", d.port, int),
            metrics_port=get("TABLETOP_GATEWAY_METRICS_PORT", d.metrics_port, int),
            match_addr=get("TABLETOP_MATCH_ADDR", d.match_addr),
            matchmaking_addr=get("TABLETOP_MATCHMAKING_ADDR", d.matchmaking_addr),
            rules_addr=get("TABLETOP_RULES_ADDR", d.rules_addr),
            tournaments_addr=get("TABLETOP_TOURNAMENTS_ADDR", d.tournaments_addr),
            cors_origins=tuple(o.strip() for o in origins.split(",") if o.strip()),
            timeout_s=get("TABLETOP_GATEWAY_TIMEOUT_S", d.timeout_s, float),
            max_body_bytes=get("TABLETOP_GATEWAY_MAX_BODY_BYTES", d.max_body_bytes, int),
            max_socket_subscriptions=get(
                "TABLETOP_GATEWAY_MAX_SOCKET_SUBS", d.max_socket_subscriptions, int
            ),
            ping_s=get("TABLETOP_GATEWAY_PING_S", d.ping_s, float),
            web_dir=get("TABLETOP_GATEWAY_WEB_DIR", d.web_dir),
            trusted_proxies=tuple(
                p.strip()
                for p in get("TABLETOP_GATEWAY_TRUSTED_PROXIES", ",".join(d.trusted_proxies)).split(
                    ","
                )
                if p.strip()
            ),
            auth=AuthSettings.from_env(env),
        )

    def with_(self, **changes: Any) -> GatewaySettings:
        return replace(self, **changes)
