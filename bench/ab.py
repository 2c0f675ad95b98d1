"""Before/after: our stack on the boardgame.io workload, from two revisions of
the code, back to back in one run (alternating which goes first), so that the
ratio of the two is measured under the same machine load.

``python -m bench.ab BEFORE [AFTER] [--loops 50] [--seconds 5] [--repeat 3]
[--path unary|play]``

``BEFORE`` and ``AFTER`` are git revisions (``AFTER`` defaults to the working
tree as it is). Each revision is exported with ``git archive`` into a
temporary folder (with this checkout's generated gRPC package); the clients
are the same for both, on the ``--path`` of ``bench.boardgameio`` (``unary``:
``SubmitMove`` and ``WatchMatch``; ``play``: a ``PlayMatch`` stream per seat). Prints each pair and the median ratios (after ÷
before) of moves/s and of CPU per move of each process.
"""

from __future__ import annotations

import argparse
import json
import shutil
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

from bench.boardgameio import PATHS, run_ours

ROOT = Path(__file__).resolve().parent.parent


def export(rev: str, into: Path) -> Path:
    into.mkdir(parents=True)
    archive = subprocess.run(
        ["git", "archive", rev], cwd=ROOT, check=True, capture_output=True
    ).stdout
    subprocess.run(["tar", "-x", "-C", str(into)], input=archive, check=True)
    shutil.copytree(ROOT / "tabletop", into / "tabletop")
    return into


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.ab", description=__doc__)
    parser.add_argument("before")
    parser.add_argument("after", nargs="?", help="default: the working tree")
    parser.add_argument("--loops", type=int, default=50)
    parser.add_argument("--seconds", type=float, default=5.0)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--path", choices=PATHS, default="unary")
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="bench-ab-") as tmp:
        sources = {"before": export(args.before, Path(tmp) / "before")}
        sources["after"] = export(args.after, Path(tmp) / "after") if args.after else ROOT
        pairs: list[dict[str, Any]] = []
        for r in range(args.repeat):
            order = ("before", "after") if r % 2 == 0 else ("after", "before")
            pair = {
                k: run_ours(args.loops, args.seconds, source=sources[k], path=args.path)
                for k in order
            }
            pairs.append(pair)
            b, a = pair["before"], pair["after"]
            print(
                f"run {r}: moves/s {b['moves_per_s']:.0f} -> {a['moves_per_s']:.0f}; match CPU "
                f"{b['cpu_ms_per_move']['match']:.3f} -> {a['cpu_ms_per_move']['match']:.3f} ms; "
                f"rules {b['cpu_ms_per_move']['rules']:.3f} -> {a['cpu_ms_per_move']['rules']:.3f}; "
                f"nats {b['cpu_ms_per_move']['nats']:.3f} -> {a['cpu_ms_per_move']['nats']:.3f}",
                file=sys.stderr,
            )

    def ratio(get: Any) -> float:
        return statistics.median(get(p["after"]) / get(p["before"]) for p in pairs)

    out = {
        "loops": args.loops,
        "path": args.path,
        "before": args.before,
        "after": args.after or "working tree",
        "moves_per_s_after_over_before": ratio(lambda x: x["moves_per_s"]),
        "latency_p50_after_over_before": ratio(lambda x: x["latency"]["p50_ms"]),
        "cpu_per_move_after_over_before": {
            k: ratio(lambda x, k=k: x["cpu_ms_per_move"][k])
            for k in ("match", "rules", "nats", "valkey", "total_servers")
        },
        "pairs": pairs,
    }
    print(json.dumps(out, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
