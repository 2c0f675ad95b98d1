"""Turn clocks in the terminal: the time left per seat, and a live countdown
while the match waits.

Deadlines come from the server (``GetMatch.clocks``, UTC); the terminal's
own clock is corrected by the server's (``server_time``), so a countdown is
right even on a machine whose clock is off, and survives a reconnect (the
deadline is a fact of the match, not a timer of this process).
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import Awaitable
from datetime import datetime
from typing import Any

from rich.console import Console

from services.match.clocks import format_spec
from services.match.clocks import parse as parse_time_control


def check_clock_spec(spec: str) -> str:
    """The canonical text form of ``--clock`` (a bad one raises ``ValueError``)."""
    if not spec:
        return ""
    try:
        return format_spec(parse_time_control(spec))
    except Exception as e:  # InvalidArgument: shown to the user as it is
        raise ValueError(getattr(e, "message", str(e))) from None


def _ms(rfc3339: str) -> int:
    return int(datetime.fromisoformat(rfc3339.replace("Z", "+00:00")).timestamp() * 1000)


def skew_ms(m: Any) -> int:
    """Server time minus this machine's time, as of ``m`` (a GetMatchResponse)."""
    if not getattr(m, "server_time", ""):
        return 0
    return _ms(m.server_time) - int(time.time() * 1000)


def left_ms(deadline: str, skew: int) -> int:
    return max(0, _ms(deadline) - (int(time.time() * 1000) + skew))


def format_left(ms: int) -> str:
    s = ms // 1000
    if s >= 3600:
        return f"{s // 3600}:{s % 3600 // 60:02d}:{s % 60:02d}"
    return f"{s // 60}:{s % 60:02d}" if s >= 10 else f"{ms / 1000:.1f}s"  # tenths at the end


def clock_text(m: Any, seat: int | None, skew: int) -> str:
    """One line: every seat's clock (a countdown for the awaited ones)."""
    parts = []
    for c in m.clocks:
        who = "you" if seat is not None and c.seat == seat else f"seat {c.seat}"
        if c.deadline:
            text = f"{who} {format_left(left_ms(c.deadline, skew))}"
        elif c.HasField("remaining_ms"):
            text = f"{who} {format_left(c.remaining_ms)} (bank)"
        else:
            continue
        if c.taken_over:
            text += " [bot]"
        elif c.timeouts:
            text += f" [{c.timeouts} timeout{'s' if c.timeouts > 1 else ''}]"
        parts.append(text)
    return "clock: " + ", ".join(parts) if parts else ""


def print_clocks(console: Console, m: Any, seat: int | None) -> None:
    """The clocks once (before the player is asked for a move)."""
    line = clock_text(m, seat, skew_ms(m))
    if line:
        console.print(f"[bold yellow]{line}[/]")


async def wait_counting_down(console: Console, m: Any, seat: int | None, wait: Awaitable) -> None:
    """Await ``wait`` (the next commit) with a live countdown of the clocks."""
    if not any(c.deadline for c in m.clocks):
        console.print(f"[dim]waiting for seat(s) {list(m.awaiting)} ...[/]")
        await wait
        return
    skew = skew_ms(m)
    task = asyncio.ensure_future(wait)
    try:
        with console.status(clock_text(m, seat, skew)) as status:
            while not task.done():
                await asyncio.wait([task], timeout=0.2)
                status.update(
                    f"waiting for seat(s) {list(m.awaiting)}; {clock_text(m, seat, skew)}"
                )
        await task
    finally:
        if not task.done():
            task.cancel()
            with contextlib.suppress(BaseException):
                await task
