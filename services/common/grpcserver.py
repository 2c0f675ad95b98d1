"""One way to run a grpc.aio server, for every service.

::

    server = GrpcServer(ServerConfig(port=0))
    server.add_service(
        rules_pb2_grpc.add_RulesServiceServicer_to_server, RulesServicer(), RULES_SERVICE_NAME
    )
    port = await server.start()          # the bound port (0 = a free one)
    await server.wait_for_shutdown()     # until SIGTERM/SIGINT or stop()

Every server gets standard health checking (``grpc.health.v1.Health``: ``""``
and each added service SERVING once started), server reflection, message size
limits, and the interceptors (by default one ``RpcInterceptor``: latency and
status of every RPC in Prometheus, one log line per RPC, exceptions to rich
statuses, the guards such as rate limits, every request field bounded, all in
one wrapper per method).

Shutdown (SIGTERM, SIGINT or ``stop()``): health goes NOT_SERVING for every
service first, then after ``drain_seconds`` (time for load balancers to notice)
``server.stop(grace_seconds)``: calls in flight may finish, new ones are refused.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import signal
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import grpc
from grpc_health.v1 import health_pb2, health_pb2_grpc
from grpc_health.v1._async import HealthServicer
from grpc_reflection.v1alpha import reflection

from services.common.interceptor import Guard, RpcInterceptor
from services.common.logging import get_logger
from services.common.metrics import methods_of

__all__ = [
    "ROUND_ROBIN",
    "GrpcServer",
    "ServerConfig",
    "balanced_channel_options",
    "channel_options",
    "server_options",
]

HEALTH_SERVICE_NAME = health_pb2.DESCRIPTOR.services_by_name["Health"].full_name
_log = get_logger("grpcserver")


@dataclass(frozen=True)
class ServerConfig:
    """How to listen. ``port=0`` picks a free port (read ``GrpcServer.port``)."""

    host: str = "[::]"
    port: int = 0
    max_message_bytes: int = 4 * 1024 * 1024
    grace_seconds: float = 5.0
    drain_seconds: float = 0.0
    reuse_port: bool = False
    """Allow several processes to listen on one port (``SO_REUSEPORT``)."""
    max_concurrent_rpcs: int | None = None
    max_connection_age_seconds: float | None = None
    """Send each client connection a GOAWAY after about this long (gRPC adds
    +-10% jitter): clients reconnect and re-resolve, so with client-side round
    robin new replicas get their share. ``None`` keeps connections forever."""
    max_connection_age_grace_seconds: float = 30.0
    """How long calls in flight on an aged connection may still run."""


def server_options(config: ServerConfig) -> list[tuple[str, Any]]:
    """The grpc core options a ``ServerConfig`` asks for."""
    options: list[tuple[str, Any]] = [
        *channel_options(config.max_message_bytes),
        ("grpc.so_reuseport", 1 if config.reuse_port else 0),
    ]
    if config.max_connection_age_seconds is not None:
        options += [
            ("grpc.max_connection_age_ms", int(config.max_connection_age_seconds * 1000)),
            (
                "grpc.max_connection_age_grace_ms",
                int(config.max_connection_age_grace_seconds * 1000),
            ),
        ]
    return options


def channel_options(max_message_bytes: int = 4 * 1024 * 1024) -> list[tuple[str, Any]]:
    """Message size limits for a client channel, matching a server's."""
    return [
        ("grpc.max_send_message_length", max_message_bytes),
        ("grpc.max_receive_message_length", max_message_bytes),
    ]


ROUND_ROBIN = json.dumps({"loadBalancingConfig": [{"round_robin": {}}]})
"""Service config that spreads calls over every address the target resolves to."""


def balanced_channel_options(max_message_bytes: int = 4 * 1024 * 1024) -> list[tuple[str, Any]]:
    """Options for a channel to a replicated service: ``round_robin`` over every
    address of the target (``dns:///match.tabletop.svc:50051`` resolves to every
    pod of a headless Service), instead of gRPC's default of one connection to
    the first address; and the message size limits."""
    return [*channel_options(max_message_bytes), ("grpc.service_config", ROUND_ROBIN)]


Register = Callable[[Any, grpc.aio.Server], None]


