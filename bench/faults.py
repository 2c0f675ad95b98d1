"""Faults under load: the standing fault suite (``tests/faults/harness.py``)
run with every fault, and its figures.

Two match replicas on one nats-server and one valkey-server, each reached
through a fault proxy; tic-tac-toe drivers play with an idempotency key and
``expected_version`` on every move, retrying like a careful client, while the
faults are injected one after the other (delay, bandwidth cap, dropped
connections, blackhole, close after N bytes, SIGSTOP, kill -9 and restart, of
NATS and of Redis). Per fault: moves acknowledged during it, errors by status
and reason, recovery time (from the end of the fault until every match in play
has moved again). Then the audit: acked, lost, doubled, projections that are
not the fold, missing or doubled ``MatchFinished`` facts.
"""

from __future__ import annotations

import asyncio
import json
import os
import tempfile
from pathlib import Path
from typing import Any

from services.common.logging import configure_logging
from tests.faults.harness import run_suite


def run(fault_s: float = 3.0, drivers: int = 8) -> dict[str, Any]:
    # The services log every failure they meet (many, by design): to a file.
    log_path = Path(tempfile.gettempdir()) / "tabletop-bench-faults.log"
    with open(log_path, "w") as log:
        configure_logging(service="bench-faults", level="WARNING", fmt="json", stream=log)
        try:
            report = asyncio.run(
                run_suite(
                    long=True, fault_s=fault_s, calm_s=1.0, drivers=drivers, recover_max_s=30.0
                )
            )
        finally:
            configure_logging(service="bench")
    print(report.table())
    print(f"(service logs in {log_path})")
    return report.as_dict()


if __name__ == "__main__":
    print(json.dumps(run(float(os.environ.get("FAULT_S", "3.0"))), indent=2))
