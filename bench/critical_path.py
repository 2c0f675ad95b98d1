"""Where one move's time goes at G=1: its critical path, part by part.

At G=1 nothing overlaps. Each move crosses the client, the match service,
the rules service, nats-server and back, one after the other, and the
moves per second are the inverse of that path. This runs our stack as
``bench.boardgameio``'s ``session_node`` path does (one game at a time from
the Node driver, a ``PlaySession`` per seat), with the match and rules
services started under ``bench.marks``, which timestamps each hand-over of
a move, and cuts every move's path into six parts (median and p90, µs):

* ``client``: from the later of the previous move's two frames (built for
  the two seats' streams) to this move's request decoded by the match
  service. The frames' gRPC writes, the network both ways, the client
  reading both frames and sending the move, the match service's read of it;
* ``match_in``: the request decoded until the rules request is handed to
  the rules stream (checks, idempotency key, the projection, the call);
* ``rules``: that hand-over until the answer is read back; of it,
  ``rules_call`` is the rules service's own handling of the call
  (``_one_call``: bounds, decode, the rules, encode, redaction, metrics),
  the rest the two gRPC hops;
* ``match_decide``: the answer read until the commit's append begins;
* ``jetstream``: the append begun until JetStream's ack is read (encode,
  publish, nats-server's store, the ack's way back);
* ``match_out``: the ack read until the second frame is built (the
  projection, the fan-out, the frames).

And each part the match service has, cut again where its work is handed
from one task to the next (``STEPS``, only for a move whose marks of them
all lie in order):

* ``match_in`` = ``in_queue`` (the move handed from the session's reader to
  its mover, until the write path begins) + ``in_checks`` (the projection,
  the checks, the idempotency key, until the rules call) + ``in_send`` (the
  rules request built and handed to the stream's writer, until it writes);
* ``rules`` = ``rules_out`` (the rules request's way to the rules service's
  handling) + ``rules_call`` + ``rules_back`` (the answer's way back);
* ``match_decide`` = ``decide_wake`` (the answer read until the waiting
  move has its decision) + ``decide_commit`` (the commit built, until the
  append);
* ``match_out`` = ``out_wake`` (the ack read until the waiting append
  returns) + ``out_apply`` (the new projection, the fan-out to this
  process's feeds, the cache, the timer, until the write path returns) +
  ``out_follow`` (the followers and the session's writer, until the first
  frame is built) + ``out_second`` (the first frame built and handed to
  gRPC, until the second is built).

Only the marks of the measured run count, not those of its warm-up (two
games at once). A move whose path a game's creation interrupts counts for
none of the parts it overlaps, and ``client`` (with ``cycle``, one move's
request to the next's) is taken only between two moves in a row. Per game: ``create``, ``CreateMatch``'s whole handling in the
match service, and its ``index`` part (the lobby index's write it waits
for). The marks cost each process about a microsecond each, so this run's
moves per second (reported) are a little under the throughput sections'.

``python -m bench.critical_path [--seconds 5]`` prints the figures as JSON.
"""

from __future__ import annotations

import argparse
import bisect
import json
import tempfile
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from bench.stats import percentile

PARTS = ("client", "match_in", "rules", "match_decide", "jetstream", "match_out")

SPANS = (
    ("match_in", "req", "rwrite"),
    ("rules", "rwrite", "rread"),
    ("rules_call", "call>", "call<"),
    ("match_decide", "rread", "append"),
    ("jetstream", "append", "ack"),
    ("match_out", "ack", "frame"),
)
"""The parts within one move's path (all but ``client``, which spans two
moves), and ``rules_call``: name, from mark, to mark."""

STEPS = (
    ("in_queue", "req", "submit>"),
    ("in_checks", "submit>", "decide>"),
    ("in_send", "decide>", "rwrite"),
    ("rules_out", "rwrite", "call>"),
    ("rules_back", "call<", "rread"),
    ("decide_wake", "rread", "decide<"),
    ("decide_commit", "decide<", "append"),
    ("out_wake", "ack", "appended"),
    ("out_apply", "appended", "submit<"),
    ("out_follow", "submit<", "frame1"),
    ("out_second", "frame1", "frame"),
)
"""The steps within the parts (see the module): name, from mark, to mark
(``frame1`` the first of the move's two frames, ``frame`` the second)."""

_STEP_MARKS = (
    # mark, the mark it follows, the mark it precedes
    ("submit>", "req", "rwrite"),
    ("decide>", "submit>", "rwrite"),
    ("decide<", "rread", "append"),
    ("appended", "ack", "frame1"),
    ("submit<", "appended", "frame1"),
)

Marks = dict[str, list[int]]
"""Mark name -> its times (ns, sorted)."""


def read_marks(folder: Path, since_ns: int = 0) -> tuple[Marks, Marks]:
    """The match service's and the rules service's marks in ``folder``, those
    from ``since_ns`` on (the warm-up before it plays two games at once)."""
    out: tuple[Marks, Marks] = ({}, {})
    for path in folder.glob("*.marks"):
        marks = out[0] if path.name.startswith("match.") else out[1]
        for line in path.read_text().splitlines():
            ns, name = line.split()
            if int(ns) >= since_ns:
                marks.setdefault(name, []).append(int(ns))
    for marks in out:
        for times in marks.values():
            times.sort()
    return out


def _after(times: Sequence[int], t: int) -> int | None:
    i = bisect.bisect_right(times, t)
    return times[i] if i < len(times) else None


def _between(times: Sequence[int], start: int, end: int) -> list[int]:
    return list(times[bisect.bisect_right(times, start) : bisect.bisect_left(times, end)])


