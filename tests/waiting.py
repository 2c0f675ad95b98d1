"""Waiting for a condition instead of for luck: a test that reads a metric,
a log line or a stream after a call polls until what it expects is there
(or a generous timeout passes, on a loaded machine)."""

from __future__ import annotations

import asyncio
import inspect
import time
from collections.abc import Callable
from typing import Any, TypeVar

T = TypeVar("T")


def wait_until(
    condition: Callable[[], T], timeout: float = 20.0, every: float = 0.05, what: str = ""
) -> T:
    """Call ``condition`` until it returns something truthy (returned) or
    ``timeout`` passes (AssertionError naming ``what`` and the last value)."""
    deadline = time.monotonic() + timeout
    while True:
        value = condition()
        if value:
            return value
        if time.monotonic() > deadline:
            raise AssertionError(f"not met within {timeout}s: {what or condition!r} ({value!r})")
        time.sleep(every)


async def until(
    condition: Callable[[], Any], timeout: float = 20.0, every: float = 0.05, what: str = ""
) -> Any:
    """``wait_until`` for asyncio: ``condition`` may be a coroutine function."""
    deadline = time.monotonic() + timeout
    while True:
        value = condition()
        if inspect.isawaitable(value):
            value = await value
        if value:
            return value
        if time.monotonic() > deadline:
            raise AssertionError(f"not met within {timeout}s: {what or condition!r} ({value!r})")
        await asyncio.sleep(every)
