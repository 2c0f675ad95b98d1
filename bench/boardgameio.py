"""The peer: boardgame.io beside our stack, on the same workload, in one run.

The workload, for each stack: ``G`` loops at once, each playing tic-tac-toe
games one after the other for a fixed time; each game is the same 9-move draw,
created and joined by its two players, each seat following the match live and
moving only once its own live feed has shown the previous move.

* **boardgame.io** (``bench/boardgameio/``, pinned 0.50.x): its ``Server`` with
  the default in-memory storage, a tic-tac-toe whose moves run on the server
  only (``client: false``), the Lobby API on its own ``apiPort``; the clients
  are socket.io clients in one Node process (create and join over the Lobby
  API, then ``sync`` and ``update`` on the game's namespace). Nothing is
  durable: a restart loses every match.
* **Tabletop**: nats-server (JetStream, file storage), valkey, the rules
  service and the match service, each its own process; the clients are gRPC
  clients in this process, on one of two paths (``--path``, all by
  default): ``unary``: ``CreateMatch``, a ``WatchMatch`` per seat, then
  ``SubmitMove``; ``play``: ``CreateMatch``, then one ``PlayMatch`` stream
  per seat that follows the match and carries the seat's moves (as a
  boardgame.io client's one socket does). ``play_node`` is the play path
  driven from one Node process (``tabletop_driver.js``, @grpc/grpc-js), as
  boardgame.io's clients are: the same calls, with the clients' own CPU cost
  that of the peer's runtime. ``session_node``: from Node too, each seat one
  ``PlaySession`` stream kept from game to game, as boardgame.io's driver
  keeps one socket per seat (the match created on the first seat's session,
  a subscription per seat and game). Every way, every move is applied only
  once JetStream has it.

The npm packages are installed the first time into a cache folder
(``$XDG_CACHE_HOME/tabletop/bench-boardgameio``, else ``~/.cache/...``), never
into the repository. Without ``node`` and ``npm`` the section is skipped with
a message saying so.

Per stack and ``G``: moves per second, the move latency (from sending a move
until the next mover has seen it), and the server CPU per move of every
server process, from ``/proc/<pid>/stat`` (user + system) deltas: CPU time is
the figure the other work on a shared machine distorts least. Also the
clients' CPU per move (``client_cpu_ms_per_move``: this process, or the Node
driver process), for both stacks: on one machine the clients' CPU is CPU the
servers do not get.

``python -m bench.boardgameio [--loops 1,10,50,200] [--seconds 5] [--repeat 1]
[--path unary|play|play_node|session_node|skeleton|skeleton_session|all]
[--only ours|peer]`` prints the figures as
JSON; in ``run()``'s rows ``tabletop`` and ``throughput_over_boardgameio`` are
the unary path, ``tabletop_play`` and ``throughput_over_boardgameio_play`` the
play path, ``tabletop_play_node`` and ``..._play_node`` the play path from Node,
``tabletop_skeleton`` and ``..._skeleton`` the architecture's skeleton
(``bench/skeleton.py``; ``..._skeleton_session`` driven as the session path
is), ``session_node_over_play_node`` what a session saves, and
``play_node_over_skeleton`` our play path from Node
against it.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import resource
import shutil
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import grpc

import services
from bench.match_e2e import SECRET, _cpu_s, _start_rules, _start_service
from bench.stats import summary_ms
from services.common.auth import AuthSettings, Tokens, bearer_metadata
from services.common.servers import NatsServer, ValkeyServer, free_port
from tabletop.match.v1 import match_pb2, match_pb2_grpc

HERE = Path(__file__).parent / "boardgameio"
GAME = "tic_tac_toe"
DRAW = (0, 1, 2, 4, 3, 5, 7, 6, 8)  # X O X O X O X O X: no line, a draw
LOOPS = (1, 10, 50, 200)


class Skipped(Exception):
    """The peer cannot run here (no node or npm, or the install failed)."""


# ------------------------------------------------------------- the peer
def cache_dir() -> Path:
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "tabletop" / "bench-boardgameio"


def ensure_node_modules() -> Path:
    """The folder holding ``node_modules`` with the pinned packages
    (installed from the npm registry the first time, or when the pins change)."""
    node, npm = shutil.which("node"), shutil.which("npm")
    if node is None or npm is None:
        raise Skipped("node and npm are needed to run boardgame.io (not found on PATH)")
    folder = cache_dir()
    folder.mkdir(parents=True, exist_ok=True)
    wanted = (HERE / "package.json").read_text()
    manifest = folder / "package.json"
    stamp = folder / ".installed"
    if manifest.exists() and manifest.read_text() == wanted and stamp.exists():
        return folder
    manifest.write_text(wanted)
    done = subprocess.run(
        [npm, "install", "--no-audit", "--no-fund", "--no-package-lock", "--loglevel=error"],
        cwd=folder,
        capture_output=True,
        text=True,
        timeout=600,
    )
    if done.returncode != 0:
        raise Skipped(f"npm install failed: {done.stderr.strip()[-500:]}")
    stamp.write_text(wanted)
    return folder


def node_versions(folder: Path) -> dict[str, str]:
    out = {"node": subprocess.run(["node", "--version"], capture_output=True, text=True).stdout}
    for name in ("boardgame.io", "socket.io-client", "@grpc/grpc-js"):
        pkg = folder / "node_modules" / name / "package.json"
        out[name] = json.loads(pkg.read_text())["version"]
    return {k: v.strip() for k, v in out.items()}


def _node_env(folder: Path) -> dict[str, str]:
    return {**os.environ, "NODE_PATH": str(folder / "node_modules"), "NODE_ENV": "production"}


def _start_peer(folder: Path) -> tuple[subprocess.Popen[str], int, int]:
    port, api_port = free_port(), free_port()
    proc = subprocess.Popen(
        ["node", str(HERE / "server.js"), str(port), str(api_port)],
        env=_node_env(folder),
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
    )
    assert proc.stdout is not None
    line = proc.stdout.readline()
    if "listening" not in line:
        proc.kill()
        raise RuntimeError(f"boardgame.io did not start: {line!r}")
    return proc, port, api_port


def _run_driver(
    folder: Path, script: str, args: list[str], seconds: float, stdin: str | None = None
) -> Any:
    """One Node driver (``driver.js``, ``tabletop_driver.js``, both reporting
    through ``measure.js``) run to its end: the JSON of its last line."""
    done = subprocess.run(
        ["node", str(HERE / script), *args],
        input=stdin,
        env=_node_env(folder),
        capture_output=True,
        text=True,
        timeout=seconds + 120,
    )
    if done.returncode != 0:
        raise RuntimeError(f"{script} failed: {done.stderr.strip()[-800:]}")
    return json.loads(done.stdout.strip().splitlines()[-1])


def _drive_peer(folder: Path, port: int, api_port: int, loops: int, seconds: float) -> Any:
    args = [str(port), str(api_port), str(loops), str(seconds)]
    return _run_driver(folder, "driver.js", args, seconds)


def run_peer(folder: Path, loops: int, seconds: float) -> dict[str, Any]:
    proc, port, api_port = _start_peer(folder)
    try:
        _drive_peer(folder, port, api_port, 2, 0.5)  # warm up (JIT, sockets)
        c0, d0 = _cpu_s(proc.pid), _children_cpu_s()
        figures = _drive_peer(folder, port, api_port, loops, seconds)
        c1, d1 = _cpu_s(proc.pid), _children_cpu_s()
    finally:
        proc.terminate()
        proc.wait(15)
    moves = max(1, figures["moves"])
    figures["cpu_ms_per_move"] = {"server": (c1 - c0) * 1000 / moves}
    figures["cpu_ms_per_move"]["total_servers"] = figures["cpu_ms_per_move"]["server"]
    figures["client_cpu_ms_per_move"] = (d1 - d0) * 1000 / moves  # the driver process
    return figures


def bracketed(before: dict[str, Any], after: dict[str, Any]) -> dict[str, Any]:
    """The peer's figures of one ``G`` from its runs before and after ours:
    moves per second, the latency percentiles and the CPU per move are the
    means of the two runs' (both runs kept under ``bracket``), the moves and
    games their sums."""

    def mean(get: Callable[[dict[str, Any]], float]) -> float:
        return (get(before) + get(after)) / 2

    return {
        "loops": before["loops"],
        "moves": before["moves"] + after["moves"],
        "games": before["games"] + after["games"],
        "seconds": before["seconds"] + after["seconds"],
        "moves_per_s": mean(lambda x: x["moves_per_s"]),
        "latency": {
            "n": before["latency"]["n"] + after["latency"]["n"],
            "p50_ms": mean(lambda x: x["latency"]["p50_ms"]),
            "p99_ms": mean(lambda x: x["latency"]["p99_ms"]),
        },
        "cpu_ms_per_move": {
            key: mean(lambda x, key=key: x["cpu_ms_per_move"][key])
            for key in ("server", "total_servers")
        },
        "client_cpu_ms_per_move": mean(lambda x: x["client_cpu_ms_per_move"]),
        "bracket": [before, after],
    }


# ------------------------------------------------------------ our stack
class _Loops:
    """``G`` loops of games against the match service, over one channel."""

    def __init__(self, address: str) -> None:
        self.address = address
        self.tokens = Tokens(AuthSettings(secret=SECRET))
        self.moves = [f'{{"type":"place_mark","cell":{c}}}' for c in DRAW]

    async def loop(self, k: int, deadline: float, latencies: list[int]) -> tuple[int, int]:
        players = [f"guest:bench-{k}-x", f"guest:bench-{k}-o"]
        meta = [bearer_metadata(self.tokens.issue(p)) for p in players]
        moves = games = 0
        while time.perf_counter() < deadline:
            moves += await self.game(players, meta, latencies)
            games += 1
        return moves, games

    async def game(self, players: list[str], meta: list[Any], latencies: list[int]) -> int:
        created = await self.stub.CreateMatch(
            match_pb2.CreateMatchRequest(game=GAME, players=players), metadata=meta[0]
        )
        match_id = created.match_id
        seen = [-1, -1]
        changed = [asyncio.Event(), asyncio.Event()]

        async def follow(seat: int) -> None:
            call = self.stub.WatchMatch(
                match_pb2.WatchMatchRequest(match_id=match_id), metadata=meta[seat]
            )
            async for c in call:
                seen[seat] = c.version
                changed[seat].set()

        async def until(seat: int, version: int) -> None:
            while seen[seat] < version:
                changed[seat].clear()
                await changed[seat].wait()

        watchers = [asyncio.ensure_future(follow(s)) for s in (0, 1)]
        await until(0, 0)
        await until(1, 0)
        for i, move in enumerate(self.moves):
            seat = i % 2
            t = time.perf_counter_ns()
            await self.stub.SubmitMove(
                match_pb2.SubmitMoveRequest(match_id=match_id, move_json=move),
                metadata=meta[seat],
            )
            if i + 1 < len(self.moves):
                await until(1 - seat, i + 1)
            else:  # the last move: both feeds end with the match
                await asyncio.gather(*watchers)
            latencies.append(time.perf_counter_ns() - t)
        return len(self.moves)

    async def run(self, loops: int, seconds: float) -> dict[str, Any]:
        self.channel = grpc.aio.insecure_channel(self.address)
        self.stub = match_pb2_grpc.MatchServiceStub(self.channel)
        latencies: list[int] = []
        started = time.perf_counter()
        results = await asyncio.gather(
            *(self.loop(k, started + seconds, latencies) for k in range(loops))
        )
        elapsed = time.perf_counter() - started
        await self.channel.close()
        moves = sum(m for m, _ in results)
        return {
            "loops": loops,
            "moves": moves,
            "games": sum(g for _, g in results),
            "seconds": elapsed,
            "moves_per_s": moves / elapsed,
            "latency": summary_ms(latencies),
        }


class _PlayLoops(_Loops):
    """The same loops over ``PlayMatch``: one stream per seat, which both
    follows the match and carries the seat's moves."""

    async def game(self, players: list[str], meta: list[Any], latencies: list[int]) -> int:
        created = await self.stub.CreateMatch(
            match_pb2.CreateMatchRequest(game=GAME, players=players), metadata=meta[0]
        )
        match_id = created.match_id
        seen = [-1, -1]
        changed = [asyncio.Event(), asyncio.Event()]
        calls = [self.stub.PlayMatch(metadata=meta[s]) for s in (0, 1)]
        opening = match_pb2.PlayRequest(open=match_pb2.PlayOpen(match_id=match_id))

        async def follow(seat: int) -> None:
            async for f in calls[seat]:
                kind = f.WhichOneof("kind")
                if kind == "commit":
                    seen[seat] = f.commit.version
                    changed[seat].set()
                elif kind == "error":
                    raise RuntimeError(f"move {f.ref} refused: {f.error.reason}")

        async def until(seat: int, version: int) -> None:
            while seen[seat] < version:
                changed[seat].clear()
                await changed[seat].wait()

        for call in calls:
            await call.write(opening)
        watchers = [asyncio.ensure_future(follow(s)) for s in (0, 1)]
        await until(0, 0)
        await until(1, 0)
        for i, move in enumerate(self.moves):
            seat = i % 2
            t = time.perf_counter_ns()
            await calls[seat].write(
                match_pb2.PlayRequest(move=match_pb2.PlayMove(ref=str(i), move_json=move))
            )
            if i + 1 < len(self.moves):
                await until(1 - seat, i + 1)
            else:  # the last move: both streams end with the match
                await asyncio.gather(*watchers)
            latencies.append(time.perf_counter_ns() - t)
        return len(self.moves)


