"""``python -m services.gateway``: run the gateway (settings from the
environment, see ``services.gateway.settings``). Prints ``listening on
<url>`` once it serves; SIGTERM or SIGINT stops it gracefully."""

from __future__ import annotations

import argparse
import sys

from services.common import eventloop, heap
from services.common.logging import configure_logging
from services.gateway import settings as settings_module
from services.gateway.server import GatewayServer
from services.gateway.settings import GatewaySettings


async def serve(settings: GatewaySettings) -> None:
    server = await GatewayServer(settings).start()
    heap.settle()
    print(f"listening on {server.url}", flush=True)
    await server.serve_until_signal()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m services.gateway",
        description=__doc__,
        epilog=settings_module.__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.parse_args(argv)
    configure_logging(service="gateway")
    eventloop.run(serve(GatewaySettings.from_env()))
    return 0


if __name__ == "__main__":
    sys.exit(main())
