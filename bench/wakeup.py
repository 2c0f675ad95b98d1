"""What waking a sleeping process costs on this machine: the toll every hop
of a move pays when the moves come one at a time.

Two processes pass one byte back and forth over a socket pair. Before each
round trip the caller busy-waits for ``gap`` seconds (so its own CPU stays
awake), while the peer sleeps in ``recv``: the round trip then costs the
peer's wake-up after a sleep of that length, which is what a process of the
stack pays for each message when the moves come one at a time (G=1: each
process sleeps between its turns). With ``gap`` 0 the peer is woken as soon
as it sleeps. On a virtual machine, a CPU left idle is given back to the
host, and waking it again costs far more than a context switch.

``python -m bench.wakeup [--rounds 2000]`` prints the figures as JSON; ``run()``
returns them to ``python -m bench``.
"""

from __future__ import annotations

import argparse
import json
import os
import socket
import statistics
import time
from typing import Any

GAPS_S = (0.0, 0.0003, 0.001, 0.003)


def _round_trips(rounds: int, gap_s: float) -> list[float]:
    a, b = socket.socketpair()
    pid = os.fork()
    if pid == 0:  # the peer: answer every byte, sleeping in between
        a.close()
        try:
            for _ in range(rounds):
                b.recv(1)
                b.send(b"x")
        finally:
            os._exit(0)
    b.close()
    out = []
    try:
        for _ in range(rounds):
            start = time.perf_counter()
            while time.perf_counter() - start < gap_s:
                pass
            t = time.perf_counter()
            a.send(b"x")
            a.recv(1)
            out.append(time.perf_counter() - t)
    finally:
        a.close()
        os.waitpid(pid, 0)
    return out


def run(rounds: int = 2000) -> dict[str, Any]:
    """The round trip's p50 (µs) after each gap; ``wake_after_1ms_over_hot``:
    how many times a round trip to a peer idle for 1 ms costs one to a peer
    just gone to sleep."""
    rows = []
    for gap in GAPS_S:
        samples = _round_trips(rounds, gap)
        rows.append(
            {
                "gap_ms": gap * 1000,
                "rounds": rounds,
                "p50_us": statistics.median(samples) * 1e6,
                "p90_us": statistics.quantiles(samples, n=10)[-1] * 1e6,
            }
        )
    hot = rows[0]["p50_us"]
    after_1ms = next(r for r in rows if r["gap_ms"] == 1.0)["p50_us"]
    return {"round_trips": rows, "wake_after_1ms_over_hot": after_1ms / hot}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.wakeup", description=__doc__)
    parser.add_argument("--rounds", type=int, default=2000)
    args = parser.parse_args(argv)
    print(json.dumps(run(args.rounds), indent=2))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
