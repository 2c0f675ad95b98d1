"""The watch fan-out: one JetStream consumer per process for every match,
fanned out by match id to the local watchers.

A ``Tap`` is the process's only consumer of the match stream's subjects
(``match.*``): an ephemeral push consumer, no acks (``AckNone``), starting at
the stream's head when the first watcher comes. It hands each delivered
message to the ``Feed`` of its match if this process has one (nothing is
decoded for a match nobody here watches). Gaps are impossible to miss: the
consumer sequence of each delivery must follow the previous one, and each
idle heartbeat says which one it last sent; on a gap, a missed heartbeat or a
lost connection the tap makes a new consumer from the stream sequence after
the last one it handed out (deliveries seen twice are skipped by sequence).
So a watch costs no consumer of its own (no consumer to create and delete per
match, no per-match heartbeats), and a commit is delivered once per process.
With several replicas, each replica's tap receives every commit (headers and
body: a few hundred bytes). The tap also hands every delivery, in order, to
``Feeds.listener``: the ``MatchFinished`` relay (relay.py), which so costs no
consumer and no message of its own.

A ``Feed`` is one match's commits in this process, in order, handed to the
queue of every watcher attached to it. ``Feeds.follow(match_id, after_seq)``
is what a watcher iterates: the commits after stream sequence ``after_seq``,
in order, then each new one, with no gap and no duplicate:

* a new feed (or one that found a gap) catches up from the stream (direct
  gets up to the head) while the tap's deliveries for it wait in a backlog;
  it is registered before it reads the head, so whatever the head read
  misses is stored later, and so delivered by the tap later;
* a commit handed out must be the next version of the last one: if not (the
  tap lost something), the feed catches up from the stream again;
* the process that appended a commit hands it to the match's feed at once
  when the feed is exactly at the commit's expected sequence (JetStream
  checked that nothing came between): its watchers see the move without
  waiting for the delivery, which is then skipped as already handed out;
* attaching is synchronous: the watcher's queue is added while the feed's
  position (the last sequence it handed out) is read, so every later commit
  reaches the queue; commits between the watcher's start and that position
  are read from the stream directly, up to the position;
* a commit goes first to the watchers of the seats it awaits (each watcher
  says its seat when it attaches), so the player whose turn it now is hears
  of it first, and the others after;
* a watcher whose queue grows past ``queue_limit`` (its client reads slower
  than the match moves) is detached, reads what it missed from the stream and
  attaches again: one slow client never holds the others back, nor grows a
  queue without bound.

A feed stops when its last watcher leaves, or after the match's final commit;
a catch-up that fails (the store unavailable) ends it with the error for
every attached watcher. The redaction for each watcher's seat is done by the
caller, per watcher; a feed hands out whole commits only inside the process.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections import OrderedDict, deque
from collections.abc import AsyncIterator, Callable
from typing import Any

import nats.errors
import structlog
from nats.aio.client import Client as NATS
from nats.aio.msg import Msg
from nats.aio.subscription import Subscription
from nats.js import api

from services.common.mailbox import Mailbox
from services.common.tasks import cancel_and_wait
from services.match.model import Commit
from services.match.store import Inline, JetStreamStore, StoreUnavailable, delivery_sequences

log = structlog.get_logger("tabletop.match.feeds")

Item = tuple[int, Commit]

_DETACHED = object()
"""Put in a watcher's queue when the feed let it go (too slow, or the feed ended)."""

_RECENT = 32
"""Commits a feed keeps, for a watcher that attaches when it is ahead."""

_DROPPED = 4096
"""Matches whose last delivery without a feed the tap remembers."""

UNWATCHED_FEEDS = 256
"""Feeds kept from a match's creation until its first watcher (the oldest
one beyond are stopped: their watchers read the stream when they come)."""

_STATUS = api.Header.STATUS
_LAST_CONSUMER = api.Header.LAST_CONSUMER


class _Watcher:
    __slots__ = ("queue", "seat")

    def __init__(self, seat: int | None) -> None:
        self.queue: Mailbox[Any] = Mailbox()
        self.seat = seat
        """The seat it watches as (None: a spectator's, or a service's watch)."""


