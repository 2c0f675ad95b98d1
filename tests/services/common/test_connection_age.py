"""``max_connection_age``: a long-lived client connection is closed (GOAWAY)
after the age and the client reconnects on its own, without a failed call.
Behind a headless Service that reconnect re-resolves DNS, which is how new
replicas start getting calls from clients that were already connected."""

from __future__ import annotations

import asyncio

import grpc

from services.common.grpcserver import GrpcServer, ServerConfig

SERVICE = "test.Peer"


def _register(peers: list[str]):  # type: ignore[no-untyped-def]
    async def who(request: bytes, context: grpc.aio.ServicerContext) -> bytes:
        peers.append(context.peer())
        return request

    def register(_servicer, server):  # type: ignore[no-untyped-def]
        server.add_generic_rpc_handlers(
            (
                grpc.method_handlers_generic_handler(
                    SERVICE, {"Who": grpc.unary_unary_rpc_method_handler(who)}
                ),
            )
        )

    return register


async def _peers_seen(config: ServerConfig, seconds: float) -> list[str]:
    peers: list[str] = []
    server = GrpcServer(config, interceptors=())
    server.add_service(_register(peers), None, SERVICE)
    await server.start()
    try:
        async with grpc.aio.insecure_channel(server.address) as channel:
            call = channel.unary_unary(f"/{SERVICE}/Who")
            loop = asyncio.get_running_loop()
            end = loop.time() + seconds
            while loop.time() < end:
                assert await call(b"x", timeout=5, wait_for_ready=True) == b"x"
                await asyncio.sleep(0.05)
    finally:
        await server.stop(0)
    return peers


async def test_an_aged_connection_is_replaced_without_failed_calls() -> None:
    config = ServerConfig(
        host="127.0.0.1", max_connection_age_seconds=0.5, max_connection_age_grace_seconds=1
    )
    peers = await _peers_seen(config, 3.0)
    # Every call answered (asserted above), over more than one connection in
    # turn (about six at this age; fewer when the machine is busy).
    assert len(set(peers)) >= 2, set(peers)


async def test_without_an_age_one_connection_serves_every_call() -> None:
    peers = await _peers_seen(ServerConfig(host="127.0.0.1"), 1.5)
    assert len(peers) > 10 and len(set(peers)) == 1
