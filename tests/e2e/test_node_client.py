"""A client in a second language, kept under test: the Node client of
``clients/node`` plays a whole Dwarves Duel (hidden hands) from both seats
against the real stack, started as ``make run`` starts it, and checks that no
seat ever sees the other's hand. Its packages come from the npm registry,
installed by this test with ``npm ci`` into a cache folder keyed by the lock
file (``$XDG_CACHE_HOME/tabletop/node/<hash>``, by default under
``~/.cache``), so a second run installs nothing.

Skipped, saying why, when ``node`` or ``npm`` is not on the machine; under
``CI=true`` a missing ``node`` is a failure, not a skip.
"""

from __future__ import annotations

import fcntl
import hashlib
import json
import os
import shutil
import subprocess
import time
import urllib.request
from pathlib import Path

import pytest

from services.cli.stack import Stack, StackSettings
from services.common.auth import DEV_SECRET
from tests.waiting import wait_until

pytestmark = pytest.mark.timeout(600)

ROOT = Path(__file__).resolve().parents[2]
CLIENT = ROOT / "clients" / "node"


def _tools() -> tuple[str, str]:
    node, npm = shutil.which("node"), shutil.which("npm")
    if node and npm:
        return node, npm
    missing = "node" if not node else "npm"
    if os.environ.get("CI") == "true":
        pytest.fail(f"CI=true but `{missing}` is not on PATH: the Node client test must run in CI")
    pytest.skip(f"`{missing}` is not on PATH: the Node client test needs Node.js 18+ and npm")


def node_modules(npm: str) -> Path:
    """``npm ci`` of the client's lock file into the cache (once per lock)."""
    lock = (CLIENT / "package-lock.json").read_bytes()
    digest = hashlib.sha256(lock + (CLIENT / "package.json").read_bytes()).hexdigest()[:16]
    cache = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache")
    prefix = cache / "tabletop" / "node" / digest
    stamp = prefix / ".installed"
    prefix.mkdir(parents=True, exist_ok=True)
    with open(prefix / ".lock", "w") as lock:  # two test runs at once install once
        fcntl.flock(lock, fcntl.LOCK_EX)
        if not stamp.exists():
            for name in ("package.json", "package-lock.json"):
                shutil.copyfile(CLIENT / name, prefix / name)
            done = subprocess.run(
                [npm, "ci", "--no-audit", "--no-fund", "--ignore-scripts", "--prefix", str(prefix)],
                capture_output=True,
                text=True,
                timeout=300,
                check=False,
            )
            assert done.returncode == 0, f"npm ci failed:\n{done.stdout}\n{done.stderr}"
            stamp.touch()
    return prefix / "node_modules"


def metrics(port: int) -> dict[str, float]:
    body = urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=5).read().decode()
    out: dict[str, float] = {}
    for line in body.splitlines():
        if line and not line.startswith("#"):
            name, _, value = line.rpartition(" ")
            out[name] = float(value)
    return out


def run_script(node: str, modules: Path, script: str, address: str) -> dict:
    """Run one of the client's scripts on Dwarves Duel; its JSON line."""
    run = subprocess.run(
        [node, str(CLIENT / script), address, "dwarves_duel"],
        env={**os.environ, "NODE_PATH": str(modules)},
        capture_output=True,
        text=True,
        timeout=400,
        check=False,
    )
    assert run.returncode == 0, f"{run.stdout}\n{run.stderr}"
    return json.loads(run.stdout.strip().splitlines()[-1])


def play(node: str, modules: Path, script: str, address: str) -> dict:
    """Run one of the client's scripts (a whole Dwarves Duel) and read its
    JSON line: a whole match played, every move a version, an outcome."""
    result = run_script(node, modules, script, address)
    assert result["moves"] > 10 and result["version"] == result["moves"]
    assert result["outcome"]["ranks"], result
    return result


def rpc_count(port: int, method: str, code: str = "OK") -> float:
    """The match service's count of ``method`` calls ended with ``code``."""
    service = "tabletop.match.v1.MatchService"
    key = f'tabletop_rpc_seconds_count{{code="{code}",method="{method}",service="{service}"}}'
    return metrics(port).get(key, 0.0)