class Feed:
    """One match's commits in this process, fanned out to attached watchers."""

    def __init__(self, feeds: Feeds, match_id: str, after_seq: int) -> None:
        self.feeds = feeds
        self.match_id = match_id
        self.seq = after_seq
        """The last stream sequence handed to the watchers."""
        self.version: int | None = None
        """The version of that commit (None before the first)."""
        self.watchers: set[_Watcher] = set()
        self.ended = False
        self.backlog: list[tuple[int, bytes]] | None = None
        """The tap's deliveries while the feed catches up (None: live)."""
        self.task: asyncio.Task[None] | None = None
        self.recent: deque[Item] = deque(maxlen=_RECENT)
        """The last commits handed out: every one after ``recent_from``."""
        self.recent_from = after_seq

    def since(self, seq: int) -> list[Item] | None:
        """The commits handed out after ``seq``, if all are still in memory."""
        if seq < self.recent_from:
            return None
        return [x for x in self.recent if x[0] > seq]

    def attach(self, seat: int | None = None) -> tuple[_Watcher, int]:
        w = _Watcher(seat)
        self.watchers.add(w)
        return w, self.seq

    def detach(self, w: _Watcher) -> None:
        self.watchers.discard(w)
        if not self.watchers and not self.ended:
            self.stop()

    def stop(self) -> None:
        self._end()
        if self.task is not None:
            self.task.cancel()

    def _end(self) -> None:
        self.ended = True
        if self.feeds._feeds.get(self.match_id) is self:
            del self.feeds._feeds[self.match_id]
        if self.feeds._unwatched.get(self.match_id) is self:
            del self.feeds._unwatched[self.match_id]

    # ------------------------------------------------------------ arriving
    def catch_up(self) -> None:
        """Read from the stream after ``seq`` to its head, then the backlog."""
        if self.backlog is None:
            self.backlog = []
        self.task = asyncio.ensure_future(self._catch_up())

    def offer(self, seq: int, data: bytes) -> None:
        """A delivery of the tap (any order relative to the catch-up)."""
        if self.ended or seq <= self.seq:
            return
        if self.backlog is not None:
            self.backlog.append((seq, data))
            return
        self._take(seq, self.feeds.store.decode(data), data)

    def committed(self, expected_seq: int, seq: int, commit: Commit) -> None:
        """This process appended ``commit`` at ``seq`` on ``expected_seq``."""
        if not self.ended and self.backlog is None and self.seq == expected_seq:
            self._hand_out(seq, commit)

    def _take(self, seq: int, commit: Commit, data: bytes | None) -> None:
        if self.version is not None and commit.version != self.version + 1:
            # Something between the last one and this one never reached the
            # feed (the tap lost it): read it from the stream first.
            self.backlog = [] if data is None else [(seq, data)]
            self.catch_up()
            return
        self._hand_out(seq, commit)

    def _hand_out(self, seq: int, commit: Commit) -> None:
        self.seq = seq
        self.version = commit.version
        item = (seq, commit)
        if len(self.recent) == _RECENT:
            self.recent_from = self.recent[0][0]
        self.recent.append(item)
        limit = self.feeds.queue_limit
        watchers = list(self.watchers)
        awaiting = commit.awaiting
        if len(watchers) > 1 and awaiting:
            # The seats the match now waits for first: their frames go out
            # first, each step of the way (the loop runs the woken in order),
            # so the next move can be made the sooner.
            watchers.sort(key=lambda w: w.seat not in awaiting)
        for w in watchers:
            if w.queue.qsize() >= limit:
                self.watchers.discard(w)
                w.queue.put_nowait(_DETACHED)
            else:
                w.queue.put_nowait(item)
        if commit.outcome is not None:  # nothing follows a match's last commit
            self._end()
            for w in self.watchers:
                w.queue.put_nowait(_DETACHED)
            self.watchers.clear()

    async def _catch_up(self) -> None:
        try:
            async for seq, commit in self.feeds.store.commits(self.match_id, self.seq):
                if self.ended:
                    return
                if seq > self.seq:
                    self._hand_out(seq, commit)
            # Synchronously from here: the backlog, then live.
            backlog, self.backlog = self.backlog or [], None
            for i, (seq, data) in enumerate(backlog):
                if self.ended:
                    return
                if seq > self.seq:
                    self._take(seq, self.feeds.store.decode(data), data)
                    if self.backlog is not None:  # another gap: the new catch-up takes the rest
                        self.backlog.extend(backlog[i + 1 :])
                        return
        except asyncio.CancelledError:
            raise
        except Exception as e:
            self._end()
            for w in self.watchers:
                w.queue.put_nowait(e)
            self.watchers.clear()


