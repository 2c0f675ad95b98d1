"""``python -m services.rules``: run the rules service.

Settings come from the environment (``TABLETOP_RULES_HOST``, ``_PORT``,
``_WORKERS``, ``_MAX_MESSAGE_BYTES``, ``_MAX_JSON_BYTES``, ``_GRACE_SECONDS``,
``_DRAIN_SECONDS``; ``TABLETOP_LOG_LEVEL``, ``TABLETOP_LOG_FORMAT``); the
options below override them.
"""

from __future__ import annotations

import argparse
import sys

from services.rules.server import run
from services.rules.settings import RulesSettings


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m services.rules",
        description="The stateless gRPC rules service (tabletop.rules.v1.RulesService).",
        epilog=__doc__.split("\n\n", 1)[1],
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--host", help="address to listen on (default [::])")
    parser.add_argument("--port", type=int, help="port; 0 picks a free one (default 50051)")
    parser.add_argument(
        "--workers",
        type=int,
        help="processes sharing the port with SO_REUSEPORT (default: one per CPU core)",
    )
    args = parser.parse_args(argv)
    try:
        import tabletop.rules.v1.rules_pb2  # noqa: F401
    except ImportError:
        print("the generated gRPC code is missing: run `make gen` first", file=sys.stderr)
        return 2
    overrides = {k: v for k, v in vars(args).items() if v is not None}
    return run(RulesSettings.from_env(**overrides))


if __name__ == "__main__":
    sys.exit(main())
