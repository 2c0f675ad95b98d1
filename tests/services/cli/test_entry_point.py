"""The installed ``tabletop`` command, run the way the README says: from a new
terminal (no ``PYTHONPATH``), in a directory outside the checkout."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from services.common.servers import free_port

TABLETOP = Path(sys.prefix) / "bin" / "tabletop"


def run_installed(*args: str, home: Path, timeout: float = 120) -> subprocess.CompletedProcess[str]:
    env = {
        k: v for k, v in os.environ.items() if k != "PYTHONPATH" and not k.startswith("TABLETOP_")
    }
    # Nothing listens on these ports, whatever else runs on the machine.
    env |= {
        "HOME": str(home),
        "XDG_CONFIG_HOME": str(home / ".config"),
        "COLUMNS": "100",
        "TABLETOP_RULES_ADDR": f"127.0.0.1:{free_port()}",
        "TABLETOP_MATCH_ADDR": f"127.0.0.1:{free_port()}",
    }
    return subprocess.run(
        [str(TABLETOP), *args],
        cwd=home,
        env=env,
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
    )


@pytest.fixture
def home(tmp_path: Path) -> Path:
    return tmp_path


def test_the_entry_point_is_installed() -> None:
    assert TABLETOP.is_file() and os.access(TABLETOP, os.X_OK), f"{TABLETOP} is not installed"


def test_games_works_with_no_environment(home: Path) -> None:
    result = run_installed("games", home=home)
    assert result.returncode == 0, result.stderr
    assert "ModuleNotFoundError" not in result.stderr
    for game in ("dice_forge", "dwarves_duel", "arcane_academy", "tic_tac_toe"):
        assert game in result.stdout


def test_local_play_works_with_no_environment(home: Path) -> None:
    result = run_installed("local", "tic_tac_toe", home=home)
    assert result.returncode == 0, result.stderr
    assert "result after 9 moves" in result.stdout
    assert "X" in result.stdout and "O" in result.stdout, "the final board"


def test_local_auto_play_prints_a_line_per_round(home: Path) -> None:
    result = run_installed("local", "assault_of_the_giants", home=home)
    assert result.returncode == 0, result.stderr
    assert "round 1 done" in result.stdout
    assert len(result.stdout.splitlines()) < 100


def test_a_command_needing_the_stack_says_how_to_start_it(home: Path) -> None:
    result = run_installed("matches", home=home)
    assert result.returncode != 0
    assert "Traceback" not in result.stderr
    assert "make run" in result.stdout + result.stderr