def _creates(match: Marks) -> list[int]:
    """When games' creations began and ended (ns, sorted)."""
    return sorted(match.get("create>", []) + match.get("create<", []))


def moves(match: Marks, rules: Marks, creates: Sequence[int]) -> list[dict[str, int]]:
    """Each move's path, as the times (ns) of its hand-overs; the moves whose
    path is whole (no creation in it: ``creates``), in order."""
    get = match.get
    requests = get("req", [])
    calls_in, calls_out = rules.get("call>", []), rules.get("call<", [])
    out = []
    for i, req in enumerate(requests):
        end = requests[i + 1] if i + 1 < len(requests) else None
        path: dict[str, int] = {"i": i, "req": req}
        at = req
        for name in ("rwrite", "rread", "append", "ack"):
            t = _after(get(name, []), at)
            if t is None:
                break
            path[name] = at = t
        else:
            frames = get("frame", [])
            i1 = bisect.bisect_right(frames, at)
            if i1 + 1 >= len(frames):
                continue
            path["frame1"], path["frame"] = frames[i1], frames[i1 + 1]
            if (end is not None and path["frame"] > end) or _between(creates, req, path["frame"]):
                continue
            _steps(path, get)
            started = _between(calls_in, path["rwrite"], path["rread"])
            finished = _between(calls_out, path["rwrite"], path["rread"])
            if len(started) == 1 and len(finished) == 1:
                path["call>"], path["call<"] = started[0], finished[0]
            out.append(path)
    return out


def _steps(path: dict[str, int], get: Callable[..., list[int]]) -> None:
    """Add the marks of a move's steps to its ``path``: each the first of its
    kind after the one it follows, all or none (none when one is missing or
    out of order: a move whose write path waited on something else)."""
    found: dict[str, int] = {}
    for name, follows, precedes in _STEP_MARKS:
        t = _after(get(name, []), found[follows] if follows in found else path[follows])
        if t is None or t > path[precedes]:
            return
        found[name] = t
    path.update(found)


def parts(paths: list[dict[str, int]], creates: Sequence[int]) -> dict[str, list[float]]:
    """Each part's durations (µs) over the moves; ``client`` (and ``cycle``)
    only between two moves in a row, with no game created in between."""
    names = (*PARTS, "rules_call", "cycle", *(step for step, _, _ in STEPS))
    out: dict[str, list[float]] = {name: [] for name in names}
    previous: dict[str, int] | None = None
    for p in paths:
        if (
            previous is not None
            and previous["i"] + 1 == p["i"]
            and not _between(creates, previous["frame"], p["req"])
        ):
            out["client"].append((p["req"] - previous["frame"]) / 1000)
            out["cycle"].append((p["req"] - previous["req"]) / 1000)
        for name, start, end in (*SPANS, *STEPS):
            if start in p and end in p:  # a move's rules call and steps may be missing
                out[name].append((p[end] - p[start]) / 1000)
        previous = p
    return out


def _durations(starts: Sequence[int], ends: Sequence[int]) -> list[float]:
    """Each start's duration to the first end after it (µs)."""
    out = []
    for start in starts:
        end = _after(ends, start)
        if end is not None:
            out.append((end - start) / 1000)
    return out


def summary(values: list[float]) -> dict[str, float | int]:
    if not values:
        return {"n": 0}
    ordered = sorted(values)
    return {
        "n": len(values),
        "p50_us": round(percentile(ordered, 50), 1),
        "p90_us": round(percentile(ordered, 90), 1),
    }


def analyse(match: Marks, rules: Marks) -> dict[str, Any]:
    """The figures of a run's marks (see the module)."""
    creates = _creates(match)
    by_part = parts(moves(match, rules, creates), creates)
    out: dict[str, Any] = {name: summary(v) for name, v in by_part.items()}
    out["sum_of_p50_us"] = round(sum(out[name].get("p50_us", 0.0) for name in PARTS), 1)
    out["create"] = summary(_durations(match.get("create>", []), match.get("create<", [])))
    index = []
    for start in match.get("create>", []):
        end = _after(match.get("create<", []), start)
        # the create's own write is the last one begun in it (another may be
        # the previous game's, marking it finished)
        begun = _between(match.get("index>", []), start, end) if end is not None else []
        index += _durations(begun[-1:], match.get("index<", []))
    out["create_index"] = summary(index)
    return out


def run(seconds: float = 5.0, path: str = "session_node") -> dict[str, Any]:
    """Our stack at G=1 on ``path`` with the services marked (see the module)."""
    from bench import boardgameio

    if path == "session_node":
        try:
            boardgameio.ensure_node_modules()
        except boardgameio.Skipped as e:
            return {"skipped": str(e)}
    with tempfile.TemporaryDirectory(prefix="tabletop-marks-") as folder:
        figures = boardgameio.run_ours(1, seconds, path=path, marks=Path(folder))
        out = analyse(*read_marks(Path(folder), figures["measured_from_ns"]))
    out["moves_per_s"] = round(figures["moves_per_s"], 1)
    out["path"] = path
    out["note"] = (
        "medians (µs) of each part of a move's path at G=1, the services marked "
        "(bench/marks.py): client = the frames' way out, the client and the move's "
        "way in; rules_call = the rules service's handling within rules; the steps "
        "(in_*, rules_out/back, decide_*, out_*) cut the parts again where a move's "
        "work passes from one task to the next"
    )
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seconds", type=float, default=5.0)
    parser.add_argument("--path", default="session_node", choices=("session_node", "play"))
    args = parser.parse_args(argv)
    print(json.dumps(run(args.seconds, args.path), indent=2))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
