"""Prometheus metrics of the rules service.

``tabletop_rules_rpc_seconds{method, game, code}`` (a histogram: count, rate and
latency of every RulesService call) and
``tabletop_rules_rejections_total{method, reason}`` (refused calls by reason
code). Fed by the logging interceptor's observer, so metrics and the log line
always agree. With several workers the parent serves the sum of all workers
(prometheus_client multiprocess mode). The series exist from start-up
(``register``), and the shared ``tabletop_rpc_seconds`` of every service
(``services.common.metrics``) is served here too.
"""

from __future__ import annotations

from typing import Any

from prometheus_client import Counter, Histogram

from engine_core.registry import default_registry

_PREFIX = "/tabletop.rules.v1.RulesService/"

RPC_SECONDS = Histogram(
    "tabletop_rules_rpc_seconds",
    "RulesService calls by method, game and status code",
    ["method", "game", "code"],
    buckets=(0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.5, 2.5),
)
REJECTIONS = Counter(
    "tabletop_rules_rejections_total",
    "RulesService calls refused, by method and reason code",
    ["method", "reason"],
)


def register(methods: list[str]) -> None:
    """Create the series of every method now (zero calls), so ``/metrics``
    lists them from start-up instead of after the first call."""
    for full in methods:
        if full.startswith(_PREFIX):
            RPC_SECONDS.labels(full[len(_PREFIX) :], "", "OK")


def observe(method: str, code: str, seconds: float, fields: dict[str, Any]) -> None:
    """A ``LoggingInterceptor`` observer."""
    if not method.startswith(_PREFIX):
        return
    name = method[len(_PREFIX) :]
    game = fields.get("game")
    # only registered ids become label values (bounded cardinality)
    label = game if isinstance(game, str) and game in default_registry() else ""
    RPC_SECONDS.labels(name, label, code).observe(seconds)
    if code != "OK":
        REJECTIONS.labels(name, str(fields.get("reason", code.lower()))).inc()
