"""The installed ``tabletop`` command against a whole stack, as a newcomer
uses it: one identity across commands, Ctrl-C at the prompt, resume, watch,
queue-then-play, demo, and a saved token renewed before it expires."""

from __future__ import annotations

import contextlib
import json
import os
import pty
import re
import select
import signal
import stat
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from services.cli.identity import Credentials, Identity
from services.cli.stack import Stack, StackSettings
from services.common.auth import AuthSettings, Tokens

pytestmark = pytest.mark.timeout(600)
TABLETOP = str(Path(sys.prefix) / "bin" / "tabletop")
MATCH_ID = re.compile(r"\b[0-9a-z]{26}\b")


@pytest.fixture(scope="module")
def stack(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Stack]:
    settings = StackSettings.ephemeral(
        tmp_path_factory.mktemp("stack") / "data",
        jwt_secret="a-test-secret-for-the-cli-0123456789",
        extra_env={"TABLETOP_MATCHMAKING_BOT_FILL_AFTER_S": "0.2"},
    )
    stack = Stack(settings, echo=lambda _line: None)
    stack.start()
    try:
        yield stack
    finally:
        stack.stop()


@pytest.fixture
def env(stack: Stack, tmp_path: Path) -> dict[str, str]:
    """A new terminal: no PYTHONPATH, its own config directory, 80 columns."""
    base = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    return {
        **base,
        **stack.client_env(),
        "XDG_CONFIG_HOME": str(tmp_path / "config"),
        "COLUMNS": "80",
    }


def tabletop(env: dict[str, str], *args: str, timeout: float = 300) -> subprocess.CompletedProcess:
    result = subprocess.run(
        [TABLETOP, *args],
        env=env,
        cwd=env["XDG_CONFIG_HOME"].rsplit("/", 1)[0],
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
    )
    return result


def interrupt_at_prompt(env: dict[str, str], *args: str) -> tuple[int, str, float]:
    """Run in a terminal, press Ctrl-C at the first move prompt: (exit code,
    output, seconds from Ctrl-C to exit)."""
    pid, fd = pty.fork()
    if pid == 0:  # pragma: no cover - the child
        os.chdir(env["XDG_CONFIG_HOME"].rsplit("/", 1)[0])
        os.execve(TABLETOP, [TABLETOP, *args], env)
    out = b""
    deadline = time.monotonic() + 120
    while b"your move" not in out:
        assert time.monotonic() < deadline, out.decode(errors="replace")
        if select.select([fd], [], [], 0.5)[0]:
            out += os.read(fd, 65536)
    os.write(fd, b"\x03")
    pressed = time.monotonic()
    while True:
        if select.select([fd], [], [], 0.2)[0]:
            with contextlib.suppress(OSError):
                out += os.read(fd, 65536)
        done, status = os.waitpid(pid, os.WNOHANG)
        if done:
            return (
                os.waitstatus_to_exitcode(status),
                out.decode(errors="replace"),
                (time.monotonic() - pressed),
            )
        if time.monotonic() - pressed > 20:
            os.kill(pid, signal.SIGKILL)
            os.waitpid(pid, 0)
            pytest.fail(f"Ctrl-C at the prompt did not quit: {out.decode(errors='replace')}")


def test_one_player_across_commands(env: dict[str, str]) -> None:
    login = tabletop(env, "login", "--name", "Ann")
    assert login.returncode == 0, login.stdout + login.stderr
    me = re.search(r"guest:[0-9a-f]+", login.stdout).group(0)
    saved = Path(env["XDG_CONFIG_HOME"]) / "tabletop" / "credentials.json"
    assert stat.S_IMODE(saved.stat().st_mode) == 0o600
    assert me in tabletop(env, "whoami").stdout

    code, out, took = interrupt_at_prompt(env, "play", "tic_tac_toe", "--bots", "1")
    assert code == 130, out
    assert took < 5, f"Ctrl-C took {took:.1f} s"
    match_id = re.search(r"tabletop play --resume (\S+)", out).group(1)

    listed = tabletop(env, "matches")
    assert listed.returncode == 0, listed.stderr
    assert match_id in listed.stdout, "the id is printed whole at 80 columns"
    assert "active" in listed.stdout

    resumed = tabletop(env, "play", "--resume", match_id, "--auto")
    assert resumed.returncode == 0, resumed.stdout + resumed.stderr
    assert "game over" in resumed.stdout and me in resumed.stdout

    watched = tabletop(env, "watch", match_id, "--after", "0")
    assert watched.returncode == 0, watched.stderr
    assert "finished at version" in watched.stdout
    assert "marked cell" in watched.stdout

    assert tabletop(env, "logout").returncode == 0
    assert tabletop(env, "whoami").returncode == 1


