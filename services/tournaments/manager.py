"""The process manager: ``MatchFinished`` facts in, results recorded, rounds on.

Two loops, in every replica (no leader: the stream is the lock):

- **facts**: a durable pull consumer ``tournaments`` on ``RESULTS`` (shared by
  every replica, explicit acks). A fact of a tournament match is recorded once
  (``MatchResultRecorded`` is appended only if that match id has no result
  yet), then the tournament is advanced. A fact is acked only after that, so a
  crash before the ack is a redelivery, which the recorded result makes a
  no-op. A fact of a score race's game by one of its entrants within its
  window counts for the race. Every other fact is acked and ignored.
- **sweep**: every ``sweep_s`` each running tournament is read again and
  advanced (what a replica that died between two steps left is finished by
  whoever sweeps next), and every ``reconcile_s`` the unrecorded matches of
  its current round are asked for at the match service (a fact read by a
  replica that did not know the match yet is not lost).

Nothing here publishes to ``RESULTS``: ratings come from the match results
themselves, once, as before.
"""

from __future__ import annotations

import asyncio
import contextlib
from datetime import datetime

import nats
import structlog
from nats.js import JetStreamContext, api

from services.common.results import ensure_results_stream
from services.match.model import now_ms
from services.matchmaking.ratings import InvalidFact, decode_fact
from services.tournaments import metrics
from services.tournaments.app import TournamentApp, race_end_ms
from services.tournaments.model import FORMAT_SCORE_RACE, STATUS_FINISHED, STATUS_RUNNING
from services.tournaments.ports import MatchEnd

log = structlog.get_logger("tabletop.tournaments.manager")


REFRESH_MS = 250
"""The shortest time between two reads of the running tournaments for facts."""


class RaceTicketPending(Exception):
    """A fact of a match that may be a queued race's, whose ticket's match is
    not recorded yet: redelivered a little later."""


def parse_ms(rfc3339: str) -> int:
    try:
        return int(datetime.fromisoformat(rfc3339.replace("Z", "+00:00")).timestamp() * 1000)
    except ValueError:
        return 0


