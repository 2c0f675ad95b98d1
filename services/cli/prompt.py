"""A line typed at the move prompt, and Ctrl-C that leaves at once.

The kernel hands a process's SIGINT to any of its threads that does not block
it. When one of gRPC's threads takes it, Python only notes the signal: its
handler runs in the main thread, which sleeps on in ``read()`` until the
player presses Enter. So at a terminal the main thread waits for the terminal
and for a wakeup pipe together: the signal writes a byte to the pipe whichever
thread takes it, the main thread wakes, and the handler raises
``KeyboardInterrupt`` there.

The event loop is blocked while the prompt waits: asyncio's own SIGINT
handler would only cancel the task once the read returned, so
``default_int_handler`` stands in for it from before the prompt is printed,
and a Ctrl-C asyncio's handler took just before counts too.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import select
import signal
import sys
from collections.abc import Iterator
from typing import TextIO

from rich.console import Console
from rich.text import Text


def read_line(console: Console, prompt: str, stdin: TextIO | None = None) -> str:
    """Print ``prompt`` (plain text) and return the line typed, without its
    newline. Ctrl-C raises ``KeyboardInterrupt`` at once; end of input raises
    ``EOFError``."""
    stdin = stdin or sys.stdin
    with sigint_raises(), wakeup_pipe() as wake:
        if _interrupted_before():
            raise KeyboardInterrupt
        console.print(Text(prompt), end="")
        if not stdin.isatty():
            line = stdin.readline()
            if not line:
                raise EOFError
            return line.rstrip("\r\n")
        return _read_terminal_line(stdin, wake)


def _interrupted_before() -> bool:
    """Whether a Ctrl-C came before the prompt took over: asyncio's handler
    then asked the running task to stop, which it would only do at its next
    ``await``, after the player's Enter."""
    try:
        task = asyncio.current_task()
    except RuntimeError:  # no event loop running
        return False
    return task is not None and task.cancelling() > 0


def _read_terminal_line(stdin: TextIO, wake: int | None) -> str:
    """One line from a terminal in canonical mode, where each ``read()`` gives
    at most one line, so nothing typed ahead waits in a buffer ``select``
    cannot see."""
    fd = stdin.fileno()
    watched = [fd] if wake is None else [fd, wake]
    data = b""
    while not data.endswith(b"\n"):
        ready, _, _ = select.select(watched, [], [])
        if wake is not None and wake in ready:
            # A signal, taken by any thread: its handler runs in this thread
            # before the next line of Python (Ctrl-C raises here).
            with contextlib.suppress(BlockingIOError):
                os.read(wake, 512)
        if fd in ready:
            chunk = os.read(fd, 4096)
            if not chunk:  # Ctrl-D, or the terminal gone
                if data:
                    break
                raise EOFError
            data += chunk
    return data.decode(stdin.encoding or "utf-8", errors="replace").rstrip("\r\n")


@contextlib.contextmanager
def sigint_raises() -> Iterator[None]:
    """Ctrl-C raises ``KeyboardInterrupt`` while the block runs (main thread
    only: elsewhere Python cannot set handlers, and the block runs as is)."""
    try:
        old = signal.signal(signal.SIGINT, signal.default_int_handler)
    except ValueError:
        yield
        return
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, old)


@contextlib.contextmanager
def wakeup_pipe() -> Iterator[int | None]:
    """The read end of a pipe every signal writes a byte to while the block
    runs (None outside the main thread, where Python cannot set it)."""
    r, w = os.pipe()
    try:
        os.set_blocking(r, False)
        os.set_blocking(w, False)
        try:
            old = signal.set_wakeup_fd(w, warn_on_full_buffer=False)
        except ValueError:
            yield None
            return
        try:
            yield r
        finally:
            signal.set_wakeup_fd(old)
    finally:
        os.close(r)
        os.close(w)
