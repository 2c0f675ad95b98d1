"""Each service process exports its own metrics only: the services that
create matches or read their results (matchmaking, tournaments) import none
of the match service's or matchmaking's modules that register their series,
which their /metrics would otherwise show at zero beside their own."""

from __future__ import annotations

import subprocess
import sys

import pytest

_PROBE = """
import sys
import {module}
from prometheus_client import REGISTRY
names = sorted({{m.name for m in REGISTRY.collect()}})
print("\\n".join(names))
"""


def _series(module: str) -> list[str]:
    done = subprocess.run(
        [sys.executable, "-c", _PROBE.format(module=module)],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    return done.stdout.split()


_MATCH = "tabletop_match_"
_MATCHMAKING = "matchmaking_"


@pytest.mark.parametrize(
    ("module", "own", "foreign"),
    [
        ("services.matchmaking.server", "matchmaking_", (_MATCH,)),
        ("services.tournaments.server", "tabletop_tournament_", (_MATCH, _MATCHMAKING)),
        ("services.bots.worker", "bots_", (_MATCH, _MATCHMAKING)),
        ("services.gateway.server", "tabletop_gateway_", (_MATCH, _MATCHMAKING)),
    ],
)
def test_a_service_exports_no_other_services_series(
    module: str, own: str, foreign: tuple[str, ...]
) -> None:
    names = _series(module)
    assert any(n.startswith(own) for n in names), names  # the probe sees its own
    assert [n for n in names if n.startswith(foreign)] == []


def test_the_match_service_exports_its_series() -> None:
    names = _series("services.match.server")
    assert "tabletop_match_submit_seconds" in names
