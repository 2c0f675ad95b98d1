"""The event loop every service runs on: uvloop, unless told otherwise.

Each move crosses the loop many times (a gRPC call in, a gRPC call to the
rules, a JetStream publish and its ack, a Redis write, a frame to each
watcher); uvloop's callbacks, timers and socket transports cost less CPU
than the pure-Python selector loop's. ``TABLETOP_EVENT_LOOP=asyncio`` runs
the standard loop instead (to compare, or where uvloop is not installed:
then it falls back to asyncio with a warning).
"""

from __future__ import annotations

import asyncio
import os
import sys
from collections.abc import Coroutine
from typing import Any, TypeVar

T = TypeVar("T")

ENV = "TABLETOP_EVENT_LOOP"


def loop_name() -> str:
    """The loop ``run`` will use: ``uvloop`` or ``asyncio``."""
    wanted = os.environ.get(ENV, "uvloop").strip().lower() or "uvloop"
    if wanted not in ("uvloop", "asyncio"):
        raise ValueError(f"{ENV} must be uvloop or asyncio, not {wanted!r}")
    if wanted == "uvloop":
        try:
            import uvloop  # noqa: F401
        except ImportError:  # pragma: no cover - uvloop is a dependency
            print(f"{ENV}: uvloop is not installed; using asyncio", file=sys.stderr)
            return "asyncio"
    return wanted


def run(main: Coroutine[Any, Any, T]) -> T:
    """``asyncio.run(main)`` on the configured loop."""
    if loop_name() == "uvloop":
        import uvloop

        return uvloop.run(main)
    return asyncio.run(main)