class Tap:
    """The process's one consumer of every match subject (see the module)."""

    def __init__(
        self, feeds: Feeds, nc: NATS, *, heartbeat_s: float = 1.0, timeout_s: float = 5.0
    ) -> None:
        self.feeds = feeds
        self.nc = nc
        self.js = feeds.store.js
        self.stream = feeds.store.config.name
        self.prefix = feeds.store.config.subject_prefix + "."
        self.heartbeat_s = heartbeat_s
        self.timeout_s = timeout_s
        self.sseq = 0
        """The last stream sequence handed out (the next consumer starts after it)."""
        self.cseq = 0
        """The consumer sequence of that delivery (the current consumer's)."""
        self.consumer: str | None = None
        self.sub: Subscription | None = None
        self.resets = 0
        self.dropped: OrderedDict[str, int] = OrderedDict()
        """The last delivery of each recent match that had no feed here."""
        self.generation = 0
        self._seen = time.monotonic()
        self._resetting = False
        self._monitor: asyncio.Task[None] | None = None
        self._resetter: asyncio.Task[None] | None = None
        self._old: list[tuple[Subscription, str | None]] = []

    async def start(self) -> None:
        """Subscribe from the stream's head (raises ``StoreUnavailable``)."""
        try:
            info = await self.js.stream_info(self.stream)
        except nats.errors.Error as e:
            raise StoreUnavailable(f"JetStream did not answer: {e!r}") from None
        self.sseq = info.state.last_seq
        await self._subscribe()
        self._monitor = asyncio.ensure_future(self._watch())

    async def close(self) -> None:
        await cancel_and_wait(self._monitor)
        await cancel_and_wait(self._resetter)
        self._monitor = self._resetter = None
        await self._drop(self.sub, self.consumer)
        for sub, consumer in self._old:
            await self._drop(sub, consumer)
        self.sub, self.consumer, self._old = None, None, []

    async def _subscribe(self) -> None:
        """A new consumer from ``sseq + 1`` on a new inbox."""
        self.generation += 1
        generation = self.generation

        def on_msg(msg: Msg) -> None:
            if generation == self.generation:  # else a consumer being replaced
                self._on_msg(msg)

        self.cseq = 0  # before any delivery of the new consumer can come
        self._seen = time.monotonic()
        inbox = self.nc.new_inbox()
        # handled in nats-py's read loop (every step is synchronous)
        sub = await self.nc.subscribe(inbox, future=Inline(on_msg))  # type: ignore[arg-type]
        config = api.ConsumerConfig(
            deliver_subject=inbox,
            deliver_policy=api.DeliverPolicy.BY_START_SEQUENCE,
            opt_start_seq=self.sseq + 1,
            ack_policy=api.AckPolicy.NONE,
            filter_subject=self.prefix + "*",
            idle_heartbeat=self.heartbeat_s,
            mem_storage=True,
            num_replicas=1,
            inactive_threshold=max(30.0, 10 * self.heartbeat_s),
        )
        try:
            info = await self.js.add_consumer(self.stream, config=config, timeout=self.timeout_s)
        except BaseException as e:
            with contextlib.suppress(Exception):
                await sub.unsubscribe()
            if isinstance(e, nats.errors.Error):
                raise StoreUnavailable(f"JetStream did not make a consumer: {e!r}") from None
            raise
        self.sub, self.consumer = sub, info.name

    def _request_reset(self, why: str) -> None:
        """From a delivery: ignore the current consumer from now on and
        replace it (in a task: its subscription is the one calling)."""
        if self._resetting:
            return
        self.generation += 1
        self._resetter = asyncio.ensure_future(self._reset(why))

    async def _reset(self, why: str) -> None:
        """Replace the consumer, from the delivery after the last handed out."""
        if self._resetting:
            return
        self._resetting = True
        try:
            old = (self.sub, self.consumer)
            self.sub, self.consumer = None, None
            self.generation += 1  # deliveries of the old one are ignored
            if old[0] is not None:
                self._old.append(old)
            self.resets += 1
            log.info("feed_tap_reset", reason=why, after_seq=self.sseq)
            await self._subscribe()
            while self._old:
                await self._drop(*self._old.pop())
        finally:
            self._resetting = False

    async def _drop(self, sub: Subscription | None, consumer: str | None) -> None:
        if sub is not None:
            with contextlib.suppress(Exception):
                await sub.unsubscribe()
        if consumer is not None:
            with contextlib.suppress(Exception):
                await self.js.delete_consumer(self.stream, consumer)

    async def _watch(self) -> None:
        """Make a new consumer when the current one fell silent (no delivery
        and no heartbeat for three heartbeats) or could not be made."""
        while True:
            await asyncio.sleep(self.heartbeat_s)
            silent = time.monotonic() - self._seen > 3 * self.heartbeat_s
            if (self.sub is None or silent) and self.nc.is_connected:
                try:
                    await self._reset("no consumer" if self.sub is None else "silent")
                except Exception as e:  # again at the next heartbeat
                    log.warning("feed_tap_not_reset", error=repr(e))

    def _on_msg(self, msg: Msg) -> None:
        self._seen = time.monotonic()
        headers = msg.headers
        if headers is not None and _STATUS in headers:
            # An idle heartbeat: it says which delivery came last.
            last = headers.get(_LAST_CONSUMER)
            if last is not None and int(last) != self.cseq:
                self._request_reset("heartbeat ahead")
            return
        seqs = delivery_sequences(msg.reply)
        if seqs is None:  # not a JetStream delivery
            return
        sseq, cseq = seqs
        if cseq != self.cseq + 1:
            self._request_reset("gap")
            return
        self.cseq = cseq
        if sseq <= self.sseq:
            return
        self.sseq = sseq
        match_id = msg.subject[len(self.prefix) :]
        listener = self.feeds.listener
        if listener is not None:
            listener(sseq, match_id, headers)
        feed = self.feeds._feeds.get(match_id)
        if feed is not None:
            feed.offer(sseq, msg.data)
        else:
            dropped = self.dropped
            dropped[match_id] = sseq
            dropped.move_to_end(match_id)
            if len(dropped) > _DROPPED:
                dropped.popitem(last=False)