DRIVERS: dict[str, type[_Loops]] = {"unary": _Loops, "play": _PlayLoops}
"""How our clients talk to the match service: ``unary``: ``SubmitMove`` and
a ``WatchMatch`` per seat; ``play``: one ``PlayMatch`` stream per seat."""
NODE_PLAY = "play_node"
"""The ``play`` path driven from Node (``tabletop_driver.js``, @grpc/grpc-js)
instead of this process: the clients in the same runtime as boardgame.io's."""
NODE_SESSION = "session_node"
"""From Node as ``play_node``, each seat one ``PlaySession`` stream kept from
game to game (as boardgame.io's one socket per seat): the match created on
the first seat's session, a subscription per seat and game."""
PATHS = ("unary", "play", NODE_PLAY, NODE_SESSION)
SKELETON = "skeleton"
"""Not our stack: the architecture's skeleton (``bench/skeleton.py``), the
same messages per move with no logic, driven as ``play_node`` is."""
SKELETON_SESSION = "skeleton_session"
"""The skeleton driven as ``session_node`` is: a ``PlaySession`` per seat."""
SWEEP_PATHS = (*PATHS, SKELETON, SKELETON_SESSION)
ROOT = Path(__file__).resolve().parents[1]


def _children_cpu_s() -> float:
    """User + system CPU seconds of this process's waited-for children."""
    r = resource.getrusage(resource.RUSAGE_CHILDREN)
    return r.ru_utime + r.ru_stime


