"""The CLI's tournament commands against a running stack (a subprocess, as a
person would run them)."""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys

from .conftest import SECRET


async def _tabletop(stack, tmp_path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {
        **os.environ,
        "TABLETOP_TOURNAMENTS_ADDR": stack.replicas[0].address,
        "TABLETOP_MATCH_ADDR": stack.match.address,
        "XDG_CONFIG_HOME": str(tmp_path),  # the CLI's saved identity
        "TABLETOP_JWT_SECRET": SECRET,
        "COLUMNS": "200",
    }
    return await asyncio.to_thread(
        subprocess.run,
        [sys.executable, "-m", "services.cli.main", "tournament", *args],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )


async def test_run_plays_a_whole_tournament_of_bots(stack, tmp_path):
    await stack.replica(players_may_create=True)
    out = await _tabletop(
        stack, tmp_path, "run", "--game", "tic_tac_toe", "--format", "swiss",
        "--rounds", "2", "--players", "5", "--bots",
    )  # fmt: skip
    assert out.returncode == 0, out.stdout + out.stderr
    assert "round 1" in out.stdout and "round 2" in out.stdout
    assert "2 rounds in" in out.stdout
    assert out.stdout.count("bot:") >= 5  # the standings table


async def test_create_register_start_show(stack, tmp_path):
    await stack.replica(players_may_create=True)
    made = await _tabletop(stack, tmp_path, "create", "--game", "tic_tac_toe",
                           "--format", "round_robin")  # fmt: skip
    assert made.returncode == 0, made.stderr
    tid = made.stdout.split()[1]
    reg = await _tabletop(stack, tmp_path, "register", tid, "--player", "bot:a",
                          "--player", "bot:b", "--player", "bot:c")  # fmt: skip
    assert reg.returncode == 0 and "3 registered" in reg.stdout, reg.stdout + reg.stderr
    again = await _tabletop(stack, tmp_path, "register", tid, "--player", "bot:a")
    assert again.returncode == 1 and "already_registered" in again.stdout + again.stderr
    started = await _tabletop(stack, tmp_path, "start", tid)
    assert started.returncode == 0 and "3 rounds" in started.stdout, started.stdout
    shown = await _tabletop(stack, tmp_path, "show", tid)
    assert shown.returncode == 0 and "round_robin" in shown.stdout, shown.stdout


async def test_run_an_elimination_of_tables(stack, tmp_path):
    await stack.replica(players_may_create=True)
    out = await _tabletop(
        stack, tmp_path, "run", "--game", "dice_forge", "--format", "single_elimination",
        "--table-size", "4", "--advance", "2", "--players", "8", "--bots",
    )  # fmt: skip
    assert out.returncode == 0, out.stdout + out.stderr
    assert "round 1" in out.stdout and "round 2" in out.stdout
    assert "2 rounds in" in out.stdout