class Feeds:
    """The feeds of one process, by match, over one ``Tap``."""

    def __init__(
        self,
        store: JetStreamStore,
        *,
        queue_limit: int = 256,
        nc: NATS | None = None,
        heartbeat_s: float = 1.0,
    ) -> None:
        self.store = store
        self.queue_limit = queue_limit
        self.nc = nc if nc is not None else store.nc
        self.heartbeat_s = heartbeat_s
        self._feeds: dict[str, Feed] = {}
        self._unwatched: OrderedDict[str, Feed] = OrderedDict()
        """Feeds started at a match's creation, before any watcher (oldest first)."""
        self.tap: Tap | None = None
        self._tap_lock = asyncio.Lock()
        self.listener: Callable[[int, str, dict[str, str] | None], None] | None = None
        """Called with every delivery of the tap, in stream order (sequence,
        match id, headers): the ``MatchFinished`` relay (see relay.py)."""

    def __len__(self) -> int:
        return len(self._feeds)

    def watchers(self, match_id: str) -> int:
        feed = self._feeds.get(match_id)
        return 0 if feed is None else len(feed.watchers)

    async def close(self) -> None:
        if self.tap is not None:
            await self.tap.close()
            self.tap = None

    async def start(self) -> None:
        """Start the tap now (else with the first watcher): the matches
        created from then on have a feed from their first commit."""
        await self._ensure_tap()

    def created(self, match_id: str, seq: int, commit: Commit) -> None:
        """The write path created a match with ``commit`` at ``seq``: a feed
        starts with it if the tap will hand it every later commit (it has
        not reached ``seq`` yet, or the last delivery of that match it let go
        is this one), so the first watchers read nothing from the stream."""
        tap = self.tap
        if tap is None or match_id in self._feeds:
            return
        if tap.sseq >= seq and tap.dropped.get(match_id) != seq:
            return  # the tap is past it, and cannot say it let nothing later go
        if commit.outcome is not None:  # over at once: nothing to follow
            return
        feed = Feed(self, match_id, 0)
        feed._hand_out(seq, commit)
        self._feeds[match_id] = feed
        self._unwatched[match_id] = feed
        while len(self._unwatched) > UNWATCHED_FEEDS:
            _, oldest = self._unwatched.popitem(last=False)
            if not oldest.watchers:
                oldest.stop()

    async def _ensure_tap(self) -> None:
        if self.tap is not None:
            return
        async with self._tap_lock:
            if self.tap is None:
                nc = self.nc if self.nc is not None else self.store.js._nc
                tap = Tap(self, nc, heartbeat_s=self.heartbeat_s, timeout_s=self.store.timeout_s)
                await tap.start()
                self.tap = tap

    def committed(self, match_id: str, expected_seq: int, seq: int, commit: Commit) -> None:
        """The write path appended ``commit`` (see ``Feed.committed``)."""
        feed = self._feeds.get(match_id)
        if feed is not None:
            feed.committed(expected_seq, seq, commit)

    def _attach(
        self, match_id: str, after_seq: int, seat: int | None
    ) -> tuple[Feed, _Watcher, int]:
        feed = self._feeds.get(match_id)
        if feed is None:
            feed = Feed(self, match_id, after_seq)
            self._feeds[match_id] = feed
            w, at = feed.attach(seat)
            feed.catch_up()
        else:
            self._unwatched.pop(match_id, None)
            w, at = feed.attach(seat)
        return feed, w, at

    async def follow(
        self, match_id: str, after_seq: int, seat: int | None = None
    ) -> AsyncIterator[Item]:
        """The match's commits after stream sequence ``after_seq``, then every
        new one, forever (the caller stops at the match's last commit).
        ``seat``: the watcher's; a commit goes first to the watchers of the
        seats it awaits."""
        await self._ensure_tap()
        last = after_seq
        while True:
            feed, w, at = self._attach(match_id, last, seat)
            try:
                if at > last:  # the feed is ahead: what it handed out before we came
                    recent = feed.since(last)
                    if recent is not None:
                        for seq, c in recent:
                            if last < seq <= at:
                                last = seq
                                yield seq, c
                    else:
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
