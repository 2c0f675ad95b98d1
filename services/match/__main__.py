"""``python -m services.match``: run the match service (settings from the
environment, see ``services.match.settings``). Prints ``listening on
<host>:<port>`` once it serves; SIGTERM or SIGINT stops it gracefully."""

from __future__ import annotations

import argparse
import asyncio
import signal
import sys

from services.match.server import MatchServer
from services.match.settings import MatchSettings


async def serve(settings: MatchSettings) -> None:
    server = await MatchServer(settings).start()
    print(f"listening on {server.address}", flush=True)
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(sig, stop.set)
    await stop.wait()
    await server.stop()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m services.match",
        description=__doc__,
        epilog=MatchSettings.__module__ and (sys.modules[MatchSettings.__module__].__doc__ or ""),
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.parse_args(argv)
    asyncio.run(serve(MatchSettings.from_env()))
    return 0


if __name__ == "__main__":
    sys.exit(main())
