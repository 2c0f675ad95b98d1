"""``make run``'s logs rotate by size while the services keep writing."""

from __future__ import annotations

import os

from services.cli.stack import rotate_log


def test_a_log_past_its_size_is_copied_and_truncated_keeping_n(tmp_path) -> None:
    path = tmp_path / "match.log"
    writer = open(path, "ab", buffering=0)  # noqa: SIM115 - held open as a service holds it
    try:
        assert not rotate_log(path, max_bytes=100, keep=2)  # missing or small: no-op
        for generation in range(4):
            writer.write(f"{generation}".encode() * 150 + b"\n")
            assert rotate_log(path, max_bytes=100, keep=2)
            assert path.stat().st_size == 0
        writer.write(b"after\n")  # the writer goes on at the new end
    finally:
        writer.close()
    assert path.read_bytes() == b"after\n"
    assert (tmp_path / "match.log.1").read_bytes().startswith(b"3" * 150)
    assert (tmp_path / "match.log.2").read_bytes().startswith(b"2" * 150)
    assert not (tmp_path / "match.log.3").exists()
    assert not rotate_log(path, max_bytes=100, keep=2)
    assert sorted(os.listdir(tmp_path)) == ["match.log", "match.log.1", "match.log.2"]


def test_the_supervisors_lines_reach_a_pipe_as_they_are_written(tmp_path) -> None:
    """``make run > file`` (or under another supervisor) shows the endpoints
    while the stack runs: each line is flushed, not held in the buffer a
    pipe or a file gets until the process exits."""
    import subprocess
    import sys

    script = (
        "import time\n"
        "from services.cli.stack import Stack, StackSettings\n"
        "Stack(StackSettings.from_env()).echo('Tabletop is up.')\n"
        "time.sleep(60)\n"
    )
    proc = subprocess.Popen(
        [sys.executable, "-c", script],
        cwd=tmp_path,
        stdout=subprocess.PIPE,
        text=True,
        env={**os.environ, "PYTHONUNBUFFERED": ""},
    )
    try:
        line = _line_within(proc, seconds=20)
    finally:
        proc.kill()
        proc.wait()
    assert line == "Tabletop is up.\n"


def _line_within(proc, seconds: float) -> str:
    """The process's first line of output, or "" if none came in time (it
    is still running: a line held in its buffer never comes)."""
    import selectors

    with selectors.DefaultSelector() as sel:
        sel.register(proc.stdout, selectors.EVENT_READ)
        if not sel.select(timeout=seconds):
            return ""
    return proc.stdout.readline()
