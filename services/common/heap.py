"""The garbage collector of a service process, set once its start-up is done.

``settle()`` (each service's ``__main__`` calls it when it serves) collects
once, then ``gc.freeze()``-s what start-up left (modules, descriptors,
settings, connections: most of the heap, and it lives as long as the
process), so later collections never walk it again, and raises the
first-generation threshold from CPython's 700 allocations to
``TABLETOP_GC_GEN0`` (default 50,000): each move allocates many short-lived
containers (protobuf messages, dicts, frames of coroutines) that would
otherwise start a young collection every few calls. ``TABLETOP_GC_GEN0=0``
leaves the collector as CPython sets it up. Cycles are still collected; a
young collection just walks more objects, less often.
"""

from __future__ import annotations

import gc
import os

ENV = "TABLETOP_GC_GEN0"
DEFAULT_GEN0 = 50_000


def settle(env: dict[str, str] | None = None) -> bool:
    """Freeze the start-up heap and raise the young threshold; False when
    ``TABLETOP_GC_GEN0=0`` says to leave the collector alone."""
    raw = (os.environ if env is None else env).get(ENV, "").strip()
    gen0 = int(raw) if raw else DEFAULT_GEN0
    if gen0 <= 0:
        return False
    gc.collect()
    gc.freeze()
    _, gen1, gen2 = gc.get_threshold()
    gc.set_threshold(gen0, gen1, gen2)
    return True