class GrpcServer:
    """A grpc.aio server with health, reflection, limits, interceptors and
    graceful shutdown. Create, ``add_service``, ``start``; then ``stop`` or
    ``wait_for_shutdown``."""

    def __init__(
        self,
        config: ServerConfig = ServerConfig(),
        *,
        interceptors: Sequence[grpc.aio.ServerInterceptor] | None = None,
        guards: Sequence[Guard] = (),
    ) -> None:
        """``guards`` (rate limits, token checks) run in the default
        ``RpcInterceptor`` after the error mapping is set up and before the
        bounds are checked. ``interceptors`` replaces that default (the metric
        series of an ``RpcInterceptor`` among them are created at start)."""
        self.config = config
        if interceptors is None:
            interceptors = (RpcInterceptor(guards=guards),)
        self._interceptors = tuple(interceptors)
        self.server = grpc.aio.server(
            interceptors=list(interceptors),
            options=server_options(config),
            maximum_concurrent_rpcs=config.max_concurrent_rpcs,
        )
        self.health = HealthServicer()
        health_pb2_grpc.add_HealthServicer_to_server(self.health, self.server)
        self._services: list[str] = []
        self._port: int | None = None
        self._stopping: asyncio.Task[None] | None = None
        self._stopped = asyncio.Event()

    def add_service(self, register: Register, servicer: Any, name: str) -> None:
        """Add a servicer (``register`` is the generated ``add_XServicer_to_server``,
        ``name`` the full service name, e.g. ``tabletop.rules.v1.RulesService``)."""
        if self._port is not None:
            raise RuntimeError("add services before start()")
        register(servicer, self.server)
        self._services.append(name)

    @property
    def services(self) -> tuple[str, ...]:
        return tuple(self._services)

    @property
    def port(self) -> int:
        if self._port is None:
            raise RuntimeError("the server is not started")
        return self._port

    @property
    def address(self) -> str:
        """``host:port`` a local client can dial."""
        return f"127.0.0.1:{self.port}"

    async def start(self) -> int:
        """Bind, start and report SERVING; returns the bound port."""
        reflection.enable_server_reflection(
            (*self._services, HEALTH_SERVICE_NAME, reflection.SERVICE_NAME), self.server
        )
        port = self.server.add_insecure_port(f"{self.config.host}:{self.config.port}")
        if port == 0:
            raise OSError(f"could not bind {self.config.host}:{self.config.port}")
        await self.server.start()
        self._port = port
        for interceptor in self._interceptors:
            if isinstance(interceptor, RpcInterceptor):
                interceptor.prepare(methods_of(self._services))
        serving = health_pb2.HealthCheckResponse.SERVING
        for name in ("", *self._services):
            await self.health.set(name, serving)
        _log.info("listening", port=port, services=list(self._services))
        return port

    async def stop(self, grace: float | None = None) -> None:
        """Health NOT_SERVING, drain, then stop with a grace period. Idempotent."""
        if self._stopping is None:
            self._stopping = asyncio.ensure_future(self._stop(grace))
        await asyncio.shield(self._stopping)

    async def _stop(self, grace: float | None) -> None:
        grace = self.config.grace_seconds if grace is None else grace
        _log.info("stopping", grace_seconds=grace)
        await self.health.enter_graceful_shutdown()
        if self.config.drain_seconds > 0:
            await asyncio.sleep(self.config.drain_seconds)
        await self.server.stop(grace)
        self._stopped.set()
        _log.info("stopped")

    def install_signal_handlers(self) -> None:
        """SIGTERM and SIGINT start a graceful stop (main thread of the loop only)."""
        loop = asyncio.get_running_loop()
        for sig in (signal.SIGTERM, signal.SIGINT):
            with contextlib.suppress(NotImplementedError, RuntimeError, ValueError):
                loop.add_signal_handler(sig, self._on_signal, sig)

    def _on_signal(self, sig: signal.Signals) -> None:
        _log.info("signal", signal=sig.name)
        if self._stopping is None:
            self._stopping = asyncio.ensure_future(self._stop(None))

    async def wait_for_shutdown(self) -> None:
        """Install the signal handlers and wait until the server has stopped."""
        self.install_signal_handlers()
        await self._stopped.wait()
        await self.server.wait_for_termination()
