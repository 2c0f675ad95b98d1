"""The relay of ``MatchFinished`` facts: every finished commit in the match
stream reaches stream ``RESULTS`` exactly once, even when the replica that
appended it died before publishing the fact.

The write path publishes the fact right after the finishing commit (so
ratings see it at once). This relay is the guarantee behind it: a durable
pull consumer on the match stream (shared by every replica, each message
delivered to one of them), headers only, so it costs a few bytes per
commit. The finishing commit carries the header ``Tabletop-Finished``; for
it, the relay reads the commit and the match's creation commit, publishes the
fact and marks the match finished in the index, then acks. A crash before the
ack means a redelivery.

Exactly once on ``RESULTS``: the fact is published with
``Nats-Expected-Last-Subject-Sequence: 0`` on ``results.<match_id>``, so
JetStream stores it only if that subject has no message yet, whoever
publishes it (the write path, a retried submit, the relay, twice), however
late (no duplicate window involved). A refusal (10071) means it is there.

Cheap when nothing was lost, which is nearly always: every publisher marks
the match finished in the index *before* publishing the fact, so a fact on
``RESULTS`` means the index was marked too, and the relay's first step is one
direct get of ``results.<match_id>``: found, there is nothing to do (and
not even that when this process published or saw the fact itself lately:
``KnownFacts``). And the
relay fetches at a pace (``pace_s`` after a fetch that did not fill its
batch), so under load one pull brings hundreds of commits' headers instead of
a pull request per commit.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections import OrderedDict

import nats.errors
import structlog
from nats.js import JetStreamContext, api
from nats.js.errors import NotFoundError

from services.match import metrics
from services.match.index import MatchIndex, finished_fact, publish_finished
from services.match.model import STATUS_FINISHED, MatchMeta
from services.match.store import FINISHED_HEADER, JetStreamStore

log = structlog.get_logger("tabletop.match.relay")

RELAY_DURABLE = "match-finished-relay"


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
        *,
        results_prefix: str = "results",
        results_stream: str = "RESULTS",
        durable: str = RELAY_DURABLE,
        batch: int = 256,
        poll_s: float = 1.0,
        pace_s: float = 0.2,
        known: KnownFacts | None = None,
    ) -> None:
        """``pace_s``: the pause after a fetch that brought fewer than
        ``batch`` commits (the relay is the backstop of the write path, which
        publishes at once: a fraction of a second later costs nothing)."""
        self.js = js
        self.store = store
        self.index = index
        self.results_prefix = results_prefix
        self.results_stream = results_stream
        self.durable = durable
        self.batch = batch
        self.poll_s = poll_s
        self.pace_s = pace_s
        self.known = known if known is not None else KnownFacts()
        self.relayed = 0  # facts this relay published (not found already there)

    async def run(self, stop: asyncio.Event) -> None:
        """Follow the stream until ``stop`` is set."""
        sub = None
        while not stop.is_set():
            try:
                if sub is None:
                    sub = await self._subscribe()
                msgs = await sub.fetch(self.batch, timeout=self.poll_s)
            except (nats.errors.TimeoutError, TimeoutError):
                continue  # nothing new within the poll interval
            except asyncio.CancelledError:
                raise
            except Exception as e:  # NATS down or restarting: nats-py reconnects
                log.warning("relay_fetch_failed", error=repr(e))
                await _sleep_or_stop(stop, 0.5)
                continue
            for msg in msgs:
                await self._handle(msg)
            if len(msgs) < self.batch and self.pace_s > 0:
                await _sleep_or_stop(stop, self.pace_s)
        if sub is not None:
            with contextlib.suppress(Exception):
                await sub.unsubscribe()

    async def _subscribe(self):  # type: ignore[no-untyped-def]
        return await self.js.pull_subscribe(
            f"{self.store.config.subject_prefix}.*",
            durable=self.durable,
            stream=self.store.config.name,
            config=api.ConsumerConfig(
                headers_only=True,
                ack_policy=api.AckPolicy.EXPLICIT,
                # short: a fact whose nak was lost (NATS down) comes back in
                # seconds, not half a minute (a redelivery is a no-op)
                ack_wait=5.0,
                max_deliver=-1,
                deliver_policy=api.DeliverPolicy.ALL,
            ),
        )

    async def _handle(self, msg) -> None:  # type: ignore[no-untyped-def]
        try:
            if (msg.headers or {}).get(FINISHED_HEADER):
                await self.relay(msg.subject.split(".", 1)[1], msg.metadata.sequence.stream)
        except Exception as e:  # the store or NATS in trouble: again later
            log.warning("relay_failed", subject=msg.subject, error=repr(e))
            with contextlib.suppress(Exception):
                await msg.nak(delay=1.0)
            return
        with contextlib.suppress(Exception):  # a lost ack is a redelivery, a no-op
            await msg.ack()

    async def relay(self, match_id: str, seq: int) -> bool:
        """Publish the fact of the finishing commit at ``seq`` unless it is on
        ``RESULTS`` already; True if this call published it."""
        if match_id in self.known or await self._fact_stored(match_id):
            return False  # and so is the index's mark (it is written first)
        commit = await self.store.commit_at(seq)
        first = await self.store.first(match_id)
        if commit.outcome is None or first is None:
            return False
        meta = MatchMeta.from_creation(match_id, first[1])
        await self.index.record(meta, STATUS_FINISHED)
        published = await publish_finished(
            self.js, self.results_prefix, self.results_stream, finished_fact(meta, commit)
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