def _drive_ours_from_node(
    address: str, loops: int, seconds: float, mode: str = "play"
) -> dict[str, Any]:
    """``tabletop_driver.js`` against the match service at ``address``;
    ``mode``: ``play`` (a ``PlayMatch`` per seat and game) or ``session``
    (a ``PlaySession`` per seat)."""
    folder = ensure_node_modules()
    tokens = Tokens(AuthSettings(secret=SECRET))
    players = [
        [[p, tokens.issue(p)] for p in (f"guest:bench-{k}-x", f"guest:bench-{k}-o")]
        for k in range(loops)
    ]
    args = [str(ROOT / "protos"), address, str(loops), str(seconds), mode]
    return _run_driver(folder, "tabletop_driver.js", args, seconds, json.dumps(players))


def _profilers(pids: dict[str, int], folder: Path, seconds: float) -> list[subprocess.Popen[bytes]]:
    """py-spy recording the match and rules services for ``seconds`` (flame
    graphs ``<name>.svg`` and collapsed stacks ``<name>.txt`` in ``folder``)."""
    spy = shutil.which("py-spy") or str(Path(sys.executable).parent / "py-spy")
    folder.mkdir(parents=True, exist_ok=True)
    out = []
    for name in ("match", "rules"):
        for fmt, ext in (("flamegraph", "svg"), ("raw", "txt")):
            out.append(
                subprocess.Popen(
                    [spy, "record", "--pid", str(pids[name]), "--duration", str(int(seconds)),
                     "--rate", "250", "--format", fmt, "--output", str(folder / f"{name}.{ext}")],
                    stdout=subprocess.DEVNULL,
                    stderr=subprocess.DEVNULL,
                )
            )  # fmt: skip
    return out