class ProcessManager:
    def __init__(
        self,
        app: TournamentApp,
        js: JetStreamContext,
        *,
        results_stream: str = "RESULTS",
        durable: str = "tournaments",
        sweep_s: float = 1.0,
        reconcile_s: float = 10.0,
        batch: int = 64,
        replicas: int = 1,
    ) -> None:
        self.app = app
        self.js = js
        self.results_stream = results_stream
        self.durable = durable
        self.sweep_s = sweep_s
        self.reconcile_s = reconcile_s
        self.batch = batch
        self.replicas = replicas
        self._entrants: dict[str, set[str]] = {}  # player -> running tournaments
        self._races: dict[str, list[str]] = {}  # game -> running score races
        self._known_at_ms = 0  # when _entrants and _races were read
        self._watching: dict[str, asyncio.Task] = {}  # race ticket id -> its watcher

    async def run(self, stop: asyncio.Event) -> None:
        await ensure_results_stream(self.js, self.results_stream, self.replicas)
        try:
            await asyncio.gather(self._facts(stop), self._sweeps(stop))
        finally:
            for task in self._watching.values():
                task.cancel()
            self._watching.clear()

    # ================================================================ facts
    async def _facts(self, stop: asyncio.Event) -> None:
        sub = await self.js.pull_subscribe(
            "results.*",
            durable=self.durable,
            stream=self.results_stream,
            config=api.ConsumerConfig(ack_wait=30.0, max_deliver=-1),
        )
        try:
            while not stop.is_set():
                try:
                    msgs = await sub.fetch(self.batch, timeout=0.5)
                except (nats.errors.TimeoutError, TimeoutError):
                    continue
                except Exception as e:  # connection trouble: nats-py reconnects
                    if stop.is_set():
                        break
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
            outcome = await self.handle_fact(fact)
        except RaceTicketPending:  # its ticket's end is not recorded yet: again in a second
            metrics.RESULTS.labels("pending").inc()
            with contextlib.suppress(Exception):
                await msg.nak(delay=1.0)
            return
        except Exception as e:  # JetStream or the match service down: redeliver later
            log.warning("result_not_recorded", match=fact.match_id, error=repr(e))
            with contextlib.suppress(Exception):
                await msg.nak(delay=1.0)
            return
        metrics.RESULTS.labels(outcome).inc()
        await msg.ack()

    async def handle_fact(self, fact) -> str:
        end = MatchEnd(
            players=tuple(fact.players),
            ranks=tuple(fact.ranks),
            scores=tuple(fact.scores),
            reason=fact.reason,
            finished_at=fact.finished_at,
        )
        tid = self.app.owner(fact.match_id)
        if tid is None:
            # Maybe a round another replica started: read the tournaments of
            # these players again, then look once more.
            for t_id in {t for p in fact.players for t in self._entrants.get(p, ())}:
                await self.app.load(t_id, fresh=True)
            tid = self.app.owner(fact.match_id)
        if tid is not None:
            done = await self.app.record(fact.match_id, end, fact.finished_at)
            return "recorded" if done else "duplicate"
        at = parse_ms(fact.finished_at)
        if self._known_at_ms < at:
            # A race that could count this fact started before it ended: if
            # the list of running tournaments is older than that, read it
            # again (at most every REFRESH_MS: one read covers a whole batch).
            wait_ms = self._known_at_ms + REFRESH_MS - now_ms()
            if wait_ms > 0:
                await asyncio.sleep(wait_ms / 1000)
            if self._known_at_ms < at:
                await self.refresh()
        counted = False
        for race_id in self._races.get(fact.game, ()):
            t = await self.app.load(race_id, fresh=True)
            if t.options.race_queue:
                # Only the race's own matches count (RaceMatched names them).
                # A fact that may be of a ticket whose match is not recorded
                # yet waits (redelivered) until the ticket's watcher has.
                if fact.match_id in t.race_matches:
                    counted |= await self.app.record_race(
                        race_id, fact.match_id, end, fact.finished_at
                    )
                elif any(t.race_open_ticket(p) for p in fact.players if p in t.entrants):
                    raise RaceTicketPending(fact.match_id)
                continue
            if t.started_ms <= at <= race_end_ms(t) and any(p in t.entrants for p in fact.players):
                counted |= await self.app.record_race(race_id, fact.match_id, end, fact.finished_at)
        return "recorded" if counted else "foreign"

    # ================================================================ sweep
    async def _sweeps(self, stop: asyncio.Event) -> None:
        loop = asyncio.get_running_loop()
        reconciled = loop.time()
        while not stop.is_set():
            reconcile = loop.time() - reconciled >= self.reconcile_s
            if reconcile:
                reconciled = loop.time()
            try:
                await self.sweep(reconcile=reconcile)
            except Exception as e:
                if stop.is_set():
                    break
                log.warning("sweep_failed", error=repr(e))
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(stop.wait(), self.sweep_s)

    async def refresh(self) -> list[str]:
        """Read the tournaments again: who plays in which, which races run.
        Returns the running ones."""
        started = now_ms()
        entrants: dict[str, set[str]] = {}
        races: dict[str, list[str]] = {}
        running = []
        for tid in await self.app.store.ids():
            t = await self.app.load(tid, fresh=True)
            if t.status == STATUS_FINISHED:
                continue
            for p in t.entrants:
                entrants.setdefault(p, set()).add(tid)
            if t.status != STATUS_RUNNING:
                continue
            running.append(tid)
            if t.format == FORMAT_SCORE_RACE:
                races.setdefault(t.game, []).append(tid)
        self._entrants, self._races = entrants, races
        self._known_at_ms = started
        metrics.ACTIVE.set(len(running))
        return running

    async def sweep(self, *, reconcile: bool = False) -> None:
        """Advance every running tournament; with ``reconcile``, also ask the
        match service about the unrecorded matches of their current rounds
        (of a queued race: of its matches). A queued race's searching tickets
        each get a watcher in this replica."""
        for tid in await self.refresh():
            t = await self.app.advance(tid)
            if t.status != STATUS_RUNNING:
                continue
            if t.format == FORMAT_SCORE_RACE and t.options.race_queue:
                self._watch_tickets(t)
                if reconcile:
                    await self._reconcile_race(t)
            elif reconcile and t.current is not None:
                await self._reconcile(t)

    def _watch_tickets(self, t) -> None:
        for ticket, tk in t.race_tickets.items():
            if tk.state == "searching" and ticket not in self._watching:
                self._watching[ticket] = asyncio.create_task(self._watch_ticket(t.id, ticket))

    async def _watch_ticket(self, tid: str, ticket: str) -> None:
        """Follow one race ticket to its end and record it (every replica may
        watch the same ticket: the first record wins, the others find it
        done). On trouble the watcher ends; the next sweep starts another."""
        try:
            assert self.app.queue is not None
            end = await self.app.queue.watch(ticket)
            await self.app.race_ticket_ended(tid, ticket, end)
            if end.state == "matched":
                await self.app.advance(tid)
        except asyncio.CancelledError:
            raise
        except Exception as e:
            log.warning("race_ticket_watch_failed", tournament=tid, ticket=ticket, error=repr(e))
        finally:
            self._watching.pop(ticket, None)

    async def _reconcile_race(self, t) -> None:
        for match_id in sorted(t.race_matches):
            if t.recorded(match_id):
                continue
            end = await self.app.matches.result(match_id)
            if end is not None and await self.app.record_race(t.id, match_id, end, ""):
                metrics.RECONCILED.inc()
                log.info("race_result_reconciled", tournament=t.id, match=match_id)

    async def _reconcile(self, t) -> None:
        rnd = t.current
        for table in rnd.tables:
            match_id = table.matches[-1]
            if match_id in table.results:
                continue
            end = await self.app.matches.result(match_id)
            if end is not None and await self.app.record(match_id, end):
                metrics.RECONCILED.inc()
                log.info("result_reconciled", tournament=t.id, match=match_id)
