"""The tournament application: commands, queries, and the steps of the
process manager (record a result, advance a round).

Every change is one event appended with the expected last sequence of the
tournament's subject: a command validates against the projection at sequence
``s`` and appends only if nothing came after ``s`` (else it folds what came
and decides again). Nothing is appended for a rejected command.

``advance`` is level-triggered: it looks at the tournament and does the one
next thing due (complete the round, start a rematch, pair the next round,
start it, finish), until nothing is. A round is first paired
(``RoundPaired``: its tables fixed in the stream), then its matches are
created with idempotency keys ``<tournament>:r<n>:t<k>`` (``:g<j>`` for
rematches), then ``RoundStarted`` is appended with their ids. Whoever does
the creating (this replica again after a crash, or another one) reads the
same pairing and makes the same calls with the same keys, so gets the same
matches: a match is never created twice and never skipped; the stream
decides which append counts.
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import math
import os
import time
from collections.abc import AsyncIterator
from dataclasses import dataclass
from typing import Any

import grpc
import structlog

from engine_core.bots import LEVELS
from engine_core.registry import Registry, UnknownGame, default_registry
from services.common.auth import ROLE_ORGANISER, ROLE_SERVICE, Principal, is_bot
from services.common.errors import Aborted
from services.match import clocks
from services.match.model import new_match_id, now_ms, valid_match_id
from services.match.ports import AppendConflict
from services.tournaments import formats, metrics
from services.tournaments.adapters import match_time_control
from services.tournaments.errors import (
    AlreadyExists,
    BadRequest,
    FailedPrecondition,
    NotFound,
    PermissionDenied,
    TournamentNotFound,
    Unavailable,
)
from services.tournaments.model import (
    FORMAT_SCORE_RACE,
    FORMATS,
    STATUS_FINISHED,
    STATUS_REGISTERING,
    STATUS_RUNNING,
    TIME_CONTROL_KINDS,
    Event,
    MatchAdjudicated,
    MatchResultRecorded,
    Options,
    PlayerRegistered,
    PlayerWithdrawn,
    RaceMatched,
    RaceQueued,
    RaceTicketEnded,
    RegistrationClosed,
    RematchStarted,
    RoundCompleted,
    RoundDeadlinePassed,
    RoundPaired,
    RoundStarted,
    Table,
    TimeControl,
    Tournament,
    TournamentCreated,
    TournamentFinished,
    event_type,
    fold,
)
from services.tournaments.ports import (
    END_UNSUPPORTED,
    BotJobs,
    MatchEnd,
    Matches,
    Queue,
    QueuedElsewhere,
    Seeding,
    TicketEnd,
)
from services.tournaments.store import StoreUnavailable, TournamentStore

log = structlog.get_logger("tabletop.tournaments")

MAX_NAME = 120
MAX_PLAYER_ID = 200
MAX_FIELD = 100_000
APPEND_ATTEMPTS = 20


RACE_QUEUE_BATCH = 32
"""Entrants a queued race enqueues at once (one sweep step)."""

RACE_GRACE_MS = 3000
"""A score race is closed this long after its window, for the facts of
matches that ended inside it to arrive."""


def race_end_ms(t: Tournament) -> int:
    return t.started_ms + int(t.options.race_seconds * 1000)


MAX_ROUND_DEADLINE_S = 7 * 24 * 3600.0


def race_pool(tournament_id: str) -> str:
    """The matchmaker's pool of a queued race: its entrants meet only each
    other (and the matchmaker's bots)."""
    return f"tournament:{tournament_id}"


RACE_KEY_CHARS = 200  # the matchmaker's bound on an idempotency key


def race_ticket_key(tournament_id: str, player: str, n: int) -> str:
    """The idempotency key of an entrant's ``n``-th ticket (``n``: the
    ``RaceQueued`` of the entrant in the stream so far). Every replica asks
    with the same key until that ticket is appended, so a replica that dies
    between the Enqueue and the append leaves no orphan: the one taking over
    gets the same ticket, whatever it has become. A player id too long for
    the bound goes in as a digest."""
    key = f"{tournament_id}:race:{player}:{n}"
    if len(key) > RACE_KEY_CHARS:
        digest = hashlib.sha256(player.encode()).hexdigest()[:32]
        key = f"{tournament_id}:race:#{digest}:{n}"
    return key


def round_deadline_ms(t: Tournament, rnd) -> int:
    """When the round must be over (0: no deadline): its start plus
    ``round_deadline_s``."""
    if not t.options.round_deadline_s or not rnd.started_ms:
        return 0
    return rnd.started_ms + round(t.options.round_deadline_s * 1000)


def adjudication(players: tuple[str, ...], awaiting: tuple[int, ...]):
    """The deadline rule for a match still running: the seats the game waits
    for rank last with score 0, the others share first with score 1 (as a
    clock forfeit); if it waits for every seat (or none: it cannot be told
    who is slow) the match is void: ranks shared, no points for anyone.
    Returns (ranks, scores, void)."""
    waiting = {s for s in awaiting if 0 <= s < len(players)}
    if not waiting or len(waiting) == len(players):
        return tuple(1 for _ in players), tuple(0.0 for _ in players), True
    last = len(players) - len(waiting) + 1
    ranks = tuple(last if s in waiting else 1 for s in range(len(players)))
    scores = tuple(0.0 if s in waiting else 1.0 for s in range(len(players)))
    return ranks, scores, False


ADJUDICATION_REASON = "round_deadline"
"""The ``EndMatch`` reason of a match ended by its round's deadline (the
match service stores ``adjudicated:round_deadline`` as the outcome's reason)."""
ADJUDICATED_PREFIX = "adjudicated:"
END_ATTEMPTS = 5


def result_event(
    round_no: int,
    table: int,
    match_id: str,
    end: MatchEnd,
    awaiting: tuple[int, ...] | None = None,
    finished_at: str = "",
) -> Event:
    """The event of a match of a round that has ended: ``MatchAdjudicated``
    if the round deadline ended it (its outcome's reason
    ``adjudicated:round_deadline``), with the ranks and scores the match
    service stored; else ``MatchResultRecorded``, its real result.
    ``awaiting``: the seats the rule was read with (else those ranked
    after first: the same seats, unless void)."""
    if end.reason == ADJUDICATED_PREFIX + ADJUDICATION_REASON:
        void = len(set(end.ranks)) <= 1
        if awaiting is None:
            awaiting = () if void else tuple(s for s, r in enumerate(end.ranks) if r > 1)
        return MatchAdjudicated(
            round=round_no,
            table=table,
            match_id=match_id,
            players=end.players,
            ranks=end.ranks,
            scores=end.scores,
            void=void,
            awaiting=tuple(sorted(awaiting)),
            at_ms=now_ms(),
        )
    return MatchResultRecorded(
        round=round_no,
        table=table,
        match_id=match_id,
        players=end.players,
        ranks=end.ranks,
        scores=end.scores,
        reason=end.reason,
        finished_at=finished_at or end.finished_at,
        at_ms=now_ms(),
    )


MAX_CLOCK_S = 7 * 24 * 3600.0
"""Longest clock setting accepted (a week): beyond it, or not finite, is bad_time_control."""


@dataclass(frozen=True, slots=True)
class AppConfig:
    players_may_create: bool = True  # local development: any player may organise
    create_concurrency: int = 32  # CreateMatch calls in flight while starting a round


def match_key(tournament_id: str, round_no: int, table: int, game: int = 1) -> str:
    """The idempotency key of a tournament match."""
    key = f"{tournament_id}:r{round_no}:t{table}"
    return key if game == 1 else f"{key}:g{game}"


class CrashPoint(Exception):
    """Raised by a test's fault hook to stop a step where it stands."""


class TournamentApp:
    def __init__(
        self,
        *,
        store: TournamentStore,
        matches: Matches,
        bots: BotJobs,
        seeding: Seeding,
        registry: Registry | None = None,
        config: AppConfig | None = None,
        queue: Queue | None = None,
    ) -> None:
        self.queue = queue
        self.store = store
        self.matches = matches
        self.bots = bots
        self.seeding = seeding
        self.registry = registry or default_registry()
        self.config = config or AppConfig()
        self._cache: dict[str, Tournament] = {}
        self._owners: dict[str, str] = {}  # match id -> tournament id
        self._locks: dict[str, asyncio.Lock] = {}
        self.fault: Any = None  # tests: called with a point name; may raise CrashPoint
        self._race_refused: set[tuple[str, str]] = set()  # (race, player) the matchmaker refused

    def _hit(self, point: str, **where: Any) -> None:
        if self.fault is not None:
            self.fault(point, **where)

    # ============================================================ commands
    async def create(
        self,
        principal: Principal,
        *,
        name: str,
        game: str,
        format: str,
        rounds: int = 0,
        options: Options | None = None,
        game_options: str = "",
        time_control: TimeControl | None = None,
        seed: str = "",
        idempotency_key: str = "",
    ) -> str:
        if not (
            principal.is_service
            or principal.role == ROLE_ORGANISER
            or self.config.players_may_create
        ):
            raise PermissionDenied(
                "organiser_only", "only organisers and services create tournaments"
            )
        try:
            g = self.registry.get(game)
        except UnknownGame:
            raise TournamentNotFoundGame(game) from None
        if format not in FORMATS:
            raise BadRequest("unknown_format", f"format must be one of {', '.join(FORMATS)}")
        if len(name) > MAX_NAME:
            raise BadRequest("bad_name", f"the name is at most {MAX_NAME} characters")
        if len(idempotency_key) > 200:
            raise BadRequest("bad_key", "idempotency key too long")
        options = options or Options()
        tc = time_control or TimeControl()
        if tc.kind not in TIME_CONTROL_KINDS:
            raise BadRequest(
                "bad_time_control", f"time control kind is one of {', '.join(TIME_CONTROL_KINDS)}"
            )
        times = (tc.seconds, tc.increment, tc.delay)
        if not all(math.isfinite(t) and 0 <= t <= MAX_CLOCK_S for t in times):
            raise BadRequest(
                "bad_time_control",
                f"time control seconds, increment and delay are 0..{MAX_CLOCK_S}",
            )
        match_tc = match_time_control(tc)
        if match_tc is not None:  # the match service's own check, before anything is written
            clocks.validate(match_tc)
        rd = options.round_deadline_s
        if not math.isfinite(rd) or rd < 0 or rd > MAX_ROUND_DEADLINE_S or 0 < rd < 1:
            raise BadRequest(
                "bad_round_deadline",
                f"round_deadline_s is 0 (none) or 1..{MAX_ROUND_DEADLINE_S:.0f} seconds",
            )
        if (options.race_queue or options.race_max_matches) and format != FORMAT_SCORE_RACE:
            raise BadRequest(
                "bad_race_queue", "race_queue and race_max_matches are for a score race"
            )
        if options.race_max_matches < 0 or options.race_max_matches > 10_000:
            raise BadRequest("bad_race_queue", "race_max_matches is 0 (no limit) .. 10000")
        if options.race_queue and self.queue is None:
            raise FailedPrecondition(
                "matchmaking_not_configured", "this service has no matchmaker to queue a race"
            )
        if rd and format == FORMAT_SCORE_RACE:
            raise BadRequest(
                "bad_round_deadline", "a score race has no rounds: its window is race_seconds"
            )
        if options.max_players < 0 or options.late_registration_rounds < 0:
            raise BadRequest("bad_options", "max_players and late_registration_rounds are >= 0")
        if options.bot_level and options.bot_level not in LEVELS:
            raise BadRequest(
                "bad_bot_level",
                f"bot_level {options.bot_level[:32]!r} is not a bot level; "
                f"use one of {', '.join(LEVELS)}",
            )
        stored_rounds = formats.validate(g, format, rounds, options)  # FormatError: bad input
        if game_options:
            try:
                g.codec().decode_options(game_options.encode())
            except Exception as e:
                raise BadRequest("bad_game_options", f"the game's options: {e}") from None
        if idempotency_key:
            tid = new_match_id(f"tournament\0{principal.subject}\0{idempotency_key}".encode())
        else:
            tid = new_match_id()
        event = TournamentCreated(
            tournament_id=tid,
            name=name or f"{game} {format}",
            game=game,
            format=format,
            rounds=stored_rounds,
            seed=seed or os.urandom(8).hex(),
            options=options,
            game_options=game_options,
            time_control=tc,
            organiser=principal.subject,
            at_ms=now_ms(),
        )
        try:
            await self._append(tid, event, 0)
        except AppendConflict:
            t = await self.load(tid)
            if idempotency_key and t.created.organiser == principal.subject:
                return tid  # a retried create
            raise AlreadyExists("tournament_exists", f"tournament {tid} exists") from None
        log.info("tournament_created", tournament=tid, game=game, format=format)
        return tid

    async def register(
        self, principal: Principal, tournament_id: str, player: str = ""
    ) -> Tournament:
        player = player or principal.subject
        if not player or len(player) > MAX_PLAYER_ID:
            raise BadRequest("bad_player", f"player ids are 1..{MAX_PLAYER_ID} characters")

        def decide(t: Tournament) -> Event:
            if player != principal.subject and not self._may_manage(principal, t):
                # players register themselves; organisers and services anyone (bots)
                raise PermissionDenied("not_organiser", "only the organiser registers others")
            e = t.entrants.get(player)
            if e is not None:
                if e.withdrawn:
                    raise FailedPrecondition("withdrawn", f"{player} withdrew from this tournament")
                raise FailedPrecondition("already_registered", f"{player} is registered already")
            at_round = 0
            swiss = t.format in (formats.FORMAT_SWISS, formats.FORMAT_SWISS_TABLES)
            if t.status == STATUS_RUNNING and t.format == FORMAT_SCORE_RACE:
                at_round = 0  # a race takes entrants while its window is open
            elif (
                t.status == STATUS_RUNNING
                and swiss
                and len(t.rounds) + 1 <= min(t.options.late_registration_rounds, t.created.rounds)
            ):
                at_round = len(t.rounds) + 1  # late: paired from the next round on
            elif t.status != STATUS_REGISTERING:
                raise FailedPrecondition(
                    "registration_closed", "registration for this tournament is closed"
                )
            cap = t.options.max_players or MAX_FIELD
            if len(t.entrants) >= cap:
                raise FailedPrecondition("tournament_full", f"the tournament is full ({cap})")
            return PlayerRegistered(
                player=player, by=principal.subject, at_round=at_round, at_ms=now_ms()
            )

        return await self._command(tournament_id, decide)

    async def withdraw(
        self, principal: Principal, tournament_id: str, player: str = ""
    ) -> Tournament:
        player = player or principal.subject

        def decide(t: Tournament) -> Event:
            if player != principal.subject and not self._may_manage(principal, t):
                raise PermissionDenied(
                    "not_allowed", "only the player or the organiser may withdraw a player"
                )
            e = t.entrants.get(player)
            if e is None:
                raise FailedPrecondition("not_registered", f"{player} is not registered")
            if e.withdrawn:
                raise FailedPrecondition("withdrawn", f"{player} has withdrawn already")
            if t.status == STATUS_FINISHED:
                raise FailedPrecondition("tournament_finished", "the tournament is over")
            return PlayerWithdrawn(player=player, by=principal.subject, at_ms=now_ms())

        return await self._command(tournament_id, decide)

    async def start(self, principal: Principal, tournament_id: str) -> Tournament:
        t = await self.load(tournament_id, fresh=True)
        if not self._may_manage(principal, t):
            raise PermissionDenied("not_organiser", "only the organiser starts the tournament")
        if t.status != STATUS_REGISTERING:
            raise FailedPrecondition("already_started", "the tournament has started already")
        game = self.registry.get(t.game)
        if (
            t.options.bot_fill
            and t.options.table_size == 2
            and t.format != FORMAT_SCORE_RACE
            and len(t.active_players()) % 2
        ):
            # bot:<level>-fill-<id>: the worker reads the level from the name
            level = t.options.bot_level
            bot = f"bot:{level}-fill-{t.id}" if level else f"bot:fill-{t.id}"
            if bot not in t.entrants:
                await self.register(Principal(principal.subject, ROLE_SERVICE), t.id, bot)
                t = await self.load(tournament_id, fresh=True)
        active = t.active_players()
        need = formats.minimum_field(t.format, t.options, game)
        if len(active) < need:
            raise FailedPrecondition(
                "not_enough_players", f"{len(active)} players; this format needs {need}"
            )
        formats.check_field(t, game, len(active))  # a bracket of tables must fit the field
        ratings = await self.seeding.ratings(t.game, active)
        order = sorted(range(len(active)), key=lambda i: (-ratings[i], t.entrants[active[i]].order))
        seeds = tuple(active[i] for i in order)

        def decide(t: Tournament) -> Event:
            if t.status != STATUS_REGISTERING:
                raise FailedPrecondition("already_started", "the tournament has started already")
            if [p for p in t.active_players()] != active:
                raise _Retry()
            return RegistrationClosed(
                seeds=seeds, ratings=tuple(ratings[i] for i in order), at_ms=now_ms()
            )

        try:
            await self._command(tournament_id, decide)
        except _Retry:  # somebody registered or withdrew meanwhile: seed again
            return await self.start(principal, tournament_id)
        log.info("tournament_started", tournament=tournament_id, players=len(seeds))
        return await self.advance(tournament_id)

    def _may_manage(self, principal: Principal, t: Tournament) -> bool:
        return principal.is_service or principal.subject == t.created.organiser

    # ========================================================= the process
    async def record(self, match_id: str, end: MatchEnd, finished_at: str = "") -> bool:
        """Record a match's result once (False: not a match of this
        tournament's current rounds, or recorded already)."""
        tid = self.owner(match_id)
        if tid is None:
            return False
        recorded = False

        def decide(t: Tournament) -> Event | None:
            nonlocal recorded
            where = t.matches.get(match_id)
            if where is None or t.recorded(match_id):
                return None
            recorded = True
            return result_event(where[0], where[1], match_id, end, None, finished_at)

        await self._command(tid, decide)
        log.info("result_recorded", tournament=tid, match=match_id, duplicate=not recorded)
        self._hit("after_record", match=match_id)
        if recorded:
            await self.advance(tid)
        return recorded

    async def record_race(self, tid: str, match_id: str, end: MatchEnd, finished_at: str) -> bool:
        recorded = False

        def decide(t: Tournament) -> Event | None:
            nonlocal recorded
            if t.status != STATUS_RUNNING or t.recorded(match_id):
                return None
            if not any(p in t.entrants and not t.entrants[p].withdrawn for p in end.players):
                return None
            recorded = True
            return MatchResultRecorded(
                round=0,
                table=0,
                match_id=match_id,
                players=end.players,
                ranks=end.ranks,
                scores=end.scores,
                reason=end.reason,
                finished_at=finished_at,
                at_ms=now_ms(),
            )

        await self._command(tid, decide)
        return recorded

    def owner(self, match_id: str) -> str | None:
        """The tournament of a match, as far as this process has read."""
        return self._owners.get(match_id)

    async def advance(self, tournament_id: str) -> Tournament:
        """Do every step that is due now (one lock per tournament in this
        process; other replicas are kept out by the expected sequences)."""
        lock = self._locks.setdefault(tournament_id, asyncio.Lock())
        async with lock:
            for _ in range(10_000):
                t = await self.load(tournament_id, fresh=True)
                try:
                    if not await self._step(t):
                        return t
                except AppendConflict:
                    metrics.APPEND_CONFLICTS.inc()
                    continue  # somebody else moved it on: look again
            raise AssertionError("advance did not settle")

    async def _step(self, t: Tournament) -> bool:
        if t.status != STATUS_RUNNING:
            return False
        if t.format == FORMAT_SCORE_RACE:
            if now_ms() >= race_end_ms(t) + RACE_GRACE_MS:
                if t.options.race_queue and self.queue is not None:
                    await self._cancel_race_tickets(t, everyone=True)
                await self._finish(t)
                return True
            if t.options.race_queue:
                return await self._race_queue_step(t)
            return False
        rnd = t.current
        if rnd is not None and not rnd.completed:
            deadline = round_deadline_ms(t, rnd)
            if (
                deadline
                and not rnd.deadline_passed
                and now_ms() >= deadline
                and any(not tb.finished for tb in rnd.tables)
            ):
                self._hit("before_deadline_passed", round=rnd.number)
                event = RoundDeadlinePassed(round=rnd.number, deadline_ms=deadline, at_ms=now_ms())
                await self._append(t.id, event, t.seq)
                metrics.DEADLINES.inc()
                log.info("round_deadline_passed", tournament=t.id, round=rnd.number)
                return True
            if rnd.deadline_passed:
                for table in rnd.tables:
                    if not table.finished:
                        await self._adjudicate(t, rnd.number, table)
                        return True
            pending = False
            for table in rnd.tables:
                if (
                    table.finished
                    and rnd.stage == formats.STAGE_ELIMINATION
                    and formats.needs_rematch(t, table)
                ):
                    await self._rematch(t, rnd.number, table)
                    return True
                if not table.finished:
                    pending = True
            if pending:
                return False
            self._hit("before_round_completed", round=rnd.number)
            await self._append(t.id, RoundCompleted(round=rnd.number, at_ms=now_ms()), t.seq)
            return True
        if t.paired is not None:
            await self._start_round(t, t.paired)
            return True
        plan = formats.plan_next(t, self.registry.get(t.game))
        if plan is None:
            await self._finish(t)
            return True
        paired = RoundPaired(
            round=plan.round,
            tables=tuple(tuple(tb) for tb in plan.tables),
            byes=tuple(plan.byes),
            stage=plan.stage,
            at_ms=now_ms(),
        )
        await self._append(t.id, paired, t.seq)
        return True

    async def _adjudicate(self, t: Tournament, round_no: int, table) -> None:
        """Decide a match its round's deadline caught unfinished: its real
        result if it has just ended, else the deadline rule
        (``adjudication``), which the match service is told first
        (``EndMatch`` with the key ``<match key>:end`` and the version the
        rule was read at), so the match ends there too and both say the same:
        the event appended is then what the match service stored. A match that
        ended in the meantime keeps its real result; one that moved is looked
        at again. Appended once: only while the match id has no result, with
        the expected sequence; a crash anywhere is taken over by whoever
        advances next (the same key ends the match once)."""
        match_id = table.matches[-1]
        key = match_key(t.id, round_no, table.table, len(table.matches)) + ":end"
        now = await self.matches.snapshot(match_id)
        self._hit("before_adjudicate", round=round_no, table=table.table)
        awaiting: tuple[int, ...] | None = None
        for _ in range(END_ATTEMPTS):
            if now.end is not None:
                break
            awaiting = now.awaiting
            ranks, scores, _void = adjudication(now.players, awaiting)
            answer = await self.matches.end(
                match_id, ranks, scores, ADJUDICATION_REASON, key, now.version
            )
            self._hit("after_end_match", round=round_no, table=table.table, answer=answer)
            if answer == END_UNSUPPORTED:  # an older match service: the match runs on there
                log.warning("end_match_unsupported", tournament=t.id, match=match_id)
                break
            now = await self.matches.snapshot(match_id)
        else:
            raise Aborted("too_much_contention", f"match {match_id} kept moving at its deadline")
        end = now.end
        if end is None:  # not ended at the match service: the rule, as read
            assert awaiting is not None
            ranks, scores, _void = adjudication(now.players, awaiting)
            end = MatchEnd(now.players, ranks, scores, ADJUDICATED_PREFIX + ADJUDICATION_REASON)
        appended: Event | None = None

        def decide(t: Tournament) -> Event | None:
            nonlocal appended
            appended = None
            if t.recorded(match_id):
                return None
            # (no advance for a real result: we hold the lock)
            appended = result_event(round_no, table.table, match_id, end, awaiting)
            return appended

        await self._command(t.id, decide)
        if isinstance(appended, MatchAdjudicated):
            metrics.ADJUDICATED.inc()
            log.info("match_adjudicated", tournament=t.id, match=match_id, void=appended.void)

    # ---------------------------------------------- a race through the queue
    def race_due(self, t: Tournament) -> list[str]:
        """The entrants to queue now: not withdrawn, not a bot (the
        matchmaker takes people; its own bots fill seats with ``bot_fill``),
        neither searching nor in a race match without a result, under
        ``race_max_matches``, while the window is open."""
        return [
            p
            for p in t.active_players()
            if not is_bot(p) and (t.id, p) not in self._race_refused and self._due_now(t, p)
        ]

    async def _race_queue_step(self, t: Tournament) -> bool:
        """Queue the entrants who are due, up to ``RACE_QUEUE_BATCH`` at once
        (one step), or cancel the tickets of those withdrawn. A replica
        without a matchmaker leaves it to those with one."""
        if self.queue is None:
            return False
        due = self.race_due(t)
        if not due:  # the window over: nobody searches on; else only the withdrawn stop
            await self._cancel_race_tickets(t, everyone=now_ms() >= race_end_ms(t))
            return False
        assert self.queue is not None
        batch = due[:RACE_QUEUE_BATCH]
        tickets = await asyncio.gather(*(self._enqueue_entrant(t, p) for p in batch))
        if all(tk is None for tk in tickets):
            return any((t.id, p) in self._race_refused for p in batch)
        for player, ticket in zip(batch, tickets, strict=True):
            if ticket is None:
                continue
            self._hit("after_race_enqueue", player=player)

            def decide(t: Tournament, player: str = player, ticket: str = ticket) -> Event | None:
                if ticket in t.race_tickets or player not in self._due_now(t, player):
                    return None
                return RaceQueued(player=player, ticket_id=ticket, at_ms=now_ms())

            t = await self._command(t.id, decide)
            if ticket not in t.race_tickets:
                with contextlib.suppress(grpc.aio.AioRpcError):  # no longer due: not left searching
                    await self.queue.cancel(ticket)
        return True

    def _due_now(self, t: Tournament, player: str) -> list[str]:
        """``[player]`` if the entrant is still due (the check of one entrant)."""
        e = t.entrants.get(player)
        if e is None or e.withdrawn or t.status != STATUS_RUNNING or now_ms() >= race_end_ms(t):
            return []
        cap = t.options.race_max_matches
        if t.race_busy(player) or (cap and t.race_matches_of(player) >= cap):
            return []
        return [player]

    async def _enqueue_entrant(self, t: Tournament, player: str) -> str | None:
        """The entrant's ticket in the race's pool (None: not now)."""
        assert self.queue is not None
        spec = clocks.format_spec(match_time_control(t.created.time_control))
        try:
            return await self.queue.enqueue(
                t.game, player, [t.options.table_size], spec, t.options.bot_fill, race_pool(t.id),
                race_ticket_key(t.id, player, t.race_queued_of(player)),
            )  # fmt: skip
        except Unavailable as e:  # the matchmaker is away: the next sweep tries again
            log.warning("race_enqueue_unavailable", tournament=t.id, error=str(e))
        except QueuedElsewhere as e:  # in a public queue: due again once that ticket ends
            log.info("race_entrant_queued_elsewhere", tournament=t.id, player=player,
                     ticket=e.ticket_id)  # fmt: skip
        except grpc.aio.AioRpcError as e:  # refused for this player: the others go on
            log.warning("race_enqueue_refused", tournament=t.id, player=player, error=e.details())
            self._race_refused.add((t.id, player))
        return None

    async def _cancel_race_tickets(self, t: Tournament, *, everyone: bool) -> None:
        """Cancel the searching tickets of withdrawn entrants (``everyone``:
        all of them, the race is closing). Their watchers record the end."""
        assert self.queue is not None
        for ticket, tk in t.race_tickets.items():
            if tk.state == "searching" and (everyone or t.out(tk.player)):
                try:
                    await self.queue.cancel(ticket)
                except grpc.aio.AioRpcError as e:  # the matchmaker away: it expires the ticket
                    log.warning("race_cancel_failed", ticket=ticket, error=e.details())

    async def race_ticket_ended(self, tournament_id: str, ticket: str, end: TicketEnd) -> bool:
        """Record how a race ticket ended (once): a match (the race's own:
        it counts) or not (the entrant is queued again while the window is
        open)."""
        done = False

        def decide(t: Tournament) -> Event | None:
            nonlocal done
            done = False
            tk = t.race_tickets.get(ticket)
            if tk is None or tk.state != "searching" or t.status != STATUS_RUNNING:
                return None
            done = True
            if end.state == "matched" and end.match_id:
                return RaceMatched(
                    player=tk.player, ticket_id=ticket, match_id=end.match_id, at_ms=now_ms()
                )
            return RaceTicketEnded(
                player=tk.player, ticket_id=ticket, state=end.state, reason=end.reason,
                at_ms=now_ms(),
            )  # fmt: skip

        await self._command(tournament_id, decide)
        if done:
            log.info("race_ticket_ended", tournament=tournament_id, ticket=ticket, state=end.state)
        return done

    async def _finish(self, t: Tournament) -> None:
        self._hit("before_finished")
        standings = tuple(formats.standings(t))
        await self._append(t.id, TournamentFinished(standings=standings, at_ms=now_ms()), t.seq)
        log.info(
            "tournament_finished", tournament=t.id, winner=standings[0].player if standings else ""
        )

    async def _create(self, t: Tournament, players: list[str], key: str) -> str:
        match_id = await self.matches.create(
            t.game, players, t.created.game_options, t.created.time_control,
            t.options.public_replay, key,
        )  # fmt: skip
        metrics.MATCHES_CREATED.inc()
        bots = {p: s for s, p in enumerate(players) if is_bot(p)}
        if bots:
            await self.bots.enqueue(match_id, t.game, bots)
        return match_id

    async def _start_round(self, t: Tournament, plan: RoundPaired) -> None:
        # The sequence the decision was made at, read before any await: ``t``
        # is the cached projection, which another coroutine of this process
        # may fold newer events into meanwhile (a result recorded from a
        # fact); appending at its later ``t.seq`` could start the round twice.
        expected = t.seq
        started = time.perf_counter()
        sem = asyncio.Semaphore(self.config.create_concurrency)

        async def create(k: int, players: tuple[str, ...]) -> Table:
            async with sem:
                key = match_key(t.id, plan.round, k)
                match_id = await self._create(t, list(players), key)
                self._hit("after_create", round=plan.round, table=k)
                return Table(table=k, players=tuple(players), match_id=match_id)

        tables = await asyncio.gather(
            *(create(k, players) for k, players in enumerate(plan.tables, 1))
        )
        self._hit("before_round_started", round=plan.round)
        event = RoundStarted(
            round=plan.round,
            tables=tuple(tables),
            byes=plan.byes,
            stage=plan.stage,
            at_ms=now_ms(),
        )
        await self._append(t.id, event, expected)
        metrics.ROUND_START_SECONDS.observe(time.perf_counter() - started)
        log.info(
            "round_started",
            tournament=t.id,
            round=plan.round,
            tables=len(tables),
            byes=len(plan.byes),
        )

    async def _rematch(self, t: Tournament, round_no: int, table) -> None:
        expected = t.seq  # read before any await (see _start_round)
        game_no = len(table.matches) + 1
        players = list(reversed(table.players))  # the other player sits first
        match_id = await self._create(t, players, match_key(t.id, round_no, table.table, game_no))
        event = RematchStarted(
            round=round_no,
            table=table.table,
            game=game_no,
            players=tuple(players),
            match_id=match_id,
            at_ms=now_ms(),
        )
        await self._append(t.id, event, expected)

    # ============================================================= queries
    async def get(self, tournament_id: str) -> Tournament:
        return await self.load(tournament_id, fresh=True)

    async def list(self, status: str = "", game: str = "") -> list[Tournament]:
        out = []
        for tid in await self._io(self.store.ids()):
            t = await self.load(tid, fresh=True)
            if (not status or t.status == status) and (not game or t.game == game):
                out.append(t)
        out.sort(key=lambda t: (t.created.at_ms, t.id), reverse=True)
        return out

    async def watch(
        self, tournament_id: str, after_seq: int = 0
    ) -> AsyncIterator[tuple[int, Event]]:
        """Every event after ``after_seq`` (a stream sequence), then each new
        one; ends after ``TournamentFinished``."""
        t = await self.load(tournament_id, fresh=True)
        if t.status == STATUS_FINISHED and after_seq >= t.seq:
            return
        try:
            async for seq, e in self.store.commits(tournament_id, after_seq, follow=True):
                yield seq, e
                if isinstance(e, TournamentFinished):
                    return
        except StoreUnavailable as e:
            raise Unavailable("store_unavailable", str(e)) from None

    # ========================================================== projection
    async def load(self, tournament_id: str, *, fresh: bool = False) -> Tournament:
        if not valid_match_id(tournament_id):
            raise BadRequest("bad_tournament_id", "malformed tournament id")
        t = self._cache.get(tournament_id)
        if t is not None and not fresh:
            return t
        if t is not None and t.status == STATUS_FINISHED:
            return t  # nothing comes after TournamentFinished
        last = await self._io(self.store.last_seq(tournament_id))
        if t is not None and last == t.seq:
            return t
        after = t.seq if t is not None else 0
        items = [x async for x in self._io_iter(self.store.commits(tournament_id, after))]
        if t is None and not items:
            raise TournamentNotFound(tournament_id)
        t = fold(items, t)
        self._cache[tournament_id] = t
        for _seq, e in items:
            if isinstance(e, RoundStarted):
                for table in e.tables:
                    self._owners[table.match_id] = tournament_id
            elif isinstance(e, RematchStarted):
                self._owners[e.match_id] = tournament_id
        return t

    def forget(self) -> None:
        """Drop every projection held in memory (tests: a fresh replica)."""
        self._cache.clear()
        self._owners.clear()

    def cached(self) -> list[Tournament]:
        return list(self._cache.values())

    async def _command(self, tournament_id: str, decide) -> Tournament:
        for _ in range(APPEND_ATTEMPTS):
            t = await self.load(tournament_id, fresh=True)
            event = decide(t)
            if event is None:
                return t
            try:
                await self._append(tournament_id, event, t.seq)
            except AppendConflict:
                metrics.APPEND_CONFLICTS.inc()
                continue
            return await self.load(tournament_id, fresh=True)
        raise Aborted("too_much_contention", "the tournament changed too often; try again")

    async def _append(self, tournament_id: str, event: Event, expected: int) -> int:
        digest = hashlib.sha256(self.store.encode(event)).hexdigest()[:24]
        seq, _dup = await self._io(
            self.store.append(
                tournament_id, event, expected, f"{tournament_id}:{expected}:{digest}"
            )
        )
        metrics.EVENTS.labels(event_type(event)).inc()
        return seq

    async def _io(self, call):
        try:
            return await call
        except StoreUnavailable as e:
            raise Unavailable("store_unavailable", str(e)) from None

    async def _io_iter(self, it):
        try:
            async for x in it:
                yield x
        except StoreUnavailable as e:
            raise Unavailable("store_unavailable", str(e)) from None


class _Retry(Exception):
    pass


class TournamentNotFoundGame(NotFound):
    def __init__(self, game: str) -> None:
        super().__init__("unknown_game", f"no game {game!r}", game=game)