def test_the_node_client_plays_dwarves_duel_from_both_seats(tmp_path: Path) -> None:
    node, npm = _tools()
    modules = node_modules(npm)
    # The development secret, to see the stack warn of it on its console.
    settings = StackSettings.ephemeral(tmp_path / "data", jwt_secret=DEV_SECRET)
    console: list[str] = []
    stack = Stack(settings, echo=console.append)
    stack.start()
    try:
        assert any("WARNING" in x and "development secret" in x for x in console), console
        match_log = [json.loads(x) for x in (stack.data_dir / "logs" / "match.log").open()]
        assert {"event": "dev_jwt_secret", "level": "warning"}.items() <= next(
            r for r in match_log if r["event"] == "dev_jwt_secret"
        ).items()
        result = play(node, modules, "play.js", stack.endpoints()["match"])
        assert result["rejections"] == {
            "anonymous": "missing_token",
            "forged": "invalid_token",
            "missing": "match_not_found",
            "off_turn": "not_your_turn",
            "stale": "stale_version",
            "stale_current": "1",
        }
        checks = result["checks"]
        assert checks["views"] == 2 * (result["version"] + 1)
        assert checks["watched"] == 2 * (result["version"] + 1)
        assert checks["hidden"] > 0, "there were hidden cards to keep hidden"

        # The operator's side of the same match: every RPC counted, the
        # watches closed once the client has gone.
        match_port = settings.metrics_ports[1]

        def count(method: str, code: str = "OK") -> float:
            return rpc_count(match_port, method, code)

        # (a call is counted as it ends, a stream once the server closed it:
        # wait for the counts rather than read them at once)
        wait_until(lambda: count("GetMatch") >= checks["views"], what="GetMatch count")
        wait_until(lambda: count("SubmitMove") == result["moves"], what="SubmitMove count")
        wait_until(lambda: count("WatchMatch") == 2, what="WatchMatch count")
        wait_until(lambda: count("SubmitMove", "ABORTED") == 1, what="ABORTED count")
        deadline = time.monotonic() + 10
        while any(
            v != 0
            for k, v in metrics(match_port).items()
            if k.startswith("tabletop_match_watchers_connected")
        ):
            assert time.monotonic() < deadline, "watchers_connected stays above 0"
            time.sleep(0.1)
    finally:
        stack.stop()


def test_the_node_client_plays_a_match_over_play_match_streams(tmp_path: Path) -> None:
    """``play_stream.js``: a PlayMatch stream per seat carries the moves and
    the live commits; refusals are error frames and the streams stay open."""
    node, npm = _tools()
    modules = node_modules(npm)
    settings = StackSettings.ephemeral(tmp_path / "data")
    stack = Stack(settings, echo=lambda _line: None)
    stack.start()
    try:
        result = play(node, modules, "play_stream.js", stack.endpoints()["match"])
        assert result["refusals"] == {
            "off_turn": "not_your_turn",
            "off_turn_code": "FAILED_PRECONDITION",
            "stale": "stale_version",
            "stale_current": "0",
        }
        checks = result["checks"]
        assert checks["watched"] == 2 * (result["version"] + 1)
        assert checks["hidden"] > 0, "there were hidden cards to keep hidden"
        # each move was answered by its own commit frame
        assert checks["answered_by_commit"] == result["moves"]

        # Every move went over the streams: no SubmitMove at all.
        match_port = settings.metrics_ports[1]

        def count(method: str, code: str = "OK") -> float:
            return rpc_count(match_port, method, code)

        wait_until(lambda: count("PlayMatch") == 2, what="PlayMatch count")
        assert count("SubmitMove") == 0
    finally:
        stack.stop()


def test_the_node_client_plays_two_matches_at_once_on_one_session_per_player(
    tmp_path: Path,
) -> None:
    """``play_session.js``: one PlaySession per player creates two matches,
    follows and plays both at once (seat and legal moves from the commits'
    turns), never sees the other's hand, and ends when both matches have."""
    node, npm = _tools()
    modules = node_modules(npm)
    settings = StackSettings.ephemeral(tmp_path / "data")
    stack = Stack(settings, echo=lambda _line: None)
    stack.start()
    try:
        result = run_script(node, modules, "play_session.js", stack.endpoints()["match"])
        assert len(set(result["match_ids"])) == 2
        assert all(m > 10 for m in result["moves"]) and result["versions"] == result["moves"]
        assert all(o["ranks"] for o in result["outcomes"]), result
        assert result["refusals"] == {
            "off_turn": "not_your_turn",
            "not_subscribed": "not_subscribed",
        }
        checks = result["checks"]
        assert checks["watched"] == 2 * sum(v + 1 for v in result["versions"])
        assert checks["hidden"] > 0, "there were hidden cards to keep hidden"
        assert checks["answered_by_commit"] == sum(result["moves"])

        # Everything went over the two sessions: no other call of the match service.
        match_port = settings.metrics_ports[1]

        def count(method: str, code: str = "OK") -> float:
            return rpc_count(match_port, method, code)

        wait_until(lambda: count("PlaySession") == 2, what="PlaySession count")
        for method in ("CreateMatch", "PlayMatch", "SubmitMove", "GetMatch"):
            assert count(method) == 0, method
    finally:
        stack.stop()
