"""Settings of the bot worker, read from the environment once."""

from __future__ import annotations

import dataclasses
import os
import socket
from dataclasses import dataclass
from typing import Any

from engine_core.bots import LEVELS
from services.common.auth import AuthSettings

_SHARED = {
    "redis_url": "TABLETOP_REDIS_URL",
    "match_addr": "TABLETOP_MATCH_ADDR",
    "jwt_secret": "TABLETOP_JWT_SECRET",
}


def env_name(field: str) -> str:
    return _SHARED.get(field, f"TABLETOP_BOTS_{field.upper()}")


@dataclass(frozen=True, slots=True)
class BotSettings:
    """``from_env`` reads ``env_name(field)`` for each field
    (``TABLETOP_BOTS_<FIELD>``, or the shared ``TABLETOP_REDIS_URL``,
    ``TABLETOP_MATCH_ADDR``, ``TABLETOP_JWT_SECRET``)."""

    redis_url: str = "redis://127.0.0.1:6379/0"
    match_addr: str = "127.0.0.1:50052"
    jwt_secret: str = ""
    grpc_host: str = "127.0.0.1"  # health checking only
    grpc_port: int = 0
    metrics_port: int = -1  # 0 = a free port; -1 = none
    grace_s: float = 5.0
    kind: str = "greedy"  # level of bot ids that name none: random, greedy or search
    search_time_s: float = 0.5  # time budget of one search decision
    search_iterations: int = 5000  # iteration cap of one search decision
    search_threads: int = 2  # executor threads for search decisions (off the event loop)
    consumer: str = dataclasses.field(
        default_factory=lambda: f"{socket.gethostname()}-{os.getpid()}"
    )
    max_matches: int = 256  # matches played at once by this worker
    claim_idle_s: float = 60.0  # a job not touched this long (worker gone) is taken over
    move_delay_s: float = 0.0  # think time before each move
    rpc_timeout_s: float = 10.0
    auth_settings: AuthSettings | None = None  # TABLETOP_JWT_*, read once by from_env

    def __post_init__(self) -> None:
        if self.kind not in LEVELS:
            raise ValueError(
                f"{env_name('kind')}={self.kind!r} is not a bot level ({', '.join(LEVELS)})"
            )
        if self.search_time_s <= 0 or self.search_iterations < 1 or self.search_threads < 1:
            raise ValueError("the search budget and threads must be positive")

    def auth(self) -> AuthSettings:
        """How bot tokens are signed: ``TABLETOP_JWT_*`` as every service reads
        them, with ``jwt_secret`` (when set) as the HS256 secret; the
        development secret, with a warning, when nothing is set."""
        base = self.auth_settings
        if base is None:
            return (
                AuthSettings(secret=self.jwt_secret)
                if self.jwt_secret
                else AuthSettings.from_env({})
            )
        return dataclasses.replace(base, secret=self.jwt_secret) if self.jwt_secret else base

    @classmethod
    def from_env(cls, environ: dict[str, str] | None = None, **overrides: Any) -> BotSettings:
        env = os.environ if environ is None else environ
        values: dict[str, Any] = {"auth_settings": AuthSettings.from_env(env)}
        for f in dataclasses.fields(cls):
            raw = env.get(env_name(f.name))
            if raw is None or f.name == "auth_settings":
                continue
            kind = f.type if isinstance(f.type, str) else f.type.__name__
            try:
                values[f.name] = (
                    int(raw) if kind == "int" else float(raw) if kind == "float" else raw
                )
            except ValueError:
                raise ValueError(f"{env_name(f.name)}={raw!r} is not a valid {kind}") from None
        values.update(overrides)
        return cls(**values)
