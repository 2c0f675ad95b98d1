"""The manifests configure what the services actually read.

Each service's settings object is built from the environment its container
gets in the rendered manifests (``Settings.from_env``), and the result is
checked against the pod: it listens on the port the probes and Services use,
on all interfaces, with the metrics port declared, with a shutdown that fits
the termination grace period; and every ``TABLETOP_*`` variable a manifest
sets is one that the code reads (a typo would be silently ignored otherwise).
"""

from __future__ import annotations

import importlib
import math
import re
from typing import Any

import pytest

from tests.deploy.manifests import OVERLAYS, ROOT, containers, env_of, one, render
from tests.deploy.quantities import parse_quantity

SERVICES = ("rules", "match", "matchmaking", "bots", "tournaments")
overlay = pytest.mark.parametrize("overlay", OVERLAYS)
service = pytest.mark.parametrize("name", SERVICES)


def _settings_class(name: str) -> type:
    try:
        module = importlib.import_module(f"services.{name}.settings")
    except ModuleNotFoundError:
        pytest.skip(f"services.{name}.settings is not in this tree yet")
    classes = [
        v
        for v in vars(module).values()
        if isinstance(v, type) and v.__module__ == module.__name__ and hasattr(v, "from_env")
    ]
    assert len(classes) == 1, classes
    return classes[0]


class _RecordingEnv(dict):  # type: ignore[type-arg]
    """An environment that remembers which names were looked up."""

    def __init__(self, values: dict[str, str]) -> None:
        super().__init__(values)
        self.asked: set[str] = set()

    def get(self, key: Any, default: Any = None) -> Any:
        self.asked.add(key)
        return super().get(key, default)

    def __getitem__(self, key: Any) -> Any:
        self.asked.add(key)
        return super().__getitem__(key)

    def __contains__(self, key: object) -> bool:
        self.asked.add(str(key))
        return super().__contains__(key)


def _logging_variables() -> set[str]:
    """What the one logging module (used by every service) reads."""
    text = (ROOT / "services" / "common" / "logging.py").read_text()
    return set(re.findall(r"\bTABLETOP_[A-Z0-9_]*[A-Z0-9]\b", text))


def known_variables(name: str, env: dict[str, str] | None = None) -> set[str]:
    """Every ``TABLETOP_*`` name the service reads at start-up: the names its
    settings object looks up (recorded while it is built from ``env``) and
    those of the shared logging module."""
    recording = _RecordingEnv(env or {})
    _settings_class(name).from_env(recording)
    return {k for k in recording.asked if k.startswith("TABLETOP_")} | _logging_variables()


def _pod_env(overlay: str, name: str) -> tuple[Any, dict[str, str]]:
    objs = render(overlay)
    c = next(c for c in containers(objs) if c.workload["metadata"]["name"] == name)
    env = env_of(c, objs)
    # Secrets are not in the manifests (prod) or hashed away; any value will do.
    for k, v in env.items():
        if v.startswith("<from "):
            env[k] = "a-secret-from-the-cluster-0123456789abcdef"
    return c, env


def _first(obj: Any, *names: str) -> Any:
    for n in names:
        if hasattr(obj, n):
            return getattr(obj, n)
    raise AssertionError(f"{type(obj).__name__} has none of {names}")


def _port(c: Any, name: str) -> int | None:
    return next((p["containerPort"] for p in c.spec.get("ports", []) if p["name"] == name), None)


@overlay
@service
def test_every_variable_set_for_a_service_is_read_by_it(overlay: str, name: str) -> None:
    c, env = _pod_env(overlay, name)
    known = known_variables(name, env)
    own = {e["name"] for e in c.spec.get("env", []) if e["name"].startswith("TABLETOP_")}
    assert own <= known, f"{name} does not read {sorted(own - known)}"


@overlay
def test_every_shared_setting_is_read_by_someone(overlay: str) -> None:
    objs = render(overlay)
    c = next(c for c in containers(objs) if c.workload["metadata"]["name"] == "match")
    shared = one(objs, "ConfigMap", c.spec["envFrom"][0]["configMapRef"]["name"])["data"]
    missing = [n for n in ("match", "matchmaking") if not (ROOT / "services" / n).is_dir()]
    if missing:
        pytest.skip(f"the NATS and Redis clients {missing} are not in this tree yet")
    known: set[str] = set()
    for name in SERVICES:
        if (ROOT / "services" / name / "settings.py").exists():
            known |= known_variables(name, _pod_env(overlay, name)[1])
    assert set(shared) <= known, sorted(set(shared) - known)


