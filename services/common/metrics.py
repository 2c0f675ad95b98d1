"""Per-RPC Prometheus metrics for every service.

``tabletop_rpc_seconds{service, method, code}`` is a histogram of every call's
latency by its final gRPC status (its ``_count`` is the call count by status:
rates, error ratios and latency quantiles of every RPC of every service, the
streams included: a stream's latency is how long it stayed open).
``tabletop_rpc_in_flight{service, method}`` counts the calls running now.

``RpcInterceptor`` (``services.common.interceptor``, every server's
interceptor) keeps them: it measures the whole call, around its error
mapping, so a call is counted by the status the mapping chose (health and
reflection are not counted). The label children of a method are resolved
once per method and status (``_Method``; ``RpcInterceptor.prepare`` creates
them for every method of the services at start-up, so ``/metrics`` lists
every RPC before its first call); a call costs two clock reads, one dict
look-up and the observation.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from google.protobuf import descriptor_pool
from prometheus_client import Gauge, Histogram

__all__ = ["IN_FLIGHT", "RPC_SECONDS", "methods_of"]

RPC_SECONDS = Histogram(
    "tabletop_rpc_seconds",
    "gRPC calls handled, by service, method and final status code",
    ["service", "method", "code"],
    buckets=(0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 10, 60),
)
IN_FLIGHT = Gauge(
    "tabletop_rpc_in_flight",
    "gRPC calls running now, by service and method",
    ["service", "method"],
    multiprocess_mode="livesum",
)

_SKIPPED = ("/grpc.health.v1.", "/grpc.reflection.")


def methods_of(service_names: Iterable[str]) -> list[str]:
    """``/package.Service/Method`` of every method of the named services
    (those whose descriptors are loaded; others are skipped)."""
    pool = descriptor_pool.Default()
    out: list[str] = []
    for name in service_names:
        try:
            service = pool.FindServiceByName(name)
        except KeyError:
            continue
        out += [f"/{service.full_name}/{m.name}" for m in service.methods]
    return out


class _Method:
    """The label children of one method, resolved once (none for health and
    reflection: ``skip``)."""

    __slots__ = ("by_code", "in_flight", "method", "service", "skip")

    def __init__(self, full: str) -> None:
        service, _, method = full.lstrip("/").rpartition("/")
        self.service = service
        self.method = method
        self.skip = full.startswith(_SKIPPED)
        self.by_code: dict[str, Any] = {}
        self.in_flight: Any = None
        if not self.skip:
            self.by_code["OK"] = RPC_SECONDS.labels(service, method, "OK")
            self.in_flight = IN_FLIGHT.labels(service, method)

    def observe(self, code: str, seconds: float) -> None:
        child = self.by_code.get(code)
        if child is None:
            child = self.by_code[code] = RPC_SECONDS.labels(self.service, self.method, code)
        child.observe(seconds)
