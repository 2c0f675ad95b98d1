"""``python -m services.tournaments``: run the tournament service (settings
from the environment, see ``services.tournaments.settings``). Prints
``listening on <host>:<port>`` once it serves; SIGTERM or SIGINT stops it
gracefully."""

from __future__ import annotations

import argparse
import asyncio
import sys

from services.common import heap
from services.common.logging import configure_logging
from services.tournaments import settings as settings_module
from services.tournaments.server import TournamentServer
from services.tournaments.settings import TournamentSettings


async def serve(settings: TournamentSettings) -> None:
    server = await TournamentServer(settings).start()
    heap.settle()
    print(f"listening on {server.address}", flush=True)
    await server.serve_until_signal()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m services.tournaments",
        description=__doc__,
        epilog=settings_module.__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.parse_args(argv)
    configure_logging(service="tournaments")
    asyncio.run(serve(TournamentSettings.from_env()))
    return 0


if __name__ == "__main__":
    sys.exit(main())
