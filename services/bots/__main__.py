"""``python -m services.bots``: the bot worker (settings from ``TABLETOP_BOTS_*``)."""

from __future__ import annotations

import argparse
import dataclasses
import sys

from prometheus_client import start_http_server

from services.bots.settings import BotSettings, env_name
from services.bots.worker import BotWorker
from services.common import eventloop, heap
from services.common.grpcserver import GrpcServer, ServerConfig
from services.common.logging import announce, configure_logging


async def _main(s: BotSettings) -> None:
    worker = await BotWorker(s).start()
    # Health checking only (probes), graceful stop on SIGTERM.
    server = GrpcServer(ServerConfig(host=s.grpc_host, port=s.grpc_port, grace_seconds=s.grace_s))
    port = await server.start()
    heap.settle()
    metrics_port = None
    if s.metrics_port >= 0:
        httpd, _ = start_http_server(s.metrics_port, addr=s.grpc_host)
        metrics_port = httpd.server_port
    announce(
        "bot_worker_started",
        f"bots grpc_port={port} metrics_port={metrics_port} consumer={s.consumer}",
        consumer=s.consumer,
        grpc_port=port,
        metrics_port=metrics_port,
    )
    try:
        await server.wait_for_shutdown()
    finally:
        await worker.stop()


def main(argv: list[str] | None = None) -> int:
    fields = "\n".join(f"  {env_name(f.name)}" for f in dataclasses.fields(BotSettings))
    parser = argparse.ArgumentParser(
        prog="python -m services.bots",
        description="The bot worker: plays the bot seats of matches made by matchmaking.",
        epilog="Environment:\n" + fields,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.parse_args(argv)
    configure_logging(service="bots")
    eventloop.run(_main(BotSettings.from_env()))
    return 0


if __name__ == "__main__":
    sys.exit(main())
