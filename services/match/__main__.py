"""``python -m services.match``: run the match service (settings from the
environment, see ``services.match.settings``). Logs ``listening`` with the
message ``listening on <host>:<port>`` once it serves; SIGTERM or SIGINT stops it gracefully."""

from __future__ import annotations

import argparse
import sys

from services.common import eventloop, heap
from services.common.logging import announce, configure_logging
from services.match.server import MatchServer
from services.match.settings import MatchSettings


async def serve(settings: MatchSettings) -> None:
    server = await MatchServer(settings).start()
    heap.settle()
    announce("listening", f"listening on {server.address}", address=server.address)
    await server.serve_until_signal()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m services.match",
        description=__doc__,
        epilog=MatchSettings.__module__ and (sys.modules[MatchSettings.__module__].__doc__ or ""),
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.parse_args(argv)
    configure_logging(service="match")
    eventloop.run(serve(MatchSettings.from_env()))
    return 0


if __name__ == "__main__":
    sys.exit(main())
