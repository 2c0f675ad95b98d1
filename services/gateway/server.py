"""Runs the gateway: uvicorn serving the Starlette app on a socket bound
first (so port 0 gives a free port that is known before serving)."""

from __future__ import annotations

import asyncio
import contextlib
import signal
import socket
from typing import Any

import uvicorn
from prometheus_client import start_http_server

from services.common.logging import get_logger
from services.gateway.http import build
from services.gateway.settings import GatewaySettings

log = get_logger("gateway")


class GatewayServer:
    def __init__(self, settings: GatewaySettings) -> None:
        self.settings = settings
        self.port = 0
        self.metrics_port: int | None = None
        self.socket: socket.socket | None = None
        """The listening socket, once started."""
        self._server: uvicorn.Server | None = None
        self._task: asyncio.Task[Any] | None = None
        self._metrics: Any = None

    @property
    def url(self) -> str:
        host = self.settings.host
        host = "127.0.0.1" if host in ("0.0.0.0", "::", "[::]", "") else host
        return f"http://{host}:{self.port}"

    async def start(self) -> GatewayServer:
        s = self.settings
        if s.auth.uses_dev_secret:
            log.warning("dev_jwt_secret", hint="set TABLETOP_JWT_SECRET outside local development")
        family = socket.AF_INET6 if ":" in s.host.strip("[]") else socket.AF_INET
        sock = socket.socket(family, socket.SOCK_STREAM)
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        # Accepted connections inherit it. Without it, a response's body waits
        # (Nagle) for the ACK of its headers, which the client delays: about
        # 40 ms more on every call after the first on a kept-alive connection.
        sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        sock.bind((s.host.strip("[]"), s.port))
        sock.listen(1024)
        sock.setblocking(False)
        self.port = sock.getsockname()[1]
        self.socket = sock
        config = uvicorn.Config(
            build(s),
            log_config=None,
            access_log=False,
            ws_ping_interval=s.ping_s,
            ws_ping_timeout=s.ping_s,
            ws_max_size=64 * 1024,
            timeout_graceful_shutdown=5,
            proxy_headers=True,
            forwarded_allow_ips=list(s.trusted_proxies),
            lifespan="on",
        )
        self._server = uvicorn.Server(config)
        self._server.install_signal_handlers = lambda: None  # type: ignore[method-assign]
        self._task = asyncio.create_task(self._server.serve(sockets=[sock]))
        while not self._server.started:
            if self._task.done():
                self._task.result()
            await asyncio.sleep(0.01)
        if s.metrics_port >= 0:
            self._metrics, _ = start_http_server(s.metrics_port, addr=s.host.strip("[]"))
            self.metrics_port = self._metrics.server_port
        log.info("listening", url=self.url, metrics_port=self.metrics_port)
        return self

    async def stop(self) -> None:
        if self._server is not None:
            self._server.should_exit = True
        if self._task is not None:
            with contextlib.suppress(Exception):
                await self._task
        if self._metrics is not None:
            self._metrics.shutdown()

    async def serve_until_signal(self) -> None:
        stop = asyncio.Event()
        loop = asyncio.get_running_loop()
        for sig in (signal.SIGTERM, signal.SIGINT):
            loop.add_signal_handler(sig, stop.set)
        await stop.wait()
        await self.stop()
