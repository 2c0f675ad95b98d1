"""Every benchmark process runs gRPC as the services do, whichever of its
modules imports grpc first: ``make bench``'s harness once ran its own clients
(the rules hop's, the end-to-end section's) on grpcio's defaults because its
first module imported grpc before ``services``, while each module run alone
did not."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

import services

BENCH = Path(__file__).resolve().parents[2] / "bench"

# Notes GRPC_EXPERIMENTS as it is when grpc itself is first imported.
_PROBE = """
import importlib, os, sys
seen = []
class Watch:
    def find_spec(self, name, path=None, target=None):
        if name == "grpc" and not seen:
            seen.append(os.environ.get("GRPC_EXPERIMENTS", "<unset>"))
        return None
sys.meta_path.insert(0, Watch())
importlib.import_module(sys.argv[1])
assert "grpc" in sys.modules, "the module does not use grpc"
print(seen[0])
"""


def _seen_at_grpc_import(module: str) -> str:
    env = {k: v for k, v in os.environ.items() if k != "GRPC_EXPERIMENTS"}
    done = subprocess.run(
        [sys.executable, "-c", _PROBE, module],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    return done.stdout.strip()


GRPC_USERS = sorted(
    f"bench.{p.stem}"
    for p in BENCH.glob("*.py")
    if p.stem != "__init__" and ("import grpc" in p.read_text() or p.stem == "__main__")
)


def test_the_modules_that_use_grpc_are_found() -> None:
    assert {"bench.__main__", "bench.boardgameio", "bench.match_e2e"} <= set(GRPC_USERS)


@pytest.mark.parametrize("module", GRPC_USERS)
def test_grpc_loads_with_the_services_setting(module: str) -> None:
    assert _seen_at_grpc_import(module) == services.GRPC_EXPERIMENTS