def run_ours(
    loops: int,
    seconds: float,
    env: dict[str, str] | None = None,
    profile: Path | None = None,
    source: Path | None = None,
    path: str = "unary",
    marks: Path | None = None,
) -> dict[str, Any]:
    """Our stack on the workload; ``env``: extra settings of the services;
    ``profile``: a folder for py-spy profiles of the match and rules services;
    ``source``: run the services from that checkout (default this one);
    ``path``: the clients' calls (``DRIVERS``, ``NODE_PLAY`` or ``NODE_SESSION``);
    ``marks``: a folder for the services' marks (``bench.marks``)."""
    cwd = None if source is None else str(source)
    launcher = () if marks is None else ("bench.marks", str(marks))
    saved = dict(os.environ)
    if not services.GRPC_EXPERIMENTS_BY_OPERATOR:
        # set by this process's own import of ``services``: the services
        # started here (perhaps another revision's) set theirs themselves
        os.environ.pop("GRPC_EXPERIMENTS", None)
    os.environ.update(env or {})
    try:
        with NatsServer() as nats, ValkeyServer() as valkey:
            rules, rules_addr = _start_rules(1, cwd, launcher)
            proc, address = _start_service(nats, valkey, rules_addr, cwd, launcher)
            pids = {
                "match": proc.pid,
                "rules": rules.pid,
                "nats": nats.pid,
                "valkey": valkey.pid,
            }
            try:
                node = {NODE_PLAY: "play", NODE_SESSION: "session"}.get(path)
                if node is not None:
                    _drive_ours_from_node(address, 2, 0.5, node)  # warm up
                else:
                    asyncio.run(DRIVERS[path](address).run(2, 0.5))  # warm up
                spies = _profilers(pids, profile, seconds) if profile else []
                measured_from_ns = time.monotonic_ns()  # after the warm-up
                before = {k: _cpu_s(p) for k, p in pids.items()}
                if node is not None:
                    client0 = _children_cpu_s()
                    figures = _drive_ours_from_node(address, loops, seconds, node)
                    client = _children_cpu_s() - client0
                else:
                    client0 = time.process_time()
                    figures = asyncio.run(DRIVERS[path](address).run(loops, seconds))
                    client = time.process_time() - client0
                after = {k: _cpu_s(p) for k, p in pids.items()}
                for spy in spies:
                    spy.wait(60)
            finally:
                proc.terminate()
                proc.wait(15)
                rules.terminate()
                rules.wait(15)
    finally:
        os.environ.clear()
        os.environ.update(saved)
    moves = max(1, figures["moves"])
    cpu = {k: (after[k] - before[k]) * 1000 / moves for k in pids}
    cpu["total_servers"] = sum(cpu.values())
    figures["cpu_ms_per_move"] = cpu
    figures["client_cpu_ms_per_move"] = client * 1000 / moves
    figures["path"] = path
    figures["measured_from_ns"] = measured_from_ns
    return figures