def test_q_at_the_prompt_leaves_the_match(env: dict[str, str]) -> None:
    proc = subprocess.run(
        [TABLETOP, "play", "dwarves_duel", "--bots", "1"],
        env=env,
        input="q\n",
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert proc.returncode == 130, proc.stdout + proc.stderr
    assert "tabletop play --resume" in proc.stdout


def test_queue_finds_a_match_and_plays_it(env: dict[str, str]) -> None:
    result = tabletop(env, "queue", "dwarves_duel", "--bots", "--auto")
    assert result.returncode == 0, result.stdout + result.stderr
    assert "matched: match" in result.stdout
    assert "game over" in result.stdout
    assert len(result.stdout.splitlines()) < 300, "auto play prints a line per round"


def test_play_against_bots_of_a_chosen_level(env: dict[str, str]) -> None:
    result = tabletop(env, "play", "tic_tac_toe", "--bots", "1", "--level", "search", "--auto")
    assert result.returncode == 0, result.stdout + result.stderr
    assert re.search(r"seat \d bot:search-1: rank", result.stdout), result.stdout
    refused = tabletop(env, "queue", "tic_tac_toe", "--bots", "--level", "expert")
    assert refused.returncode != 0 and "invalid choice" in refused.stderr


def test_demo_prints_its_match_ids_and_whole_match_move_counts(env: dict[str, str]) -> None:
    result = tabletop(env, "demo", "tic_tac_toe")
    assert result.returncode == 0, result.stdout + result.stderr
    line = next(x for x in result.stdout.splitlines() if "tic_tac_toe:" in x)
    match_id = MATCH_ID.search(line).group(0)
    moves = int(re.search(r"(\d+) moves", line).group(1))
    assert 5 <= moves <= 9, line  # both seats' moves, not one seat's
    replay = tabletop(env, "replay", match_id)
    assert replay.returncode == 0 and "finished at version" in replay.stdout
    assert f"finished at version {moves}" in replay.stdout


def test_a_saved_token_near_expiry_is_renewed_for_the_same_player(
    stack: Stack, env: dict[str, str]
) -> None:
    tokens = Tokens(AuthSettings(secret=stack.s.jwt_secret or ""))
    player = "guest:0123456789abcdef"
    old = tokens.issue(player, ttl_s=60)
    credentials = Credentials(Path(env["XDG_CONFIG_HOME"]) / "tabletop" / "credentials.json")
    address = env["TABLETOP_MATCH_ADDR"]
    credentials.put(address, Identity(player_id=player, token=old))
    result = tabletop(env, "matches")
    assert result.returncode == 0, result.stdout + result.stderr
    assert player in result.stdout
    renewed = credentials.get(address)
    assert renewed is not None and renewed.player_id == player
    assert renewed.token != old
    assert renewed.expires_at - time.time() > 6 * 24 * 3600
    saved = json.loads(credentials.path.read_text())
    assert list(saved) == [address]


@pytest.mark.parametrize(
    "command",
    [("matches",), ("play", "tic_tac_toe", "--bots", "1", "--auto")],
    ids=["matches", "play"],
)
def test_a_saved_token_this_stack_did_not_sign_is_forgotten(
    stack: Stack, env: dict[str, str], command: tuple[str, ...]
) -> None:
    """A sign-in saved from another stack (another checkout's ``make run``
    signs with its own secret): refused, forgotten, and the next run signs
    in as a new guest, whichever service refused it first."""
    stranger = Tokens(AuthSettings(secret="some-other-stack-secret-0123456789abcdef"))
    credentials = Credentials(Path(env["XDG_CONFIG_HOME"]) / "tabletop" / "credentials.json")
    address = env["TABLETOP_MATCH_ADDR"]
    credentials.put(address, Identity(player_id="guest:feed", token=stranger.issue("guest:feed")))
    refused = tabletop(env, *command)
    assert refused.returncode == 1, refused.stdout + refused.stderr
    assert "invalid_token" in refused.stdout and "forgotten" in refused.stdout
    assert credentials.get(address) is None
    again = tabletop(env, *command)
    assert again.returncode == 0, again.stdout + again.stderr
    assert "signed in as a new guest" in again.stdout