# Every service runs a gRPC server (the bot worker for health checking only).
grpc_service = service


@overlay
@grpc_service
def test_the_service_listens_where_the_pod_says(overlay: str, name: str) -> None:
    cls = _settings_class(name)
    c, env = _pod_env(overlay, name)
    settings = cls.from_env(env)
    assert _first(settings, "host", "grpc_host") in ("0.0.0.0", "[::]")
    assert _first(settings, "port", "grpc_port") == _port(c, "grpc")
    metrics = _port(c, "metrics")
    if hasattr(settings, "metrics_port"):
        assert settings.metrics_port == metrics, "metrics port and containerPort differ"
    else:
        assert metrics is None, f"{name} serves no metrics but the pod declares a port"


@overlay
@grpc_service
def test_shutdown_fits_the_termination_grace_period(overlay: str, name: str) -> None:
    cls = _settings_class(name)
    c, env = _pod_env(overlay, name)
    settings = cls.from_env(env)
    grace = _first(settings, "grace_seconds", "grace_s")
    drain = getattr(settings, "drain_seconds", 0.0)
    pause = c.spec.get("lifecycle", {}).get("preStop", {}).get("sleep", {}).get("seconds", 0)
    budget = c.pod["terminationGracePeriodSeconds"]
    # A few seconds left for closing connections after the server stopped.
    assert pause + drain + grace + 5 <= budget, (pause, drain, grace, budget)


@overlay
def test_rules_connections_age_so_new_pods_get_calls(overlay: str) -> None:
    cls = _settings_class("rules")
    _, env = _pod_env(overlay, "rules")
    config = cls.from_env(env).server_config()
    assert config.max_connection_age_seconds is not None
    assert 10 <= config.max_connection_age_seconds <= 600
    assert config.max_connection_age_grace_seconds <= config.grace_seconds


@overlay
def test_rules_workers_match_the_cpu_limit(overlay: str) -> None:
    cls = _settings_class("rules")
    c, env = _pod_env(overlay, "rules")
    workers = cls.from_env(env).workers
    cpu = parse_quantity(c.spec["resources"]["limits"]["cpu"])
    # 0 would mean "one per core of the node", not of the pod's limit.
    assert 1 <= workers <= math.ceil(cpu)


@overlay
def test_match_service_settings(overlay: str) -> None:
    cls = _settings_class("match")
    _, env = _pod_env(overlay, "match")
    s = cls.from_env(env)
    assert s.nats_url == env["TABLETOP_NATS_URL"]
    assert s.redis_url == env["TABLETOP_REDIS_URL"] == "redis://redis-cache:6379/0"
    assert s.rules_addr.startswith("dns:///"), "in-process rules would not scale out"
    assert s.stream_replicas == (3 if overlay == "prod" else 1)
    assert s.players_may_create is (overlay == "dev")
    # Aged connections: callers re-resolve and new match pods get calls.
    assert 60 <= s.max_connection_age_s <= 900
    assert not s.auth.uses_dev_secret


@overlay
def test_matchmaking_settings(overlay: str) -> None:
    cls = _settings_class("matchmaking")
    _, env = _pod_env(overlay, "matchmaking")
    s = cls.from_env(env)
    assert s.match_addr.startswith("dns:///")
    assert s.redis_url == env["TABLETOP_REDIS_URL"] == "redis://redis-state:6379/0"
    assert s.nats_url == env["TABLETOP_NATS_URL"]
    assert s.jwt_secret
    # Whichever service creates the RESULTS stream, it gets the same replicas.
    match = _settings_class("match").from_env(_pod_env(overlay, "match")[1])
    assert s.results_replicas == match.stream_replicas


@overlay
def test_bot_worker_settings(overlay: str) -> None:
    cls = _settings_class("bots")
    _, env = _pod_env(overlay, "bots")
    s = cls.from_env(env)
    assert s.match_addr.startswith("dns:///")
    assert s.redis_url == env["TABLETOP_REDIS_URL"] == "redis://redis-state:6379/0"
    assert s.jwt_secret


@overlay
def test_readiness_asks_for_the_name_each_server_registers(overlay: str) -> None:
    from services.match.server import SERVICE_NAMES as MATCH
    from services.matchmaking.service import SERVICE_NAME as MATCHMAKING
    from services.rules.servicer import SERVICE_NAME as RULES

    registered = {"rules": RULES, "match": MATCH[0], "matchmaking": MATCHMAKING}
    for name, service_name in registered.items():
        c, _ = _pod_env(overlay, name)
        assert c.spec["readinessProbe"]["grpc"]["service"] == service_name, name
