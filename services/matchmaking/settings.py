"""Settings of the matchmaking service, read from the environment once."""

from __future__ import annotations

import dataclasses
import os
from dataclasses import dataclass
from typing import Any

from engine_core.bots import LEVELS
from services.common.auth import AuthSettings
from services.common.ratelimit import LimitSettings

_PREFIX = "TABLETOP_"
# Settings every service shares keep their plain names; the rest are
# TABLETOP_MATCHMAKING_<FIELD>.
_SHARED = {
    "redis_url": "TABLETOP_REDIS_URL",
    "nats_url": "TABLETOP_NATS_URL",
    "match_addr": "TABLETOP_MATCH_ADDR",
    "jwt_secret": "TABLETOP_JWT_SECRET",
}


def env_name(field: str) -> str:
    return _SHARED.get(field, f"{_PREFIX}MATCHMAKING_{field.upper()}")


@dataclass(frozen=True, slots=True)
class MatchmakingSettings:
    """Every knob of the matchmaker. ``from_env`` reads ``env_name(field)`` for
    each field (``TABLETOP_MATCHMAKING_<FIELD>``, or the shared ``TABLETOP_REDIS_URL``,
    ``TABLETOP_NATS_URL``, ``TABLETOP_MATCH_ADDR``, ``TABLETOP_JWT_SECRET``);
    tests build it with overrides."""

    redis_url: str = "redis://127.0.0.1:6379/0"
    nats_url: str = "nats://127.0.0.1:4222"
    match_addr: str = "127.0.0.1:50052"  # gRPC target of MatchService
    jwt_secret: str = ""
    grpc_host: str = "127.0.0.1"
    grpc_port: int = 0  # 0 = pick a free port
    metrics_port: int = -1  # 0 = pick a free port; -1 = no metrics endpoint
    grace_s: float = 5.0  # graceful stop on SIGTERM

    # Tickets.
    ticket_ttl_s: float = 300.0  # a ticket still searching after this expires
    result_ttl_s: float = 600.0  # an ended ticket stays readable this long
    watch_grace_s: float = 10.0  # a searching ticket without watcher is cancelled after this
    watch_update_s: float = 1.0  # interval of `searching` updates (and watcher heartbeats)
    max_party: int = 8
    party_token_ttl_s: float = 300.0  # a member's consent (JoinParty) is valid this long

    # Pairing.
    tick_s: float = 0.1  # pause between two pairing rounds
    window_base: float = 3.0  # rating window (in mu) of a fresh ticket
    window_growth: float = 1.0  # added per second waited
    window_max: float = 50.0
    bot_fill_after_s: float = 20.0  # tickets allowing bots get bot-filled after this
    bot_level: str = "greedy"  # bot seats are bot:<level>-<n>: random, greedy or search
    create_concurrency: int = 64  # CreateMatch calls in flight per matchmaker
    claim_timeout_s: float = 60.0  # a claimed ticket never finalised expires after this
    max_create_failures: int = 5  # a ticket whose matches are refused this often ends
    max_backoff_s: float = 5.0  # pause between rounds while the match service is down
    # The turn clock of the matches made for tickets that ask for none, in
    # the text form of ``services.match.clocks``: "none" (local play), "default"
    # (each game's own: what a deployment sets), "30s", "5m+3s timeouts=3
    # then=forfeit"...
    time_control: str = "none"

    # Ratings.
    ratings_durable: str = "matchmaking-ratings"
    results_stream: str = "RESULTS"
    results_replicas: int = 1  # if this service creates the stream first
    rated_marker_ttl_s: float = 30 * 86400.0

    # Roles of one process (all on by default).
    run_api: bool = True
    run_matchmaker: bool = True
    run_ratings: bool = True

    # How tokens are checked (TABLETOP_JWT_*, read once by from_env).
    auth_settings: AuthSettings | None = None
    # Per-caller limits (TABLETOP_LIMIT_*, services.common.ratelimit).
    limits: LimitSettings = dataclasses.field(default_factory=LimitSettings)

    def __post_init__(self) -> None:
        # the default level of every ticket: refused at start-up, whichever
        # role (the API records it on tickets, the matchmaker names bots)
        if self.bot_level not in LEVELS:
            raise ValueError(
                f"{env_name('bot_level')}={self.bot_level!r} is not a bot level "
                f"({', '.join(LEVELS)})"
            )

    @classmethod
    def from_env(
        cls, environ: dict[str, str] | None = None, **overrides: Any
    ) -> MatchmakingSettings:
        env = os.environ if environ is None else environ
        values: dict[str, Any] = {
            "auth_settings": AuthSettings.from_env(env),
            "limits": LimitSettings.from_env(env),
        }
        for f in dataclasses.fields(cls):
            if f.name in ("auth_settings", "limits"):
                continue
            raw = env.get(env_name(f.name))
            if raw is None:
                continue
            values[f.name] = _parse(f.type, raw, f.name)
        values.update(overrides)
        return cls(**values)

    def auth(self) -> AuthSettings:
        """How tokens are checked and signed: ``TABLETOP_JWT_*`` as every
        service reads them (``services.common.auth``), with ``jwt_secret``
        (when set) as the HS256 secret; the development secret, with a
        warning, when nothing is set."""
        base = self.auth_settings
        if base is None:
            return (
                AuthSettings(secret=self.jwt_secret)
                if self.jwt_secret
                else AuthSettings.from_env({})
            )
        return dataclasses.replace(base, secret=self.jwt_secret) if self.jwt_secret else base

    def window(self, waited_s: float) -> float:
        """The rating window of a ticket that has waited ``waited_s`` seconds."""
        return min(self.window_max, self.window_base + self.window_growth * max(0.0, waited_s))


def _parse(tp: Any, raw: str, name: str) -> Any:
    kind = tp if isinstance(tp, str) else getattr(tp, "__name__", str(tp))
    try:
        if kind == "bool":
            if raw.lower() in ("1", "true", "yes", "on"):
                return True
            if raw.lower() in ("0", "false", "no", "off", ""):
                return False
            raise ValueError(raw)
        if kind == "int":
            return int(raw)
        if kind == "float":
            return float(raw)
    except ValueError:
        raise ValueError(f"{env_name(name)}={raw!r} is not a valid {kind}") from None
    return raw
