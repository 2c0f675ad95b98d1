"""The relay of ``MatchFinished`` facts: every finished commit in the match
stream reaches stream ``RESULTS`` exactly once, even when the replica that
appended it died before publishing the fact.

The write path publishes the fact right after the finishing commit (so
ratings see it at once). This relay is the guarantee behind it, and it costs
no message of its own per commit: it rides on the process's tap
(``feeds.Tap``), the one consumer that already delivers every commit of the
match stream to this process, in order and without a gap. Every replica's
relay sees every commit. The finishing commit carries the header
``Tabletop-Finished``; ``delay_s`` after it came (by then the write path has
published the fact, nearly always) the relay looks for the fact and, if it
is missing, reads the commit and the match's creation commit, marks the
match finished in the index and publishes the fact.

What survives a process is the **cursor**, a key of the index bucket
(``relay.cursor``): a stream sequence at or below which every finishing
commit has its fact. Each relay writes its own position (every
``cursor_s``, when it moved): the sequence below the oldest finishing commit
it has not settled yet, else the last one its tap delivered. A relay that
starts reads the cursor and catches up from it to where its tap starts (a
headers-only ordered consumer over that range), so a fact lost with a
process that died, or with every replica at once, is relayed by the next
relay to start. Replicas that write positions out of order move the cursor
back at worst: more to read at the next start, never a fact skipped. The
first relay of an installation without a cursor starts from the acknowledged
floor of the durable consumer that older versions of the relay used
(``match-finished-relay``), else from the stream's start.

Exactly once on ``RESULTS``: the fact is published with
``Nats-Expected-Last-Subject-Sequence: 0`` on ``results.<match_id>``, so
JetStream stores it only if that subject has no message yet, whoever
publishes it (the write path, a retried submit, every replica's relay),
however late (no duplicate window involved). A refusal (10071) means it is
there.

Cheap when nothing was lost, which is nearly always: every publisher marks
the match finished in the index *before* publishing the fact, so a fact on
``RESULTS`` means the index was marked too, and the relay's first step is one
direct get of ``results.<match_id>``: found, there is nothing to do (and
not even that when this process published or saw the fact itself:
``KnownFacts``).
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections import OrderedDict, deque

import nats.errors
import structlog
from nats.js import JetStreamContext, api
from nats.js.errors import NotFoundError

from services.match import metrics
from services.match.feeds import Feeds
from services.match.index import MatchIndex, finished_fact
from services.match.model import STATUS_FINISHED, MatchMeta
from services.match.store import FINISHED_HEADER, JetStreamStore, StoreUnavailable

log = structlog.get_logger("tabletop.match.relay")

LEGACY_DURABLE = "match-finished-relay"
"""The durable consumer of the relay of older versions (acknowledged one
commit at a time): its floor seeds the first cursor; nothing uses it since."""


class KnownFacts:
    """The matches whose fact this process saw stored on ``RESULTS`` lately
    (bounded): the relay of this process skips them without a read."""

    def __init__(self, size: int = 4096) -> None:
        self.size = size
        self._ids: OrderedDict[str, None] = OrderedDict()

    def add(self, match_id: str) -> None:
        self._ids[match_id] = None
        if len(self._ids) > self.size:
            self._ids.popitem(last=False)

    def __contains__(self, match_id: object) -> bool:
        return match_id in self._ids


class FinishedRelay:
    def __init__(
        self,
        js: JetStreamContext,
        store: JetStreamStore,
        index: MatchIndex,
        feeds: Feeds,
        *,
        results_prefix: str = "results",
        results_stream: str = "RESULTS",
        delay_s: float = 1.0,
        pace_s: float = 0.2,
        cursor_s: float = 1.0,
        known: KnownFacts | None = None,
    ) -> None:
        """``delay_s``: how long after its delivery a finishing commit is
        looked at (the write path publishes at once; the relay is its
        backstop). ``pace_s``: how often the due ones are looked at.
        ``cursor_s``: how often the cursor is written (when it moved)."""
        self.js = js
        self.store = store
        self.index = index
        self.feeds = feeds
        self.results_prefix = results_prefix
        self.results_stream = results_stream
        self.delay_s = delay_s
        self.pace_s = pace_s
        self.cursor_s = cursor_s
        self.known = known if known is not None else KnownFacts()
        self.relayed = 0  # facts this relay published (not found already there)
        self.floor = 0
        """Every commit at or below it was seen (by the catch-up or the tap)."""
        self.live_after: int | None = None
        """The tap hands every commit after this one to ``on_commit``."""
        self.unsettled: dict[int, str] = {}
        """Finishing commits seen whose fact is not known stored: seq -> match."""
        self._live_seen = 0
        self._due: deque[tuple[float, int]] = deque()
        self._written = -1
        self._written_at = 0.0

    # ------------------------------------------------------------ the tap
    def on_commit(self, seq: int, match_id: str, headers: dict[str, str] | None) -> None:
        """Every delivery of the tap, in stream order (see ``feeds.Tap``)."""
        if headers is not None and FINISHED_HEADER in headers:
            self._finishing(seq, match_id, time.monotonic() + self.delay_s)
        self._live_seen = seq
        if self.live_after is not None and self.floor >= self.live_after:
            self.floor = seq  # caught up: the tap's position is the floor

    def _finishing(self, seq: int, match_id: str, due: float) -> None:
        if match_id in self.known or seq in self.unsettled:
            return
        self.unsettled[seq] = match_id
        self._due.append((due, seq))

    @property
    def cursor(self) -> int:
        """At or below it, every finishing commit has its fact."""
        if self.unsettled:
            return min(self.floor, min(self.unsettled) - 1)
        return self.floor

    # ------------------------------------------------------------ the loop
    async def run(self, stop: asyncio.Event) -> None:
        """Follow the stream until ``stop`` is set."""
        try:
            while not stop.is_set():
                try:
                    if self.live_after is None:
                        await self._start()
                    elif self.floor < self.live_after:
                        await self._catch_up(stop)
                    await self._settle_due()
                    await self._write_cursor()
                except asyncio.CancelledError:
                    raise
                except Exception as e:  # NATS down or restarting: nats-py reconnects
                    log.warning("relay_step_failed", error=repr(e))
                    await _sleep_or_stop(stop, 0.5)
                    continue
                await _sleep_or_stop(stop, self.pace_s)
        finally:
            if self.feeds.listener == self.on_commit:
                self.feeds.listener = None
        with contextlib.suppress(Exception):
            await asyncio.wait_for(self._write_cursor(force=True), self.store.timeout_s)

    async def _start(self) -> None:
        """Read the cursor, then listen to the tap from where it is now."""
        cursor = await self.index.relay_cursor()
        if cursor is None:
            cursor = await self._legacy_floor()
        await self.feeds.start()  # raises StoreUnavailable if it cannot
        tap = self.feeds.tap
        assert tap is not None
        # Synchronously: every delivery after the tap's position is ours.
        self.floor = cursor
        self._written = cursor
        self.live_after = max(cursor, tap.sseq)
        self.feeds.listener = self.on_commit
        log.info("relay_started", cursor=cursor, live_after=self.live_after)

    async def _legacy_floor(self) -> int:
        try:
            info = await self.js.consumer_info(self.store.config.name, LEGACY_DURABLE)
        except NotFoundError:
            return 0
        return info.ack_floor.stream_seq if info.ack_floor is not None else 0

    async def _catch_up(self, stop: asyncio.Event) -> None:
        """The finishing commits after the floor up to where the tap started
        (headers only)."""
        assert self.live_after is not None
        upto = self.live_after
        try:
            sub = await self.js.subscribe(
                f"{self.store.config.subject_prefix}.*",
                stream=self.store.config.name,
                ordered_consumer=True,
                headers_only=True,
                config=api.ConsumerConfig(
                    deliver_policy=api.DeliverPolicy.BY_START_SEQUENCE,
                    opt_start_seq=self.floor + 1,
                ),
                idle_heartbeat=1.0,
            )
        except nats.errors.Error as e:
            raise StoreUnavailable(f"JetStream did not make a consumer: {e!r}") from None
        prefix = self.store.config.subject_prefix + "."
        try:
            while self.floor < upto:
                if stop.is_set():
                    return
                try:
                    msg = await sub.next_msg(timeout=self.store.timeout_s)
                except nats.errors.TimeoutError:
                    if await self._nothing_left(upto):
                        break  # expired or purged: nothing left to read before the tap
                    raise StoreUnavailable("JetStream stopped delivering commits") from None
                md = msg.metadata
                seq = md.sequence.stream
                if seq > upto:
                    break  # the tap delivered it
                if msg.headers and FINISHED_HEADER in msg.headers:
                    self._finishing(seq, msg.subject[len(prefix) :], 0.0)
                self.floor = max(self.floor, seq)
                if md.num_pending == 0:
                    break
        finally:
            with contextlib.suppress(Exception):
                await asyncio.shield(sub.unsubscribe())
        self.floor = max(self.floor, upto, self._live_seen)
        log.info("relay_caught_up", upto=upto)

    async def _nothing_left(self, upto: int) -> bool:
        """Whether the stream holds no commit after the floor up to ``upto``."""
        try:
            state = (await self.js.stream_info(self.store.config.name)).state
        except nats.errors.Error:
            return False
        return state.messages == 0 or state.first_seq > upto or state.last_seq <= self.floor

    async def _settle_due(self) -> None:
        now = time.monotonic()
        while self._due and self._due[0][0] <= now:
            _, seq = self._due.popleft()
            match_id = self.unsettled.get(seq)
            if match_id is None:
                continue
            if match_id not in self.known:
                try:
                    await self.relay(match_id, seq)
                except Exception as e:  # the store or NATS in trouble: again later
                    log.warning("relay_failed", match=match_id, error=repr(e))
                    self._due.append((now + 1.0, seq))
                    continue
            del self.unsettled[seq]

    async def _write_cursor(self, *, force: bool = False) -> None:
        cursor = self.cursor
        if self.live_after is None or cursor <= self._written:
            return
        now = time.monotonic()
        if not force and now - self._written_at < self.cursor_s:
            return
        await self.index.set_relay_cursor(cursor)
        self._written, self._written_at = cursor, now

    # ------------------------------------------------------------ one fact
    async def relay(self, match_id: str, seq: int) -> bool:
        """Publish the fact of the finishing commit at ``seq`` unless it is on
        ``RESULTS`` already; True if this call published it."""
        if match_id in self.known or await self._fact_stored(match_id):
            self.known.add(match_id)
            return False  # and so is the index's mark (it is written first)
        commit = await self.store.commit_at(seq)
        first = await self.store.first(match_id)
        if commit.outcome is None or first is None:
            return False
        meta = MatchMeta.from_creation(match_id, first[1])
        await self.index.record(meta, STATUS_FINISHED)
        published = await self.index.publish_finished(
            self.results_prefix, self.results_stream, finished_fact(meta, commit)
        )
        self.known.add(match_id)
        if published:
            self.relayed += 1
            metrics.FACTS_RELAYED.inc()
            metrics.MATCHES_FINISHED.inc()
            log.info("match_finished_relayed", match=match_id)
        return published

    async def _fact_stored(self, match_id: str) -> bool:
        """Whether ``results.<match_id>`` holds the fact (a direct get: a
        replica that lags says no, and the full path is taken, harmlessly)."""
        try:
            await self.js.get_last_msg(
                self.results_stream, f"{self.results_prefix}.{match_id}", direct=True
            )
        except NotFoundError:
            return False
        return True


async def _sleep_or_stop(stop: asyncio.Event, seconds: float) -> None:
    with contextlib.suppress(TimeoutError):
        await asyncio.wait_for(stop.wait(), seconds)
