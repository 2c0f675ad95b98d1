"""The ratings consumer: ``MatchFinished`` facts from JetStream, rated once each.

A durable pull consumer on stream ``RESULTS`` (subjects ``results.>``), explicit
acks. A fact is acked only after ``Ratings.record`` committed (or found the
match already rated), so a crash before the ack means a redelivery, which the
marker in Redis turns into a no-op. Undecodable facts are terminated (never
redelivered) and logged.
"""

from __future__ import annotations

import asyncio
import contextlib

import nats
import structlog
from nats.js import JetStreamContext, api

from services.common.results import ensure_results_stream
from services.matchmaking import metrics
from services.matchmaking.ratings import InvalidFact, Ratings, decode_fact, rated_seats

log = structlog.get_logger("matchmaking.results")


class ResultsConsumer:
    def __init__(
        self,
        js: JetStreamContext,
        ratings: Ratings,
        *,
        stream: str = "RESULTS",
        durable: str = "matchmaking-ratings",
        batch: int = 64,
        replicas: int = 1,
    ) -> None:
        self.js = js
        self.ratings = ratings
        self.stream = stream
        self.durable = durable
        self.batch = batch
        self.replicas = replicas
        self.rated = 0
        self.duplicates = 0

    async def run(self, stop: asyncio.Event) -> None:
        await ensure_results_stream(self.js, self.stream, self.replicas)
        sub = await self.js.pull_subscribe(
            "results.*",
            durable=self.durable,
            stream=self.stream,
            config=api.ConsumerConfig(ack_wait=30.0, max_deliver=-1),
        )
        try:
            while not stop.is_set():
                try:
                    msgs = await sub.fetch(self.batch, timeout=0.5)
                except (nats.errors.TimeoutError, TimeoutError):
                    continue  # no fact within the poll interval
                except Exception as e:  # connection trouble: nats-py reconnects
                    log.warning("results_fetch_failed", error=repr(e))
                    await asyncio.sleep(0.5)
                    continue
                for msg in msgs:
                    await self._handle(msg)
        finally:
            with contextlib.suppress(Exception):
                await sub.unsubscribe()

    async def _handle(self, msg) -> None:
        try:
            fact = decode_fact(msg.data)
        except InvalidFact as e:
            log.error("bad_match_finished", subject=msg.subject, error=str(e))
            await msg.term()
            return
        try:
            applied = await self.ratings.record(fact)
        except Exception as e:  # Redis down: let JetStream redeliver later
            log.warning("rating_failed", match=fact.match_id, error=str(e))
            await msg.nak(delay=1.0)
            return
        if applied:
            self.rated += 1
        else:
            self.duplicates += 1
        seats = rated_seats(fact)
        result = "duplicate" if not applied else "rated" if seats else "unrated"
        metrics.MATCHES_RATED.labels(result).inc()
        if result == "rated":
            log.info(
                "match_rated",
                match=fact.match_id,
                game=fact.game,
                players=[fact.players[s] for s in seats],
            )
        else:  # nobody rated (guests, bots) or rated before: nothing to tell at info
            log.debug("match_not_rated", match=fact.match_id, game=fact.game, why=result)
        await msg.ack()
