"""The collector settings of a service process (in a child process: freezing
the heap of the test runner would keep its garbage for good)."""

from __future__ import annotations

import json
import os
import subprocess
import sys

_PROBE = (
    "import gc, json; from services.common import heap; "
    "settled = heap.settle(); "
    "print(json.dumps([settled, gc.get_threshold()[0], gc.get_freeze_count()]))"
)


def _probe(**env: str) -> list:
    out = subprocess.run(
        [sys.executable, "-c", _PROBE],
        env={**os.environ, **env},
        check=True,
        capture_output=True,
        text=True,
    ).stdout
    return json.loads(out)


def test_settle_freezes_the_start_up_heap_and_raises_the_young_threshold() -> None:
    settled, gen0, frozen = _probe()
    assert settled and gen0 == 50_000 and frozen > 1000


def test_gen0_of_zero_leaves_the_collector_alone() -> None:
    settled, gen0, frozen = _probe(TABLETOP_GC_GEN0="0")
    assert not settled and gen0 == 700 and frozen == 0
    assert _probe(TABLETOP_GC_GEN0="2000")[1] == 2000
