"""Prometheus metrics of the rules service.

``tabletop_rules_rpc_seconds{method, game, code}`` (a histogram: count, rate and
latency of every RulesService call) and
``tabletop_rules_rejections_total{method, reason}`` (refused calls by reason
code). Fed by the server interceptor's observer, so metrics and the log line
always agree. A call of an ApplyMoves stream is observed as a call of
``ApplyMove`` here and in ``tabletop_rpc_seconds`` (``observe_call``), so the
ApplyMove series count every move whichever way it came; the stream itself
is one ``ApplyMoves`` observation when it ends (its latency: how long it
stayed open). With several workers the parent serves the sum of all workers
(prometheus_client multiprocess mode). The series exist from start-up
(``register``), and the shared ``tabletop_rpc_seconds`` of every service
(``services.common.metrics``) is served here too.
"""

from __future__ import annotations

from typing import Any

from prometheus_client import Counter, Histogram

from engine_core.registry import default_registry
from services.common.metrics import RPC_SECONDS as ALL_RPC_SECONDS

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


_CHILDREN: dict[tuple[str, Any, str], Any] = {}
"""Label children by (method, game as bound, code), resolved on first use:
a call costs a dict look-up, not a ``labels()`` call."""


def _child(method: str, game: Any, code: str) -> Any:
    if not method.startswith(_PREFIX):
        return None
    name = method[len(_PREFIX) :]
    # only registered ids become label values (bounded cardinality)
    label = game if isinstance(game, str) and game in default_registry() else ""
    return RPC_SECONDS.labels(name, label, code)


def observe(method: str, code: str, seconds: float, fields: dict[str, Any]) -> None:
    """An ``RpcInterceptor`` observer."""
    game = fields.get("game")
    key = (method, game if isinstance(game, str) else None, code)
    child = _CHILDREN.get(key, _MISSING)
    if child is _MISSING:
        child = _child(method, game, code)
        if len(_CHILDREN) < 10_000:  # unregistered game names are not kept
            _CHILDREN[key] = child
    if child is None:
        return
    child.observe(seconds)
    if code != "OK":
        name = method[len(_PREFIX) :]
        REJECTIONS.labels(name, str(fields.get("reason", code.lower()))).inc()


_MISSING = object()


_CALLS: dict[tuple[str, str], Any] = {}


def observe_call(method: str, code: str, seconds: float, fields: dict[str, Any]) -> None:
    """A call answered inside a stream, counted in ``tabletop_rpc_seconds`` as
    the server interceptor counts a unary call of ``method``."""
    child = _CALLS.get((method, code))
    if child is None:
        service, _, name = method.lstrip("/").rpartition("/")
        child = _CALLS[(method, code)] = ALL_RPC_SECONDS.labels(service, name, code)
    child.observe(seconds)
