"""Stopping background tasks within a bound.

``task.cancel(); await task`` waits for ever when the task swallows its
cancellation (a library that turns a cancel into a timeout, or an
``asyncio.wait_for`` racing its inner future on Python 3.11) and loops on:
a service's stop must end. ``cancel_and_wait`` cancels again until the task
is done or the bound has passed, and says which task would not stop.
"""

from __future__ import annotations

import asyncio
from typing import Any

from services.common.logging import get_logger

log = get_logger("tasks")


async def cancel_and_wait(task: asyncio.Task[Any] | None, timeout: float = 5.0) -> bool:
    """Cancel ``task`` and wait for it (True once it is done)."""
    if task is None or task.done():
        return True
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout
    while not task.done():
        task.cancel()
        left = deadline - loop.time()
        if left <= 0:
            log.warning("task_did_not_stop", task=task.get_name())
            return False
        await asyncio.wait([task], timeout=min(0.5, left))
    if not task.cancelled() and task.exception() is not None:
        log.warning(
            "task_failed_while_stopping", task=task.get_name(), error=repr(task.exception())
        )
    return True
