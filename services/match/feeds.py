"""The watch fan-out: one JetStream subscription per match per process,
shared by every local watcher of that match.

A ``Feed`` follows one match's subject with one ordered consumer and hands
each commit, decoded once, to the queue of every watcher attached to it.
``Feeds.follow(match_id, after_seq)`` is what a watcher iterates: the commits
after stream sequence ``after_seq``, in order, then each new one, with no gap
and no duplicate:

* attaching is synchronous: the watcher's queue is added while the feed's
  position (the last sequence it handed out) is read, so every later commit
  reaches the queue;
* commits between the watcher's start and that position (a feed that was
  already ahead) are read from the stream directly, up to the position, and
  the queue's copies of anything already sent are skipped by sequence;
* a watcher whose queue grows past ``queue_limit`` (its client reads slower
  than the match moves) is detached, reads what it missed from the stream and
  attaches again: one slow client never holds the others back, nor grows a
  queue without bound.

A feed stops when its last watcher leaves, after the match's final commit,
or when its consumer fails (every attached watcher then gets the error, as a
watcher with its own consumer did). The redaction for each watcher's seat is
done by the caller, per watcher; a feed hands out whole commits only inside
the process.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator
from typing import Any

from services.match.model import Commit
from services.match.store import JetStreamStore

Item = tuple[int, Commit]

_DETACHED = object()
"""Put in a watcher's queue when the feed let it go (too slow, or the feed ended)."""


class _Watcher:
    __slots__ = ("queue",)

    def __init__(self) -> None:
        self.queue: asyncio.Queue[Any] = asyncio.Queue()


class Feed:
    """One ordered consumer of one match, fanned out to attached watchers."""

    def __init__(self, feeds: Feeds, match_id: str, after_seq: int) -> None:
        self.feeds = feeds
        self.match_id = match_id
        self.seq = after_seq
        """The last stream sequence handed to the watchers."""
        self.watchers: set[_Watcher] = set()
        self.ended = False
        self.task: asyncio.Task[None] | None = None

    def start(self) -> None:
        self.task = asyncio.ensure_future(self._run())

    def attach(self) -> tuple[_Watcher, int]:
        w = _Watcher()
        self.watchers.add(w)
        return w, self.seq

    def detach(self, w: _Watcher) -> None:
        self.watchers.discard(w)
        if not self.watchers and not self.ended:
            self._end()
            if self.task is not None:
                self.task.cancel()

    def _end(self) -> None:
        self.ended = True
        if self.feeds._feeds.get(self.match_id) is self:
            del self.feeds._feeds[self.match_id]

    async def _run(self) -> None:
        limit = self.feeds.queue_limit
        try:
            async for seq, commit in self.feeds.store.commits(self.match_id, self.seq, follow=True):
                self.seq = seq
                item = (seq, commit)
                for w in list(self.watchers):
                    if w.queue.qsize() >= limit:
                        self.watchers.discard(w)
                        w.queue.put_nowait(_DETACHED)
                    else:
                        w.queue.put_nowait(item)
                if commit.outcome is not None:
                    break  # nothing follows a match's last commit
        except asyncio.CancelledError:
            raise
        except Exception as e:
            self._end()
            for w in self.watchers:
                w.queue.put_nowait(e)
            self.watchers.clear()
            return
        finally:
            self._end()
        for w in self.watchers:
            w.queue.put_nowait(_DETACHED)
        self.watchers.clear()


class Feeds:
    """The feeds of one process, by match."""

    def __init__(self, store: JetStreamStore, *, queue_limit: int = 256) -> None:
        self.store = store
        self.queue_limit = queue_limit
        self._feeds: dict[str, Feed] = {}

    def __len__(self) -> int:
        return len(self._feeds)

    def watchers(self, match_id: str) -> int:
        feed = self._feeds.get(match_id)
        return 0 if feed is None else len(feed.watchers)

    def _attach(self, match_id: str, after_seq: int) -> tuple[Feed, _Watcher, int]:
        feed = self._feeds.get(match_id)
        if feed is None:
            feed = Feed(self, match_id, after_seq)
            self._feeds[match_id] = feed
            w, at = feed.attach()
            feed.start()
        else:
            w, at = feed.attach()
        return feed, w, at

    async def follow(self, match_id: str, after_seq: int) -> AsyncIterator[Item]:
        """The match's commits after stream sequence ``after_seq``, then every
        new one, forever (the caller stops at the match's last commit)."""
        last = after_seq
        while True:
            feed, w, at = self._attach(match_id, last)
            try:
                if at > last:  # the feed is ahead: what it handed out before we came
                    async for seq, c in self.store.commits(match_id, last, upto_seq=at):
                        if seq > last:
                            last = seq
                            yield seq, c
                while True:
                    item = await w.queue.get()
                    if item is _DETACHED:
                        break  # attach again, reading what was missed from the stream
                    if isinstance(item, BaseException):
                        raise item
                    seq, c = item
                    if seq > last:
                        last = seq
                        yield seq, c
            finally:
                with contextlib.suppress(Exception):
                    feed.detach(w)
