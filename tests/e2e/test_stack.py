"""The whole stack, started by the same code as ``make run``, on free ports in
a temporary folder: every game played to the end with ``tabletop play --auto``
against bots, a replay, a restart that keeps the matches, and the metrics."""

from __future__ import annotations

import os
import re
import subprocess
import sys
import urllib.request
from pathlib import Path

import pytest

from engine_core.registry import default_registry
from services.cli.stack import Stack, StackSettings
from tests.waiting import wait_until

pytestmark = pytest.mark.timeout(600)


def cli(stack: Stack, *args: str, timeout: float = 300) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, **stack.client_env(), "COLUMNS": "200"}
    return subprocess.run(
        [sys.executable, "-m", "services.cli.main", *args],
        env=env,
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
    )


def metric(port: int, name: str) -> float:
    body = urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=5).read().decode()
    total = 0.0
    for line in body.splitlines():
        if line.startswith(name) and not line.startswith("#"):
            total += float(line.rsplit(" ", 1)[1])
    return total


@pytest.fixture
def settings(tmp_path: Path) -> StackSettings:
    return StackSettings.ephemeral(
        tmp_path / "data", extra_env={"TABLETOP_MATCHMAKING_BOT_FILL_AFTER_S": "0.2"}
    )


def test_every_game_plays_through_the_stack_and_survives_a_restart(settings: StackSettings) -> None:
    lines: list[str] = []
    stack = Stack(settings, echo=lines.append)
    stack.start()
    try:
        for name, port in zip(
            ("rules", "match", "matchmaking", "bots"), settings.metrics_ports, strict=True
        ):
            assert any(f"{name} " in x and f":{port}/metrics" in x for x in lines), lines
        played = []
        for game in default_registry():
            result = cli(
                stack, "play", game.name, "--auto", "--quiet", "--players", str(game.min_players)
            )
            assert result.returncode == 0, f"{game.name}:\n{result.stdout}\n{result.stderr}"
            assert "game over" in result.stdout
            match = re.search(r"match (\S+)\n?", result.stdout.split("game over")[1])
            assert match, result.stdout
            played.append(match.group(1).rstrip(";"))
        replay = cli(stack, "replay", played[0])
        assert replay.returncode == 0, replay.stderr
        assert "finished" in replay.stdout
        # Every service's metrics endpoint answers and counted what was played.
        rules_port, match_port, mm_port, bots_port = settings.metrics_ports
        # (counters may be incremented just after an answer: wait for them)
        moves = wait_until(
            lambda: (
                (n := metric(match_port, "tabletop_match_submit_seconds_count")) >= 5 * len(played)
                and n
            ),
            what="the match service's submits",
        )
        wait_until(lambda: metric(rules_port, "tabletop_rules_rpc_seconds_count") >= moves)
        wait_until(lambda: metric(mm_port, "matchmaking_tickets_matched_total") >= len(played))
        wait_until(lambda: metric(bots_port, "bots_moves_total") > 0)
        wait_until(lambda: metric(match_port, "tabletop_match_finished_total") == len(played))
    finally:
        stack.stop()

    again = Stack(settings, echo=lines.append)
    again.start()
    try:
        for match_id in played:
            watch = cli(again, "replay", match_id)
            assert watch.returncode == 0, watch.stderr
            assert "finished" in watch.stdout, f"match {match_id} lost across a restart"
    finally:
        again.stop()


def test_a_dead_service_is_reported_with_its_log_and_the_stack_stops(
    settings: StackSettings,
) -> None:
    stack = Stack(settings, echo=lambda _line: None)
    stack.start()
    children = list(stack.children)
    try:
        assert stack.check() is None
        match = next(c for c in children if c.name == "match")
        assert match.proc is not None
        match.proc.kill()
        match.proc.wait(10)
        dead = stack.check()
        assert dead is match
        assert "match_service_started" in dead.log_tail(), "its last log lines are at hand"
    finally:
        stack.stop()
    assert not any(c.alive for c in children), "every other service is stopped too"
    assert stack.nats is not None and not stack.nats.running