# ---------------------------------------------------------------- sweep
def _run_path(loops: int, seconds: float, path: str) -> dict[str, Any]:
    if path in (SKELETON, SKELETON_SESSION):
        from bench.skeleton import run_skeleton

        return run_skeleton(loops, seconds, "play" if path == SKELETON else "session")
    return run_ours(loops, seconds, path=path)


def run(
    loops: tuple[int, ...] = LOOPS,
    seconds: float = 5.0,
    repeat: int = 1,
    paths: tuple[str, ...] = SWEEP_PATHS,
) -> dict[str, Any]:
    """Both stacks for each ``G``, ``repeat`` times: boardgame.io before and
    after our stack's paths (``bracketed``: the ratios are to the mean of
    the two, so that the machine's drift over the minute our paths take
    weighs on both sides alike), our paths in turn, forward for one ``G``
    and backward for the next. Our stack once per
    path: ``tabletop`` and the ratios without a suffix are the ``unary`` path,
    ``tabletop_play`` and the ratios ending in ``_play`` the ``play`` path;
    ``tabletop_skeleton`` is the architecture's skeleton (``SKELETON``), and
    ``play_node_over_skeleton`` our play path's throughput against it."""
    try:
        folder = ensure_node_modules()
    except Skipped as e:
        return {"skipped": str(e)}
    rows = []
    for r in range(repeat):
        for g in loops:
            ours: dict[str, Any] = {}
            before = run_peer(folder, g, seconds)
            for path in paths if (r + loops.index(g)) % 2 == 0 else reversed(paths):
                ours[path] = _run_path(g, seconds, path)
            peer = bracketed(before, run_peer(folder, g, seconds))
            row: dict[str, Any] = {"loops": g, "boardgameio": peer}
            for path in paths:
                suffix = "" if path == "unary" else f"_{path}"
                row[f"tabletop{suffix}"] = ours[path]
                row[f"throughput_over_boardgameio{suffix}"] = (
                    ours[path]["moves_per_s"] / peer["moves_per_s"]
                )
                row[f"server_cpu_over_boardgameio{suffix}"] = (
                    ours[path]["cpu_ms_per_move"]["total_servers"]
                    / peer["cpu_ms_per_move"]["server"]
                )
            if NODE_PLAY in ours and SKELETON in ours:
                row["play_node_over_skeleton"] = (
                    ours[NODE_PLAY]["moves_per_s"] / ours[SKELETON]["moves_per_s"]
                )
            if NODE_SESSION in ours and SKELETON_SESSION in ours:
                row["session_node_over_skeleton_session"] = (
                    ours[NODE_SESSION]["moves_per_s"] / ours[SKELETON_SESSION]["moves_per_s"]
                )
            if NODE_PLAY in ours and NODE_SESSION in ours:
                row["session_node_over_play_node"] = (
                    ours[NODE_SESSION]["moves_per_s"] / ours[NODE_PLAY]["moves_per_s"]
                )
            rows.append(row)
    return {
        "workload": "tic-tac-toe 9-move draw, create and join included, a live feed per seat",
        "seconds_per_run": seconds,
        "versions": node_versions(folder),
        "load_average": os.getloadavg(),
        "runs": rows,
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.boardgameio", description=__doc__)
    parser.add_argument("--loops", default=",".join(map(str, LOOPS)), help="values of G")
    parser.add_argument("--seconds", type=float, default=5.0, help="per stack and G")
    parser.add_argument("--repeat", type=int, default=1)
    parser.add_argument("--only", choices=("ours", "peer"), help="one stack only")
    parser.add_argument(
        "--profile", type=Path, help="with --only ours: py-spy profiles of the services here"
    )
    parser.add_argument(
        "--path",
        choices=(*SWEEP_PATHS, "all"),
        default="all",
        help="our clients' calls: unary (SubmitMove + WatchMatch per seat), "
        "play (one PlayMatch stream per seat), play_node (the same from Node), "
        "session_node (one PlaySession per seat, from Node), skeleton (the "
        "architecture's messages alone, bench/skeleton.py), skeleton_session (it on "
        "sessions), or all",
    )
    args = parser.parse_args(argv)
    loops = tuple(int(x) for x in args.loops.split(","))
    paths = SWEEP_PATHS if args.path == "all" else (args.path,)
    if args.only == "ours":
        out: Any = [
            _run_path(g, args.seconds, path)
            if path in (SKELETON, SKELETON_SESSION)
            else run_ours(
                g,
                args.seconds,
                profile=args.profile and args.profile / f"G{g}-{path}",
                path=path,
            )
            for g in loops
            for _ in range(args.repeat)
            for path in paths
        ]
    elif args.only == "peer":
        folder = ensure_node_modules()
        out = [run_peer(folder, g, args.seconds) for g in loops for _ in range(args.repeat)]
    else:
        out = run(loops, args.seconds, args.repeat, paths)
    print(json.dumps(out, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
