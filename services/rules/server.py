"""Running the rules service: one process, or N worker processes on one port.

The engine is CPU-bound Python, so one process uses one core. ``--workers N``
starts N *spawned* processes (fresh interpreters: gRPC is only ever started in
the children, so nothing gRPC-related crosses a fork), each listening on the
same port with ``SO_REUSEPORT``; the kernel spreads connections over them. The
parent reserves the port (so ``port=0`` still means one free port for all),
waits until every worker is listening, prints the port, restarts a worker that
dies, and forwards SIGTERM/SIGINT so each worker drains gracefully.
"""

from __future__ import annotations

import contextlib
import glob
import multiprocessing
import os
import signal
import socket
import sys
import tempfile
import time
from collections.abc import Callable
from typing import Any

from services.common import eventloop, heap
from services.common.grpcserver import GrpcServer
from services.common.interceptor import RpcInterceptor
from services.common.logging import announce, bind, configure_logging, get_logger
from services.common.metrics import methods_of
from services.rules.settings import RulesSettings

_log = get_logger("rules")


def build_server(settings: RulesSettings, *, reuse_port: bool = False) -> GrpcServer:
    """A rules server, not started (tests start it on port 0)."""
    from services.rules import metrics
    from services.rules.servicer import SERVICE_NAME, RulesServicer
    from tabletop.rules.v1 import rules_pb2_grpc

    guard: tuple[Any, ...] = ()
    if settings.require_service_token:
        from services.common.auth import Tokens
        from services.common.guard import ServiceTokenInterceptor

        guard = (ServiceTokenInterceptor(Tokens(settings.auth), [SERVICE_NAME]),)
    server = GrpcServer(
        settings.server_config(reuse_port=reuse_port),
        interceptors=(RpcInterceptor(guards=guard, observers=[metrics.observe]),),
    )
    servicer = RulesServicer(settings, observers=[metrics.observe, metrics.observe_call])
    server.add_service(rules_pb2_grpc.add_RulesServiceServicer_to_server, servicer, SERVICE_NAME)
    metrics.register(methods_of([SERVICE_NAME]))
    return server


async def serve(
    settings: RulesSettings,
    *,
    reuse_port: bool = False,
    on_listening: Callable[[int], None] | None = None,
) -> None:
    """Run one server until SIGTERM/SIGINT, then stop gracefully."""
    server = build_server(settings, reuse_port=reuse_port)
    port = await server.start()
    heap.settle()
    if on_listening is not None:
        on_listening(port)
    await server.wait_for_shutdown()


# ----------------------------------------------------------------- workers
def _worker_main(settings: RulesSettings, index: int, ready: Any) -> None:
    """Entry point of a spawned worker process."""
    configure_logging(service="rules")
    bind(worker=index)
    eventloop.run(serve(settings, reuse_port=True, on_listening=ready.put))


def _reserve_port(host: str, port: int) -> socket.socket:
    """A bound (not listening) SO_REUSEPORT socket holding the port for the workers."""
    bare = host.strip("[]")
    family = socket.AF_INET6 if ":" in bare else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEPORT, 1)
    sock.bind((bare, port))
    return sock


def start_metrics(settings: RulesSettings, registry: Any = None) -> Any:
    """Serve ``/metrics`` if configured; the HTTP server (``.server_port``) or None."""
    if settings.metrics_port < 0:
        return None
    from prometheus_client import REGISTRY, start_http_server

    host = settings.host.strip("[]")
    addr = "0.0.0.0" if host in ("", "::", "0.0.0.0") else host
    server, _thread = start_http_server(
        settings.metrics_port, addr=addr, registry=REGISTRY if registry is None else registry
    )
    announce(
        "metrics_listening",
        f"rules metrics on port {server.server_port}",
        metrics_port=server.server_port,
    )
    return server


