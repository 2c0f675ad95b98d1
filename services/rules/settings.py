"""Settings of the rules service, read from the environment once at start-up."""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass, field, fields, replace
from typing import Any

from services.common.auth import AuthSettings
from services.common.grpcserver import ServerConfig

PREFIX = "TABLETOP_RULES_"


def _flag(raw: str) -> bool:
    value = raw.strip().lower()
    if value in ("1", "true", "yes", "on"):
        return True
    if value in ("0", "false", "no", "off"):
        return False
    raise ValueError(raw)


@dataclass(frozen=True)
class RulesSettings:
    """Every knob of the rules service; ``TABLETOP_RULES_<FIELD>`` in the environment.

    ``port=0`` picks a free port; ``workers=0`` means one process per CPU core.
    """

    host: str = "[::]"
    port: int = 50051
    workers: int = 0
    max_message_bytes: int = 4 * 1024 * 1024
    max_json_bytes: int = 64 * 1024
    """Largest move or options JSON accepted (INVALID_ARGUMENT json_too_large beyond)."""
    max_entropy_bytes: int = 1024
    grace_seconds: float = 5.0
    drain_seconds: float = 0.0
    metrics_port: int = -1
    """Prometheus ``/metrics`` HTTP port: -1 off, 0 a free port."""
    max_connection_age_seconds: float = 0.0
    """Close client connections after about this long (0 = never), so clients
    re-resolve and new replicas get calls (see docs/deploy.md)."""
    max_connection_age_grace_seconds: float = 30.0
    require_service_token: bool = False
    """Refuse every RulesService call without a service token (``role:
    "service"``, checked like every token: ``TABLETOP_JWT_*``, docs/auth.md).
    Off by default: the rules service holds no state and no secret, and in a
    cluster a network policy admits only the match service (docs/deploy.md)."""
    auth: AuthSettings = field(default_factory=AuthSettings)
    """How tokens are checked (``TABLETOP_JWT_*``), when they are."""

    @classmethod
    def from_env(cls, env: Mapping[str, str] | None = None, **overrides: Any) -> RulesSettings:
        env = os.environ if env is None else env
        values: dict[str, Any] = {}
        for f in fields(cls):
            raw = env.get(PREFIX + f.name.upper())
            if f.name == "auth":
                continue
            if raw is not None and raw != "":
                kind = type(f.default)
                try:
                    values[f.name] = _flag(raw) if kind is bool else kind(raw)
                except ValueError:
                    raise ValueError(
                        f"{PREFIX}{f.name.upper()}={raw!r} is not a {kind.__name__}"
                    ) from None
        if values.get("require_service_token") or overrides.get("require_service_token"):
            values["auth"] = AuthSettings.from_env(env)
        values.update(overrides)
        return cls(**values)

    def with_(self, **changes: Any) -> RulesSettings:
        return replace(self, **changes)

    def effective_workers(self) -> int:
        """``workers``, or the CPU cores this process may run on (its affinity,
        which is narrower than ``os.cpu_count()`` under taskset or cpusets)."""
        if self.workers > 0:
            return self.workers
        try:
            return len(os.sched_getaffinity(0)) or 1
        except AttributeError:  # not Linux
            return os.cpu_count() or 1

    def server_config(self, *, reuse_port: bool = False) -> ServerConfig:
        return ServerConfig(
            host=self.host,
            port=self.port,
            max_message_bytes=self.max_message_bytes,
            grace_seconds=self.grace_seconds,
            drain_seconds=self.drain_seconds,
            max_connection_age_seconds=self.max_connection_age_seconds or None,
            max_connection_age_grace_seconds=self.max_connection_age_grace_seconds,
            reuse_port=reuse_port,
        )
