"""A queue with one reader, for the hot paths: ``Mailbox``.

``asyncio.Queue`` looks up the running loop on every ``get`` that waits, and
on Python 3.11 that lookup is a ``getpid`` system call: on the match
service's play path (a watcher's queue and a play stream's queue, a few
waits per move) those calls were about a tenth of the event loop's time. A
``Mailbox`` takes the running loop once, when it is made, and so is bound to
that loop (made in a coroutine; used from callbacks and tasks on that loop).

What it keeps of ``asyncio.Queue``: unbounded, first in first out,
``put_nowait`` from any callback, ``get`` that waits, ``qsize``, ``empty``. A
``get`` cancelled while it waits takes nothing; one ``get`` waits at a time
(a second one is a bug, and raises).
"""

from __future__ import annotations

import asyncio
from collections import deque
from typing import Generic, TypeVar

T = TypeVar("T")

__all__ = ["Mailbox"]


class Mailbox(Generic[T]):
    """Items in order for one reader (see the module)."""

    __slots__ = ("_items", "_loop", "_waiter")

    def __init__(self) -> None:
        self._loop = asyncio.get_running_loop()
        self._items: deque[T] = deque()
        self._waiter: asyncio.Future[None] | None = None

    def put_nowait(self, item: T) -> None:
        self._items.append(item)
        waiter = self._waiter
        if waiter is not None:
            self._waiter = None
            if not waiter.done():
                waiter.set_result(None)

    async def get(self) -> T:
        items = self._items
        while not items:
            if self._waiter is not None:
                raise RuntimeError("Mailbox.get: another reader is waiting")
            waiter = self._waiter = self._loop.create_future()
            try:
                await waiter
            finally:
                if self._waiter is waiter:  # cancelled: nobody woke it
                    self._waiter = None
        return items.popleft()

    def qsize(self) -> int:
        return len(self._items)

    def empty(self) -> bool:
        return not self._items
