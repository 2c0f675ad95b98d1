"""The gateway's listening socket."""

from __future__ import annotations

import socket

from services.common.auth import AuthSettings
from services.gateway.server import GatewayServer
from services.gateway.settings import GatewaySettings


async def test_connections_are_accepted_with_nagle_off() -> None:
    """TCP_NODELAY on the listener (accepted connections inherit it): with
    Nagle on, a response's body waited for the client's delayed ACK of its
    headers, about 40 ms on every call after the first of a kept-alive
    connection."""
    server = await GatewayServer(
        GatewaySettings(port=0, auth=AuthSettings(secret="test-secret-0123456789abcdef0123456789"))
    ).start()
    try:
        assert server.socket is not None
        assert server.socket.getsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY) == 1
    finally:
        await server.stop()
