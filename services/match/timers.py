"""Turn timers: JetStream message schedules, the shared fire consumer, the
reconciler, and the timeout path.

* **Arming.** After each commit that leaves a seat awaited with a clock, the
  match's earliest deadline is published on ``timers.sched.<match>`` with
  ``Nats-Schedule: @at <deadline>`` and ``Nats-Schedule-Target:
  timers.fire.<match>``. One schedule subject per match: a new commit
  replaces the previous timer, nothing is ever cancelled by hand.
* **Firing.** Every replica pulls from one durable consumer on
  ``timers.fire.>``, so each fire goes to one replica (and to another after
  ``ack_wait`` if that one died before acknowledging it). A fire names the
  version it was armed for: a match that moved on since is dropped; else the
  server plays the overdue seat's default move (or its bot's move, or a
  forfeit) through the same submit path as any move, with the expected
  version: a player who moved first wins the race and the fire is dropped.
  Exactly one effect whatever the number of replicas, no leader.
* **Reconciling.** The commit and the schedule are two writes. Every
  clocked match is listed in the ``MATCH_CLOCKS`` bucket from its creation
  to its end; a reconciler on every replica walks it at start-up (re-arming
  every future deadline: the same time again is harmless) and then every few
  seconds, firing directly any deadline overdue by more than a grace (the
  fire's message id is the match, version and deadline, so replicas
  reconciling at once publish one fire).
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
from dataclasses import dataclass

import msgspec
import nats.errors
import structlog
from nats.js import JetStreamContext, api
from nats.js.errors import APIError, BadRequestError, BucketNotFoundError, NotFoundError
from nats.js.kv import KeyValue

from engine_core.errors import EngineError
from engine_core.types import Outcome
from services.common.auth import ROLE_SERVICE, Principal
from services.common.errors import ServiceError
from services.common.standin import DEFAULT_BOT
from services.match import clocks, metrics
from services.match.errors import (
    IdempotencyKeyReused,
    StaleVersion,
    TooMuchContention,
    Unavailable,
)
from services.match.model import (
    KIND_FORFEIT,
    Clocks,
    Commit,
    Projection,
    key_digest,
    now_ms,
    request_digest,
    rfc3339,
)
from services.match.ports import AppendConflict
from services.match.store import FINISHED_HEADERS
from services.match.writes import Writes

log = structlog.get_logger("tabletop.match.timers")

TIMER = Principal(subject="svc:clock", role=ROLE_SERVICE)
ERR_STREAM_NAME_IN_USE = 10058


@dataclass(frozen=True, slots=True)
class TimerConfig:
    stream: str = "TIMERS"
    prefix: str = "timers"
    durable: str = "match-timers"
    bucket: str = "MATCH_CLOCKS"
    replicas: int = 1
    ack_wait_s: float = 10.0
    reconcile_s: float = 5.0
    grace_s: float = 2.0
    batch: int = 256
    concurrency: int = 64
    max_age_s: float = 86400.0
    # The server's scheduler fires up to about a quarter second after the time
    # asked: schedules are set this much early and the fire waits for the
    # deadline itself, then ``settle_ms`` more, so a move that reached the
    # service by the deadline has committed before the timer acts.
    early_ms: int = 300
    settle_ms: int = 25


class Fire(msgspec.Struct, frozen=True):
    """The body of a schedule and of the fire it becomes."""

    match: str
    version: int
    deadline: int


_fire_encoder = msgspec.json.Encoder()
_fire_decoder = msgspec.json.Decoder(Fire)


class TimerSchedule:
    """The JetStream side: the TIMERS stream (schedules allowed), the fire
    consumer, and the bucket listing every match with a running clock."""

    def __init__(self, js: JetStreamContext, config: TimerConfig | None = None) -> None:
        self.js = js
        self.config = config or TimerConfig()
        self._kv: KeyValue | None = None

    async def open(self) -> None:
        c = self.config
        cfg = api.StreamConfig(
            name=c.stream,
            subjects=[f"{c.prefix}.sched.*", f"{c.prefix}.fire.*"],
            storage=api.StorageType.FILE,
            num_replicas=c.replicas,
            retention=api.RetentionPolicy.LIMITS,
            max_age=c.max_age_s,
            allow_msg_schedules=True,
        )
        try:
            await self.js.add_stream(cfg)
        except (BadRequestError, APIError) as e:
            if e.err_code != ERR_STREAM_NAME_IN_USE:
                raise
        try:
            self._kv = await self.js.key_value(c.bucket)
        except (BucketNotFoundError, NotFoundError):
            self._kv = await self.js.create_key_value(
                api.KeyValueConfig(
                    bucket=c.bucket, history=1, storage=api.StorageType.FILE, replicas=c.replicas
                )
            )

    async def arm(self, match_id: str, version: int, deadline_ms: int) -> None:
        """Schedule the fire of ``match_id``'s deadline (replacing any earlier),
        ``early_ms`` before it."""
        c = self.config
        await self.js.publish(
            f"{c.prefix}.sched.{match_id}",
            _fire_encoder.encode(Fire(match_id, version, deadline_ms)),
            stream=c.stream,
            headers={
                api.Header.SCHEDULE: f"@at {rfc3339(deadline_ms - c.early_ms)}",
                api.Header.SCHEDULE_TARGET: f"{c.prefix}.fire.{match_id}",
            },
        )

    async def fire_now(self, match_id: str, version: int, deadline_ms: int) -> None:
        """A fire published directly (a deadline the schedule missed)."""
        c = self.config
        await self.js.publish(
            f"{c.prefix}.fire.{match_id}",
            _fire_encoder.encode(Fire(match_id, version, deadline_ms)),
            stream=c.stream,
            headers={"Nats-Msg-Id": f"fire:{match_id}:{version}:{deadline_ms}"},
        )

    async def subscribe(self) -> JetStreamContext.PullSubscription:
        c = self.config
        return await self.js.pull_subscribe(
            f"{c.prefix}.fire.>",
            durable=c.durable,
            stream=c.stream,
            config=api.ConsumerConfig(
                ack_policy=api.AckPolicy.EXPLICIT,
                ack_wait=c.ack_wait_s,
                deliver_policy=api.DeliverPolicy.NEW,
                max_ack_pending=100_000,
            ),
        )

    async def list_clocked(self, match_id: str) -> None:
        assert self._kv is not None
        await self._kv.put(match_id, b"1")

    async def unlist_clocked(self, match_id: str) -> None:
        assert self._kv is not None
        with contextlib.suppress(NotFoundError):
            await self._kv.purge(match_id)

    async def clocked(self) -> list[str]:
        """Every match listed as having a running clock."""
        stream = f"KV_{self.config.bucket}"
        subjects = f"$KV.{self.config.bucket}.>"
        info = await self.js.stream_info(stream)
        if not info.state.messages:
            return []
        sub = await self.js.subscribe(
            subjects,
            stream=stream,
            ordered_consumer=True,
            deliver_policy=api.DeliverPolicy.LAST_PER_SUBJECT,
        )
        out: dict[str, None] = {}
        try:
            while True:
                msg = await sub.next_msg(timeout=5.0)
                key = msg.subject.rsplit(".", 1)[1]
                if msg.data:
                    out[key] = None
                else:
                    out.pop(key, None)
                if msg.metadata.num_pending == 0:
                    break
        finally:
            with contextlib.suppress(Exception):
                await sub.unsubscribe()
        return list(out)


def final_commit(
    p: Projection,
    kind: str,
    outcome: Outcome,
    clocks_after: Clocks | None,
    *,
    player: str,
    key: str,
    request: str,
    seat: int | None = None,
    timeout: bool = False,
) -> Commit:
    """A commit that ends the match with ``outcome`` and no move: no events,
    nobody awaited, the next version of ``p``."""
    return Commit(
        version=p.version + 1,
        kind=kind,
        time_ms=max(now_ms(), p.time_ms),
        entropy=b"",
        events=(),
        redacted=((),) * (len(p.meta.players) + 1),
        rules_version=p.meta.rules_version,
        awaiting=(),
        outcome=outcome,
        clocks=clocks_after,
        seat=seat,
        player=player,
        key=key,
        timeout=timeout,
        request=request,
    )


class Timeouts(Writes):
    """The application's timer use cases: apply a fire, reconcile, and run
    both loops."""

    async def _arm(self, match_id: str, version: int, clocks_now: Clocks | None) -> None:
        deadline = clocks.next_deadline(clocks_now)
        if self.timers is None or deadline is None:
            return
        try:
            if version == 0:
                await self.timers.list_clocked(match_id)
            await self.timers.arm(match_id, version, deadline)
        except Exception as e:  # the commit stands; the reconciler re-arms
            metrics.TIMERS_NOT_ARMED.inc()
            log.warning("timer_not_armed", match=match_id, version=version, error=repr(e))

    async def _unlist(self, match_id: str) -> None:
        if self.timers is not None:
            try:
                await self.timers.unlist_clocked(match_id)
            except Exception as e:  # the reconciler drops it later
                log.warning("clock_not_unlisted", match=match_id, error=repr(e))

    # ================================================================ a fire
    async def on_fire(self, fire: Fire) -> int:
        """Apply the timeouts due in ``fire``'s match; the number of commits."""
        p = await self.load(fire.match)
        if p.version < fire.version:  # another replica made the commit: catch up
            p = await self.load(fire.match, fresh=True)
        # (a projection at the fire's version that is stale anyway is caught by
        # the append's expected sequence: the timeout is then dropped)
        applied = 0
        while p.outcome is None and p.version == fire.version + applied:
            now = now_ms()
            due = clocks.overdue(p.clocks, now)
            if not due:
                deadline = clocks.next_deadline(p.clocks)
                if deadline is not None and applied == 0:  # fired early: arm again
                    await self._arm(p.meta.match_id, p.version, p.clocks)
                break
            seat = due[0]
            metrics.TIMER_LATENESS.observe(max(0, now - (p.clocks.deadlines[seat])) / 1000)
            if not await self._time_out(p, seat):
                break  # a player moved first
            applied += 1
            p = await self.load(fire.match)
        if p.outcome is not None:
            await self._unlist(p.meta.match_id)
        return applied

    async def _time_out(self, p: Projection, seat: int) -> bool:
        """Play for ``seat`` whose clock ran out; ``False`` if a commit came first."""
        tc = p.meta.match_options.clock
        assert p.clocks is not None
        key = f"timeout:{p.version}:{seat}"
        if clocks.forfeits(tc, p.clocks, seat):
            return await self._forfeit(p, seat, key)
        bot = (tc.bot if tc and tc.bot else DEFAULT_BOT) if p.clocks.taken_over[seat] else ""
        # the same move on every replica handling this fire, as far as the
        # bot allows (one request per key)
        entropy = hashlib.sha256(f"{p.meta.match_id}\0{key}".encode()).digest()
        move = await self._rules(self.rules.default_move(p.state, seat, bot, entropy))
        try:
            await self._submit(TIMER, p.meta.match_id, move, p.version, key, seat, timeout=True)
        except (StaleVersion, TooMuchContention):
            metrics.TIMEOUTS.labels("lost_race").inc()
            return False
        except IdempotencyKeyReused:
            # another replica handled this fire first (a bot's search, bounded
            # by time, chose another move there): its commit stands
            metrics.TIMEOUTS.labels("lost_race").inc()
            return True
        except (EngineError, ServiceError) as e:
            if isinstance(e, Unavailable):
                raise
            # default_move is legal whenever the seat is awaited: a bug in a game
            log.error("default_move_refused", match=p.meta.match_id, seat=seat, error=str(e))
            metrics.TIMEOUTS.labels("refused").inc()
            return False
        metrics.TIMEOUTS.labels("bot" if bot else "default_move").inc()
        log.info("timeout_applied", match=p.meta.match_id, seat=seat, version=p.version + 1)
        return True

    async def _settle_final(self, p: Projection, commit: Commit, seq: int) -> None:
        """After a final commit (a forfeit, an end) is appended at ``seq``: the
        projection remembered and cached, the MatchFinished fact published."""
        new = msgspec.structs.replace(
            p,
            version=commit.version,
            seq=seq,
            awaiting=(),
            outcome=commit.outcome,
            time_ms=commit.time_ms,
            clocks=commit.clocks,
        )
        self._remember(new)
        self.cache_writes.full(new)
        await self._finished(p.meta, commit)

    async def _forfeit(self, p: Projection, seat: int, key: str) -> bool:
        match_id = p.meta.match_id
        digest = key_digest(match_id, TIMER.subject, key)
        seats = len(p.meta.players)
        commit = final_commit(
            p,
            KIND_FORFEIT,
            clocks.forfeit_outcome(seats, seat),
            clocks.after_forfeit(p.clocks, seat),
            player=TIMER.subject,
            key=digest,
            request=request_digest("forfeit", seat),
            seat=seat,
            timeout=True,
        )
        try:
            seq, _duplicate = await self._append(
                match_id, commit, p.seq, f"{match_id}:{digest}", headers=FINISHED_HEADERS
            )
        except AppendConflict:
            metrics.TIMEOUTS.labels("lost_race").inc()
            return False
        await self._settle_final(p, commit, seq)
        metrics.TIMEOUTS.labels("forfeit").inc()
        log.info("seat_forfeited", match=match_id, seat=seat, version=commit.version)
        return True

    # ============================================================== reconcile
    async def reconcile(self, *, rearm: bool = False) -> int:
        """One pass over the clocked matches: fire what is overdue (and, with
        ``rearm``, schedule every future deadline again). The number of
        deadlines fired or re-armed."""
        assert self.timers is not None
        grace_ms = int(self.timers.config.grace_s * 1000)
        done = 0
        for match_id in await self.timers.clocked():
            try:
                p = await self.load(match_id, fresh=True)
            except ServiceError as e:
                if isinstance(e, Unavailable):
                    raise
                await self._unlist(match_id)  # not a match (any more)
                continue
            if p.outcome is not None:
                await self._unlist(match_id)
                continue
            deadline = clocks.next_deadline(p.clocks)
            if deadline is None:
                continue
            if deadline + grace_ms < now_ms():
                await self.timers.fire_now(match_id, p.version, deadline)
                metrics.TIMERS_RECONCILED.labels("fired").inc()
                done += 1
            elif rearm:
                await self.timers.arm(match_id, p.version, deadline)
                metrics.TIMERS_RECONCILED.labels("rearmed").inc()
                done += 1
        return done

    # ================================================================= loops
    async def run_timers(self, stop: asyncio.Event) -> None:
        """The fire consumer and the reconciler, until ``stop`` is set."""
        assert self.timers is not None
        await asyncio.gather(self._consume_fires(stop), self._reconcile_loop(stop))

    async def _consume_fires(self, stop: asyncio.Event) -> None:
        assert self.timers is not None
        config = self.timers.config
        sub = None
        limit = asyncio.Semaphore(config.concurrency)
        handling: set[asyncio.Task[None]] = set()
        while not stop.is_set():
            if len(handling) >= 16 * config.batch:  # bounded: the rest waits in the stream
                await asyncio.wait(handling, return_when=asyncio.FIRST_COMPLETED)
                continue
            try:
                if sub is None:
                    sub = await self.timers.subscribe()
                msgs = await sub.fetch(config.batch, timeout=1.0)
            except nats.errors.TimeoutError:
                continue
            except Exception as e:
                if stop.is_set():
                    break
                log.warning("timer_fetch_failed", error=repr(e))
                sub = None
                await _sleep_or_stop(stop, 1.0)
                continue
            for m in msgs:  # handled concurrently; each waits for its own deadline
                task = asyncio.ensure_future(self._handle(m, limit))
                handling.add(task)
                task.add_done_callback(handling.discard)
        for task in list(handling):
            task.cancel()

    async def _handle(self, msg: nats.aio.msg.Msg, limit: asyncio.Semaphore) -> None:
        assert self.timers is not None
        config = self.timers.config
        try:
            fire = _fire_decoder.decode(msg.data)
        except msgspec.DecodeError:
            log.error("bad_fire", subject=msg.subject)
            await msg.term()
            return
        wait_ms = fire.deadline + config.settle_ms - now_ms()
        if 0 < wait_ms <= config.early_ms + 1000:  # armed early: wait for the deadline
            await asyncio.sleep(wait_ms / 1000)
        async with limit:
            try:
                await self.on_fire(fire)
            except Unavailable as e:  # try again soon, maybe on another replica
                log.warning("timer_retry", match=fire.match, error=str(e))
                with contextlib.suppress(Exception):
                    await msg.nak(delay=1.0)
                return
            except Exception:
                log.exception("timer_failed", match=fire.match)
                with contextlib.suppress(Exception):
                    await msg.nak(delay=1.0)
                return
            with contextlib.suppress(Exception):
                await msg.ack()

    async def _reconcile_loop(self, stop: asyncio.Event) -> None:
        assert self.timers is not None
        rearm = True  # the first pass (start-up) schedules every deadline again
        while not stop.is_set():
            try:
                n = await self.reconcile(rearm=rearm)
                if rearm:
                    log.info("timers_reconciled", rearmed_or_fired=n)
                rearm = False
            except Exception as e:
                if stop.is_set():
                    break
                log.warning("reconcile_failed", error=repr(e))
            await _sleep_or_stop(stop, self.timers.config.reconcile_s)


async def _sleep_or_stop(stop: asyncio.Event, seconds: float) -> None:
    with contextlib.suppress(TimeoutError):
        await asyncio.wait_for(stop.wait(), seconds)
