"""The move prompt at a real terminal: a line typed comes back, lines typed
ahead are not lost, Ctrl-D ends the input, and Ctrl-C leaves at once even
when the kernel hands SIGINT to a thread other than the one reading (as it
may when gRPC's threads run)."""

from __future__ import annotations

import asyncio
import contextlib
import io
import os
import pty
import select
import signal
import sys
import textwrap
import time
from pathlib import Path

import pytest
from rich.console import Console

from services.cli.prompt import read_line

ROOT = Path(__file__).resolve().parents[3]

CHILD = textwrap.dedent(
    """
    import signal, sys, threading
    from rich.console import Console
    from services.cli.prompt import read_line

    if "--other-thread" in sys.argv:
        # A thread that takes signals, then a main thread that does not: the
        # kernel must hand Ctrl-C's SIGINT to the other thread.
        threading.Thread(target=threading.Event().wait, daemon=True).start()
        signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT})
    console = Console()
    try:
        for _ in range(int(sys.argv[1])):
            print("got", repr(read_line(console, "move: ")), flush=True)
    except KeyboardInterrupt:
        print("interrupted", flush=True)
        sys.exit(130)
    except EOFError:
        print("end of input", flush=True)
        sys.exit(3)
    """
)


class Terminal:
    """A child Python process on its own pseudo-terminal."""

    def __init__(self, *args: str) -> None:
        self.pid, self.fd = pty.fork()
        if self.pid == 0:  # pragma: no cover - the child
            os.chdir(ROOT)
            os.execv(sys.executable, [sys.executable, "-c", CHILD, *args])
        self.out = b""

    def read_until(self, text: bytes, seconds: float = 30) -> None:
        deadline = time.monotonic() + seconds
        while text not in self.out:
            assert time.monotonic() < deadline, f"no {text!r} in {self.out!r}"
            self._drain(0.1)

    def _drain(self, seconds: float) -> None:
        if select.select([self.fd], [], [], seconds)[0]:
            with contextlib.suppress(OSError):  # the child is gone
                self.out += os.read(self.fd, 4096)

    def type(self, keys: bytes) -> None:
        os.write(self.fd, keys)

    def exit_code(self, seconds: float = 10) -> int:
        """The child's exit code; fails if it is still running after ``seconds``."""
        deadline = time.monotonic() + seconds
        while True:
            self._drain(0.05)
            done, status = os.waitpid(self.pid, os.WNOHANG)
            if done:
                return os.waitstatus_to_exitcode(status)
            if time.monotonic() > deadline:
                os.kill(self.pid, signal.SIGKILL)
                os.waitpid(self.pid, 0)
                pytest.fail(f"still waiting {seconds} s after the keys: {self.out!r}")


def test_a_line_typed_comes_back_without_its_newline() -> None:
    t = Terminal("1")
    t.read_until(b"move: ")
    t.type(b"  3 \n")
    assert t.exit_code() == 0
    assert b"got '  3 '" in t.out


def test_lines_typed_ahead_each_come_back_in_turn() -> None:
    t = Terminal("2")
    t.read_until(b"move: ")
    t.type(b"1\n2\n")
    assert t.exit_code() == 0
    assert t.out.index(b"got '1'") < t.out.index(b"got '2'")


def test_ctrl_d_ends_the_input() -> None:
    t = Terminal("1")
    t.read_until(b"move: ")
    t.type(b"\x04")
    assert t.exit_code() == 3
    assert b"end of input" in t.out


@pytest.mark.parametrize(
    "args", [("1",), ("1", "--other-thread")], ids=["main_thread", "another_thread"]
)
def test_ctrl_c_leaves_at_once_whichever_thread_takes_it(args: tuple[str, ...]) -> None:
    t = Terminal(*args)
    t.read_until(b"move: ")
    t.type(b"\x03")
    assert t.exit_code() == 130
    assert b"interrupted" in t.out


def test_a_pipe_gives_its_lines_and_then_the_end_of_input() -> None:
    console = Console(file=io.StringIO())
    stdin = io.StringIO("q\r\n")
    assert read_line(console, "move: ", stdin) == "q"
    with pytest.raises(EOFError):
        read_line(console, "move: ", stdin)
    assert console.file.getvalue() == "move: move: "


def test_a_ctrl_c_asyncio_took_just_before_the_prompt_leaves_without_reading() -> None:
    """asyncio's handler only asks the task to stop; the prompt must not then
    wait for a line first."""
    console = Console(file=io.StringIO())
    stdin = io.StringIO("1\n")

    async def play() -> None:
        asyncio.current_task().cancel()  # what asyncio's SIGINT handler does
        read_line(console, "move: ", stdin)

    with pytest.raises(KeyboardInterrupt):
        asyncio.run(play())
    assert stdin.read() == "1\n", "nothing was read"
    assert console.file.getvalue() == ""
