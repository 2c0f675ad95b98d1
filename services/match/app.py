"""The match application: create, move, read, watch, replay, list.

The per-move loop (``submit``) is short: load the projection (in memory, else
Redis, else fold the stream), ask the rules once, append once with the
expected stream sequence, and write the cache after answering. A lost race
(JetStream error 10071) reads only the commits since the decision: if one of
them carries the same idempotency key, that is the answer; otherwise the move
is decided again on the new state (when the client sent no
``expected_version``), a bounded number of times.
"""

from __future__ import annotations

import asyncio
import os
import time
from collections import OrderedDict
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass
from typing import Any, TypeVar

import structlog

from engine_core.errors import EngineError, GameOver, IllegalMove
from engine_core.types import Outcome
from services.common.auth import Principal, is_bot
from services.common.errors import InvalidArgument, PermissionDenied, ServiceError
from services.match import metrics
from services.match.errors import (
    BadRequest,
    MatchExists,
    MatchNotFound,
    StaleVersion,
    TooMuchContention,
    Unavailable,
)
from services.match.index import MatchIndex, finished_fact, publish_finished
from services.match.model import (
    KIND_CREATED,
    KIND_MOVE,
    STATUS_ACTIVE,
    STATUS_FINISHED,
    Commit,
    Decision,
    MatchMeta,
    MatchOptions,
    Projection,
    key_digest,
    new_match_id,
    now_ms,
    valid_match_id,
)
from services.match.ports import AppendConflict, ProjectionCache, RulesClient, RulesUnavailable
from services.match.store import JetStreamStore, StoreUnavailable

log = structlog.get_logger("tabletop.match")

T = TypeVar("T")

MAX_PLAYERS_IDS = 16
MAX_MOVE_BYTES = 64 * 1024
MAX_KEY_LENGTH = 200
REPLAY_MAX_PAUSE_S = 2.0


@dataclass(frozen=True, slots=True)
class AppConfig:
    rules_timeout_s: float = 2.0
    max_decide_attempts: int = 5
    hot_cache_size: int = 1024
    allow_player_create: bool = True
    results_stream: str = "RESULTS"
    results_prefix: str = "results"


@dataclass(frozen=True, slots=True)
class MoveResult:
    match_id: str
    version: int
    seat: int
    events: tuple[str, ...]
    status: str
    outcome: Outcome | None


@dataclass(frozen=True, slots=True)
class MatchView:
    projection: Projection
    your_seat: int | None
    view: str
    legal_moves: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class CommitView:
    """A commit as one caller may see it."""

    version: int
    seat: int | None
    events: tuple[str, ...]
    view: str
    status: str
    outcome: Outcome | None
    committed_at: str
    move: str


