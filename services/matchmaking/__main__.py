"""``python -m services.matchmaking``: the matchmaking service.

Settings come from the environment (``TABLETOP_*``; see
``services/matchmaking/settings.py``). ``TABLETOP_GRPC_PORT=0`` picks a free
port; the bound ports are printed on one line.
"""

from __future__ import annotations

import argparse
import dataclasses
import sys

from services.common import eventloop, heap
from services.common.logging import announce, configure_logging
from services.matchmaking.server import MatchmakingProcess
from services.matchmaking.settings import MatchmakingSettings, env_name


async def _main(settings: MatchmakingSettings) -> None:
    proc = await MatchmakingProcess(settings).start()
    heap.settle()
    grpc_port = proc.server.port if proc.server else None
    announce(
        "matchmaking_started",
        f"matchmaking grpc_port={grpc_port or '-'} "
        f"metrics_port={proc.metrics_port if proc.metrics_port is not None else '-'}",
        grpc_port=grpc_port,
        metrics_port=proc.metrics_port,
    )
    try:
        await proc.wait()
    finally:
        await proc.stop()


def main(argv: list[str] | None = None) -> int:
    fields = "\n".join(
        f"  {env_name(f.name)} (default {f.default!r})"
        for f in dataclasses.fields(MatchmakingSettings)
    )
    parser = argparse.ArgumentParser(
        prog="python -m services.matchmaking",
        description="Matchmaking: tickets in, matches out; ratings from finished matches.",
        epilog="Environment:\n" + fields,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.parse_args(argv)
    configure_logging(service="matchmaking")
    eventloop.run(_main(MatchmakingSettings.from_env()))
    return 0


if __name__ == "__main__":
    sys.exit(main())