class _WorkerFiles:
    """The workers' metric files, summed, as prometheus_client's
    ``MultiProcessCollector`` does, but leaving out a file of 0 bytes: a
    worker creates its file and only then sizes it, and a scrape in between
    (a worker's first call of a method, or a worker killed right then) made
    the whole merge raise, so ``/metrics`` answered 500 (upstream
    prometheus/client_python#1199). Such a file holds nothing yet."""

    def __init__(self, registry: Any, path: str) -> None:
        self._path = path
        registry.register(self)

    def collect(self) -> Any:
        from prometheus_client.multiprocess import MultiProcessCollector

        files = []
        for f in glob.glob(os.path.join(self._path, "*.db")):
            with contextlib.suppress(FileNotFoundError):
                if os.path.getsize(f) > 0:
                    files.append(f)
        return MultiProcessCollector.merge(files, accumulate=True)


def run_workers(settings: RulesSettings, workers: int) -> int:
    """Supervise ``workers`` server processes on one port until signalled."""
    ctx = multiprocessing.get_context("spawn")
    metrics_dir = None
    metrics = None
    if settings.metrics_port >= 0:
        # Spawned workers inherit this and write their metrics to files there;
        # the parent serves their sum.
        metrics_dir = tempfile.TemporaryDirectory(prefix="rules-metrics-")
        os.environ["PROMETHEUS_MULTIPROC_DIR"] = metrics_dir.name
        from prometheus_client import CollectorRegistry

        registry = CollectorRegistry()
        _WorkerFiles(registry, path=metrics_dir.name)
        metrics = start_metrics(settings, registry)
    reservation = _reserve_port(settings.host, settings.port)
    port = reservation.getsockname()[1]
    worker_settings = settings.with_(port=port)
    ready = ctx.Queue()
    stopping = False

    def start(index: int) -> Any:
        p = ctx.Process(
            target=_worker_main, args=(worker_settings, index, ready), name=f"rules-worker-{index}"
        )
        p.start()
        return p

    def on_signal(signum: int, _frame: Any) -> None:
        nonlocal stopping
        stopping = True
        for p in procs:
            if p.is_alive() and p.pid is not None:
                with contextlib.suppress(ProcessLookupError):
                    os.kill(p.pid, signal.SIGTERM)

    procs = [start(i) for i in range(workers)]
    signal.signal(signal.SIGTERM, on_signal)
    signal.signal(signal.SIGINT, on_signal)
    started = 0
    while started < workers and not stopping:
        with contextlib.suppress(Exception):
            ready.get(timeout=0.2)
            started += 1
        if any(p.exitcode is not None for p in procs) and not stopping:
            _log.error("worker_failed_to_start")
            on_signal(signal.SIGTERM, None)
    reservation.close()
    if not stopping:
        announce(
            "listening",
            f"rules service listening on port {port} with {workers} workers",
            port=port,
            workers=workers,
        )
    not_before = [0.0] * workers  # at most one restart per second per worker
    while not stopping:
        time.sleep(0.2)
        for i, p in enumerate(procs):
            if p.exitcode is not None and not stopping and time.monotonic() >= not_before[i]:
                _log.error("worker_died", worker=i, exitcode=p.exitcode)
                procs[i] = start(i)
                not_before[i] = time.monotonic() + 1.0
    deadline = time.monotonic() + settings.drain_seconds + settings.grace_seconds + 5
    for p in procs:
        p.join(max(0.0, deadline - time.monotonic()))
        if p.is_alive():
            p.kill()
            p.join()
    if metrics is not None:
        metrics.shutdown()
    if metrics_dir is not None:
        metrics_dir.cleanup()
    _log.info("stopped", workers=workers)
    return 0


def run(settings: RulesSettings) -> int:
    """Run the service as configured (blocking)."""
    configure_logging(service="rules")
    workers = settings.effective_workers()
    if workers == 1:

        def listening(port: int) -> None:
            announce("listening", f"rules service listening on port {port}", port=port, workers=1)

        metrics = start_metrics(settings)
        try:
            eventloop.run(serve(settings, on_listening=listening))
        finally:
            if metrics is not None:
                metrics.shutdown()
        return 0
    return run_workers(settings, workers)


if __name__ == "__main__":  # pragma: no cover
    sys.exit(run(RulesSettings.from_env()))