class MatchApp:
    def __init__(
        self,
        *,
        rules: RulesClient,
        store: JetStreamStore,
        cache: ProjectionCache,
        index: MatchIndex,
        config: AppConfig | None = None,
    ) -> None:
        self.rules = rules
        self.store = store
        self.cache = cache
        self.index = index
        self.config = config or AppConfig()
        self._hot: OrderedDict[str, Projection] = OrderedDict()
        self._background: set[asyncio.Task[Any]] = set()
        self._writes: dict[str, asyncio.Task[Any]] = {}

    # ================================================================ create
    async def create(
        self,
        principal: Principal,
        *,
        game: str,
        players: list[str],
        options: str = "",
        match_options: MatchOptions | None = None,
        idempotency_key: str = "",
    ) -> tuple[str, int]:
        if not (principal.is_service or self.config.allow_player_create):
            raise PermissionDenied("service_only", "only services may create matches")
        if not players or len(players) > MAX_PLAYERS_IDS:
            raise BadRequest(f"a match needs 1..{MAX_PLAYERS_IDS} players", "bad_players")
        if any(not p or len(p) > 200 for p in players):
            raise BadRequest("player ids must be 1..200 characters", "bad_players")
        if len(idempotency_key) > MAX_KEY_LENGTH:
            raise BadRequest("idempotency key too long", "bad_key")
        entropy = os.urandom(32)
        try:
            decision = await self._rules(self.rules.setup(game, len(players), options, entropy))
        except IllegalMove as e:
            if e.code == "player_count":  # bad input (as the rules service says it)
                raise InvalidArgument("bad_player_count", e.message) from None
            raise
        key = key_digest("", principal.subject, idempotency_key) if idempotency_key else ""
        seed = f"{principal.subject}\0{idempotency_key}".encode() if idempotency_key else None
        match_id = new_match_id(seed)
        commit = Commit(
            version=0,
            kind=KIND_CREATED,
            time_ms=now_ms(),
            entropy=entropy,
            events=decision.events,
            redacted=decision.redacted,
            rules_version=decision.rules_version,
            awaiting=decision.awaiting,
            outcome=decision.outcome,
            key=key,
            game=game,
            players=tuple(players),
            options=options,
            match_options=match_options or MatchOptions(),
            creator=principal.subject,
        )
        try:
            seq, _ = await self._append(match_id, commit, 0, f"create:{match_id}")
        except AppendConflict:
            first = await self.store.first(match_id)
            if (
                first is not None
                and key
                and first[1].key == key
                and first[1].creator == principal.subject
            ):
                return match_id, 0  # a retried create
            raise MatchExists(f"match {match_id} already exists") from None
        meta = MatchMeta.from_creation(match_id, commit)
        projection = Projection(
            meta=meta,
            version=0,
            seq=seq,
            state=decision.state,
            awaiting=decision.awaiting,
            outcome=decision.outcome,
            keys={},
        )
        self._remember(projection)
        self._cache_later(match_id, lambda: self.cache.put(projection))
        try:
            await self.index.record(meta, STATUS_ACTIVE)
        except Exception:  # the match exists; only ListMatches misses it
            log.exception("match_not_indexed", match=match_id)
        metrics.MATCHES_CREATED.inc()
        log.info("match_created", match=match_id, game=game, players=len(players))
        return match_id, 0

    # ================================================================ submit
    async def submit(
        self,
        principal: Principal,
        match_id: str,
        move: str,
        *,
        expected_version: int | None = None,
        idempotency_key: str = "",
        seat: int | None = None,
    ) -> MoveResult:
        started = time.perf_counter()
        result = "error"
        try:
            reply = await self._submit(
                principal, match_id, move, expected_version, idempotency_key, seat
            )
            result = reply.status
            return reply
        except Exception as e:
            result = getattr(e, "reason", None) or getattr(e, "code", None) or "error"
            raise
        finally:
            metrics.SUBMIT_SECONDS.labels(result).observe(time.perf_counter() - started)

    async def _submit(
        self,
        principal: Principal,
        match_id: str,
        move: str,
        expected_version: int | None,
        idempotency_key: str,
        seat: int | None,
    ) -> MoveResult:
        if len(move) > MAX_MOVE_BYTES:
            raise BadRequest("move too large", "move_too_large")
        if len(idempotency_key) > MAX_KEY_LENGTH:
            raise BadRequest("idempotency key too long", "bad_key")
        p = await self.load(match_id)
        seat = self._mover_seat(principal, p, seat)
        key = idempotency_key or os.urandom(16).hex()
        digest = key_digest(match_id, principal.subject, key)
        verified = False  # whether ``p`` was checked against the stream's head
        for _attempt in range(self.config.max_decide_attempts):
            if digest in p.keys:
                metrics.IDEMPOTENT_REPLIES.inc()
                stored = await self._store(self.store.commit_at(p.keys[digest]))
                return await self._answer(p.meta, stored)
            if expected_version is not None and expected_version != p.version:
                raise StaleVersion(
                    f"the match is at version {p.version}, not {expected_version}", p.version
                )
            if p.outcome is not None:
                raise GameOver(message="the game is over")
            entropy = os.urandom(32)
            try:
                decision = await self._rules(self.rules.decide(p.state, seat, move, entropy))
            except Unavailable:
                raise
            except (EngineError, ServiceError):
                # A rejection decided on a projection that may be stale (an
                # old Redis entry, another replica moved): answer it only once
                # the projection is known to be the stream's head.
                if verified:
                    raise
                verified = True
                if await self._store(self.store.last_seq(match_id)) == p.seq:
                    raise
                p = await self._catch_up(p)
                continue
            commit = Commit(
                version=p.version + 1,
                kind=KIND_MOVE,
                time_ms=now_ms(),
                entropy=entropy,
                events=decision.events,
                redacted=decision.redacted,
                rules_version=decision.rules_version,
                awaiting=decision.awaiting,
                outcome=decision.outcome,
                seat=seat,
                player=principal.subject,
                move=move,
                key=digest,
            )
            try:
                seq, duplicate = await self._append(match_id, commit, p.seq, f"{match_id}:{digest}")
            except AppendConflict:
                metrics.APPEND_CONFLICTS.inc()
                p = await self._catch_up(p)
                continue
            if duplicate:  # the same key was appended at ``seq`` meanwhile
                metrics.IDEMPOTENT_REPLIES.inc()
                stored = await self._store(self.store.commit_at(seq))
                p = await self._catch_up(p)
                return await self._answer(p.meta, stored)
            return await self._applied(p, commit, seq, decision, digest)
        raise TooMuchContention(
            f"the move lost {self.config.max_decide_attempts} races in a row", p.version
        )

    async def _applied(
        self, p: Projection, commit: Commit, seq: int, decision: Decision, digest: str
    ) -> MoveResult:
        new = Projection(
            meta=p.meta,
            version=commit.version,
            seq=seq,
            state=decision.state,
            awaiting=decision.awaiting,
            outcome=decision.outcome,
            keys={**p.keys, digest: seq},
        )
        self._remember(new)
        self._cache_later(new.meta.match_id, lambda: self._write_forward(new, {digest: seq}))
        if commit.outcome is not None:
            await self._finished(p.meta, commit)
        assert commit.seat is not None
        return MoveResult(
            match_id=p.meta.match_id,
            version=commit.version,
            seat=commit.seat,
            events=commit.visible_events(commit.seat),
            status=STATUS_FINISHED if commit.outcome is not None else STATUS_ACTIVE,
            outcome=commit.outcome,
        )

    async def _answer(self, meta: MatchMeta, c: Commit) -> MoveResult:
        assert c.seat is not None
        if c.outcome is not None:  # the first answer may have died before the fact went out
            await self._finished(meta, c)
        return MoveResult(
            match_id=meta.match_id,
            version=c.version,
            seat=c.seat,
            events=c.visible_events(c.seat),
            status=STATUS_FINISHED if c.outcome is not None else STATUS_ACTIVE,
            outcome=c.outcome,
        )

    async def _finished(self, meta: MatchMeta, commit: Commit) -> None:
        """Publish ``MatchFinished`` (deduplicated by its message id) and
        mark the match finished in the index."""
        try:
            await publish_finished(
                self.store.js,
                self.config.results_prefix,
                self.config.results_stream,
                finished_fact(meta, commit),
            )
            await self.index.record(meta, STATUS_FINISHED)
            metrics.MATCHES_FINISHED.inc()
        except Exception:
            log.exception("match_finished_not_published", match=meta.match_id)

    def _mover_seat(self, principal: Principal, p: Projection, hint: int | None) -> int:
        players = p.meta.players
        if principal.is_service:
            mine = [s for s, pid in enumerate(players) if is_bot(pid)]
        else:
            mine = [s for s, pid in enumerate(players) if pid == principal.subject]
        if not mine:
            raise PermissionDenied("not_seated", "you have no seat in this match")
        if hint is not None:
            if hint not in mine:
                raise PermissionDenied("not_your_seat", f"seat {hint} is not yours")
            return hint
        if len(mine) == 1:
            return mine[0]
        awaited = [s for s in mine if s in p.awaiting]
        if len(awaited) == 1:
            return awaited[0]
        raise BadRequest("you hold several seats here: say which one moves", "seat_ambiguous")

    @staticmethod
    def viewer_seat(principal: Principal, meta: MatchMeta) -> int | None:
        for s, pid in enumerate(meta.players):
            if pid == principal.subject:
                return s
        return None

    # ================================================================= reads
    async def get(self, principal: Principal, match_id: str) -> MatchView:
        p = await self.load(match_id, fresh=True)
        seat = self.viewer_seat(principal, p.meta)
        view = await self._rules(self.rules.view(p.state, seat))
        legal: tuple[str, ...] = ()
        if seat is not None and p.outcome is None and seat in p.awaiting:
            legal = await self._rules(self.rules.legal_moves(p.state, seat))
        return MatchView(projection=p, your_seat=seat, view=view, legal_moves=legal)

    async def watch(
        self,
        principal: Principal,
        match_id: str,
        after_version: int | None,
        *,
        include_view: bool = False,
    ) -> AsyncIterator[CommitView]:
        p = await self.load(match_id, fresh=True)
        meta = p.meta
        seat = self.viewer_seat(principal, meta)
        metrics.WATCHERS.inc()
        metrics.WATCHERS_CONNECTED.inc()
        try:
            async for view in self._watch(p, seat, after_version, include_view):
                yield view
        finally:
            metrics.WATCHERS_CONNECTED.dec()

    async def _watch(
        self, p: Projection, seat: int | None, after_version: int | None, include_view: bool
    ) -> AsyncIterator[CommitView]:
        meta = p.meta
        match_id = meta.match_id
        if after_version is not None and after_version > p.version:
            raise BadRequest(
                f"the match is at version {p.version}; nothing is known after {after_version}",
                "version_ahead",
            )
        if p.outcome is not None and after_version is not None and after_version >= p.version:
            return
        state: bytes | None = None
        if after_version is not None and after_version == p.version:
            start, skip, state = p.seq, after_version, p.state
        elif after_version is not None and not include_view:
            # no state needed: start right after that version's commit
            found = await self._store(self.store.seq_of_version(match_id, after_version, p.seq))
            start, skip = (found, after_version) if found is not None else (0, after_version)
        else:
            start, skip = 0, -1 if after_version is None else after_version
        pending: list[str] = []  # events of skipped commits, folded in one call
        async for _seq, c in self._store_iter(self.store.commits(match_id, start, follow=True)):
            if include_view:
                pending.extend(c.events)
            if c.version <= skip:
                continue
            view = ""
            if include_view:
                if pending:
                    state = await self._rules(self.rules.evolve(meta.game, state, pending))
                    pending.clear()
                assert state is not None
                view = await self._rules(self.rules.view(state, seat))
            yield self._commit_view(c, seat, view, full=False)
            if c.outcome is not None:
                return

    async def replay(
        self,
        principal: Principal,
        match_id: str,
        *,
        from_version: int = 0,
        to_version: int | None = None,
        speed: float = 0.0,
        include_view: bool = False,
    ) -> AsyncIterator[CommitView]:
        if speed < 0:
            raise BadRequest("speed must be >= 0", "bad_speed")
        p = await self.load(match_id, fresh=True)
        full = p.outcome is not None and p.meta.match_options.public_replay
        seat = None if full else self.viewer_seat(principal, p.meta)
        state: bytes | None = None
        previous_ms: int | None = None
        pending: list[str] = []  # events of skipped commits, folded in one call
        commits = self.store.commits(match_id, 0, upto_seq=p.seq)
        async for _seq, c in self._store_iter(commits):
            if include_view:
                pending.extend(c.events)
            if c.version < from_version:
                continue
            if to_version is not None and c.version > to_version:
                return
            if speed > 0 and previous_ms is not None:
                pause = min(REPLAY_MAX_PAUSE_S, max(0, c.time_ms - previous_ms) / 1000)
                await asyncio.sleep(pause / speed)
            previous_ms = c.time_ms
            view = ""
            if include_view:
                if pending:
                    state = await self._rules(self.rules.evolve(p.meta.game, state, pending))
                    pending.clear()
                assert state is not None
                view = await self._rules(self.rules.view(state, seat, full=full))
            yield self._commit_view(c, seat, view, full=full)

    @staticmethod
    def _commit_view(c: Commit, seat: int | None, view: str, *, full: bool) -> CommitView:
        # A move may carry a secret choice: only its own seat (or a full
        # replay) sees it; everyone sees the redacted events.
        return CommitView(
            version=c.version,
            seat=c.seat,
            events=c.events if full else c.visible_events(seat),
            view=view,
            status=STATUS_FINISHED if c.outcome is not None else STATUS_ACTIVE,
            outcome=c.outcome,
            committed_at=c.committed_at,
            move=c.move if full or (seat is not None and seat == c.seat) else "",
        )

    async def list_matches(self, player: str, status: str | None) -> list[Any]:
        return await self.index.matches_of(player, status)

    # ============================================================ projection
    async def load(self, match_id: str, *, fresh: bool = False) -> Projection:
        """The match's projection: in memory, else Redis, else folded from the
        stream. ``fresh`` also checks the stream's head and catches up."""
        if not valid_match_id(match_id):
            raise BadRequest("malformed match id", "bad_match_id")
        p = self._hot.get(match_id)
        if p is None:
            p = await self.cache.get(match_id)
            if p is None:
                p = await self._rebuild(match_id)
                metrics.PROJECTION_LOOKUPS.labels("stream").inc()
            else:
                metrics.PROJECTION_LOOKUPS.labels("redis").inc()
            self._remember(p)
        else:
            metrics.PROJECTION_LOOKUPS.labels("memory").inc()
        if fresh:
            last = await self._store(self.store.last_seq(match_id))
            if last > p.seq:
                p = await self._catch_up(p)
        else:
            self._hot.move_to_end(match_id)
        return p

    async def _rebuild(self, match_id: str) -> Projection:
        items = [x async for x in self._store_iter(self.store.commits(match_id, 0))]
        if not items:
            raise MatchNotFound(f"no match {match_id}")
        p = await self._fold(match_id, None, items)
        self._cache_later(match_id, lambda: self.cache.put(p))
        metrics.REBUILDS.inc()
        log.info("projection_rebuilt", match=match_id, version=p.version)
        return p

    async def _catch_up(self, p: Projection) -> Projection:
        """``p`` plus the commits appended since it (read from the stream)."""
        items = [x async for x in self._store_iter(self.store.commits(p.meta.match_id, p.seq))]
        if not items:
            return p
        metrics.CATCH_UPS.inc()
        new = await self._fold(p.meta.match_id, p, items)
        self._remember(new)
        self._cache_later(new.meta.match_id, lambda: self.cache.put(new))
        return new

    async def _fold(
        self, match_id: str, base: Projection | None, items: list[tuple[int, Commit]]
    ) -> Projection:
        if base is None:
            first = items[0][1]
            if first.kind != KIND_CREATED or first.version != 0:
                raise MatchNotFound(f"match {match_id} has no creation commit")
            meta = MatchMeta.from_creation(match_id, first)
            state, version, keys = None, -1, {}
        else:
            meta, state, version, keys = base.meta, base.state, base.version, dict(base.keys)
        events: list[str] = []
        for seq, c in items:
            if c.version != version + 1:
                raise RuntimeError(f"match {match_id}: version {c.version} after {version}")
            version = c.version
            events.extend(c.events)
            if c.key and c.kind == KIND_MOVE:
                keys[c.key] = seq
        new_state = (
            await self._rules(self.rules.evolve(meta.game, state, events)) if events else state
        )
        assert new_state is not None
        last_seq, last = items[-1]
        return Projection(
            meta=meta,
            version=version,
            seq=last_seq,
            state=new_state,
            awaiting=last.awaiting,
            outcome=last.outcome,
            keys=keys,
        )

    async def _write_forward(self, p: Projection, new_keys: dict[str, int]) -> None:
        """One cache write per move: the increment; if Redis is not exactly one
        version behind (a write still in flight, a flush), the whole latest
        projection instead, so Redis does not stay behind."""
        if await self.cache.put(p, new_keys):
            return
        latest = self._hot.get(p.meta.match_id, p)
        await self.cache.put(latest if latest.version >= p.version else p)

    def _remember(self, p: Projection) -> None:
        current = self._hot.get(p.meta.match_id)
        if current is not None and current.version > p.version:
            return
        self._hot[p.meta.match_id] = p
        self._hot.move_to_end(p.meta.match_id)
        while len(self._hot) > self.config.hot_cache_size:
            self._hot.popitem(last=False)

    def forget(self, match_id: str | None = None) -> None:
        """Drop the in-memory projections (all, or one match's)."""
        if match_id is None:
            self._hot.clear()
        else:
            self._hot.pop(match_id, None)

    # =============================================================== plumbing
    async def _rules(self, call: Awaitable[T]) -> T:
        try:
            return await asyncio.wait_for(call, self.config.rules_timeout_s)
        except (TimeoutError, RulesUnavailable) as e:
            raise Unavailable(
                "rules_unavailable", f"the rules service is unavailable: {e or 'timeout'}"
            ) from None

    async def _store(self, call: Awaitable[T]) -> T:
        try:
            return await call
        except StoreUnavailable as e:
            raise Unavailable("store_unavailable", str(e)) from None

    async def _store_iter(self, it: AsyncIterator[T]) -> AsyncIterator[T]:
        try:
            async for x in it:
                yield x
        except StoreUnavailable as e:
            raise Unavailable("store_unavailable", str(e)) from None

    async def _append(
        self, match_id: str, commit: Commit, expected: int, msg_id: str
    ) -> tuple[int, bool]:
        return await self._store(self.store.append(match_id, commit, expected, msg_id))

    def _cache_later(self, match_id: str, write: Callable[[], Awaitable[Any]]) -> None:
        """A cache write after the answer, in order per match: each waits for
        the match's previous write, so increments land one after the other."""
        previous = self._writes.get(match_id)

        async def run() -> None:
            if previous is not None:
                await asyncio.wait([previous])
            await write()

        task = asyncio.ensure_future(run())
        self._writes[match_id] = task

        def done(t: asyncio.Task[Any]) -> None:
            if self._writes.get(match_id) is t:
                del self._writes[match_id]

        task.add_done_callback(done)
        self._background.add(task)
        task.add_done_callback(self._background.discard)

    async def drain(self) -> None:
        """Wait for the background cache writes (graceful shutdown, tests)."""
        while self._background:
            await asyncio.gather(*list(self._background), return_exceptions=True)
