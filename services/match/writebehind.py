"""The projection cache written behind the answers, coalesced and pipelined.

The stream is the truth; Redis only has to move forward and be current
eventually (a stale or missing entry is caught up from the stream by whoever
reads it). So a move's answer never waits for Redis, and the writes of a hot
process are gathered: every ``interval_s`` (sooner when ``max_batch``
matches are waiting) the latest projection of each match that changed is
written, all matches in one Redis call (``put_many``). A call costs far more
than a write in it (its round trip: a send and a receive of the process, a
wake-up of Redis), so the window is as long as a cache behind the stream can
afford. Several
moves of one match in that window are one write, an increment from the
version Redis was last written at carrying every new idempotency key; if
Redis is not there (evicted, flushed, written by another replica), the next
round writes the whole projection instead.

Writes of one match stay in order (one round at a time); ``flush()`` writes
everything pending now (graceful shutdown, tests).
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from dataclasses import dataclass, field

import structlog

from services.common.tasks import cancel_and_wait
from services.match.model import Projection
from services.match.ports import ProjectionCache

log = structlog.get_logger("tabletop.match")


@dataclass(slots=True)
class _Pending:
    projection: Projection
    base: int | None
    """The version Redis holds (an increment on it), or None: a full write."""
    keys: dict[str, int] = field(default_factory=dict)


class WriteBehind:
    def __init__(
        self,
        cache: ProjectionCache,
        latest: Callable[[str], Projection | None],
        *,
        interval_s: float = 0.1,
        max_batch: int = 256,
    ) -> None:
        self.cache = cache
        self.latest = latest
        self.interval_s = interval_s
        self.max_batch = max_batch
        self._pending: dict[str, _Pending] = {}
        self._wake: asyncio.Future[None] | None = None
        """The writer's wait for the end of the window (cut short when full)."""
        self._task: asyncio.Task[None] | None = None
        """The writer, while anything is pending: one round at a time, so the
        writes of one match land in order."""

    def __len__(self) -> int:
        return len(self._pending)

    def full(self, p: Projection) -> None:
        """Write all of ``p`` (after a creation, a rebuild, a catch-up)."""
        entry = self._pending.get(p.meta.match_id)
        if entry is None or p.version >= entry.projection.version:
            self._pending[p.meta.match_id] = _Pending(p, None)
        self._kick()

    def forward(self, p: Projection, new_keys: dict[str, int]) -> None:
        """``p`` is one move on from the previous projection, adding ``new_keys``."""
        match_id = p.meta.match_id
        entry = self._pending.get(match_id)
        if entry is None:
            self._pending[match_id] = _Pending(p, p.version - 1, dict(new_keys))
        elif p.version > entry.projection.version:
            entry.projection = p
            entry.keys.update(new_keys)
        self._kick()

    def _kick(self) -> None:
        # One writer task while there is something to write; it ends when
        # nothing is pending (no task idles between bursts).
        if self._task is None or self._task.done():
            self._task = asyncio.ensure_future(self._run())
        elif len(self._pending) >= self.max_batch and self._wake is not None:
            _wake(self._wake)

    async def _run(self) -> None:
        loop = asyncio.get_running_loop()
        while self._pending:
            if self.interval_s > 0 and len(self._pending) < self.max_batch:
                self._wake = wake = loop.create_future()
                timer = loop.call_later(self.interval_s, _wake, wake)
                try:
                    await wake
                finally:
                    timer.cancel()
                    self._wake = None
            await self._write_pending()

    async def _write_pending(self) -> None:
        if not self._pending:
            return
        batch, self._pending = self._pending, {}
        writes = [
            (e.projection, None if e.base is None else e.keys, e.base) for e in batch.values()
        ]
        try:
            applied = await self.cache.put_many(writes)
        except Exception:  # never let the cache stop the writer
            log.exception("cache_write_failed")
            return
        if applied is None:
            return  # Redis is down: the entries are stale until read again
        for (p, keys, _base), ok in zip(writes, applied, strict=True):
            if not ok and keys is not None:
                # Redis is not at the version the increment was made on: write
                # the whole latest projection next round (forward only).
                latest = self.latest(p.meta.match_id)
                self.full(latest if latest is not None and latest.version >= p.version else p)

    async def flush(self) -> None:
        """Write everything pending now, including the full writes that
        follow refused increments."""
        for _ in range(3):
            if self._wake is not None:  # no need to wait for the window's end
                _wake(self._wake)
            if self._task is not None and not self._task.done():
                await asyncio.wait([self._task])
            if not self._pending:
                return
            await self._write_pending()

    async def close(self) -> None:
        """Stop the writer (after ``flush``: what is pending then is dropped)."""
        self._pending.clear()
        await cancel_and_wait(self._task)
        self._task = None


def _wake(future: asyncio.Future[None]) -> None:
    if not future.done():
        future.set_result(None)
