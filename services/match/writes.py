"""The write path: create a match, submit a move.

The per-move loop (``submit``) is short: load the projection (in memory, else
Redis, else fold the stream), ask the rules once, append once with the
expected stream sequence, and write the cache after answering (and, for
the move that finishes the match, the index's mark and the ``MatchFinished``
fact: ``_finish_soon``). A lost race
(JetStream error 10071) reads only the commits since the decision: if one of
them carries the same idempotency key, that is the answer; otherwise the move
is decided again on the new state (when the client sent no
``expected_version``), a bounded number of times.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import time

import msgspec
import structlog

from engine_core.errors import EngineError, GameOver, IllegalMove
from engine_core.types import Outcome
from services.common.auth import MAX_PLAYER_ID_CHARS, Principal, is_bot, valid_player_id
from services.common.errors import InvalidArgument, PermissionDenied, ServiceError
from services.common.standin import known_bot
from services.match import clocks, metrics
from services.match.base import MAX_KEY_LENGTH, MAX_MOVE_BYTES, MAX_PLAYERS_IDS
from services.match.errors import (
    BadRequest,
    IdempotencyKeyReused,
    MatchExists,
    OutcomeUnknown,
    StaleVersion,
    TimeExpired,
    TooMuchContention,
    Unavailable,
)
from services.match.index import finished_fact
from services.match.model import (
    KIND_CREATED,
    KIND_MOVE,
    STATUS_ACTIVE,
    STATUS_FINISHED,
    Clocks,
    Commit,
    Decision,
    MatchMeta,
    MatchOptions,
    Projection,
    key_digest,
    new_match_id,
    now_ms,
    request_digest,
    same_request,
)
from services.match.ports import AppendConflict
from services.match.projections import Projections

log = structlog.get_logger("tabletop.match")


class MoveResult(msgspec.Struct, frozen=True):
    match_id: str
    version: int
    seat: int
    events: tuple[str, ...]
    status: str
    outcome: Outcome | None
    clocks: Clocks | None = None


class Writes(Projections):
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
        for i, p in enumerate(players):
            if not valid_player_id(p):  # the ticket's (one of them) was bad: say which
                raise InvalidArgument(
                    "bad_players",
                    f"player ids must be 1..{MAX_PLAYER_ID_CHARS} printable characters",
                    index=str(i),
                    player=p,
                )
        if len(idempotency_key) > MAX_KEY_LENGTH:
            raise BadRequest("idempotency key too long", "bad_key")
        match_options = self._match_options(game, match_options)
        entropy = os.urandom(32)
        try:
            decision = await self._rules(self.rules.setup(game, len(players), options, entropy))
        except IllegalMove as e:
            if e.code == "player_count":  # bad input (as the rules service says it)
                raise InvalidArgument("bad_player_count", e.message) from None
            raise
        key = key_digest("", principal.subject, idempotency_key) if idempotency_key else ""
        request = (
            request_digest(
                "create", game, len(players), *players, options, match_options or MatchOptions()
            )
            if idempotency_key
            else ""
        )
        seed = f"{principal.subject}\0{idempotency_key}".encode() if idempotency_key else None
        match_id = new_match_id(seed)
        time_ms = now_ms()
        commit = Commit(
            version=0,
            kind=KIND_CREATED,
            time_ms=time_ms,
            entropy=entropy,
            events=decision.events,
            redacted=decision.redacted,
            rules_version=decision.rules_version,
            awaiting=decision.awaiting,
            outcome=decision.outcome,
            clocks=clocks.start(match_options.clock, len(players), decision.awaiting, time_ms),
            key=key,
            request=request,
            game=game,
            players=tuple(players),
            options=options,
            match_options=match_options,
            creator=principal.subject,
        )
        try:
            seq, duplicate = await self._append(
                match_id, commit, 0, f"create:{match_id}", unknown={"match_id": match_id}
            )
        except AppendConflict:
            duplicate, seq = True, 0
        if duplicate:
            first = await self._store(self.store.first(match_id))
            if (
                first is not None
                and key
                and first[1].key == key
                and first[1].creator == principal.subject
            ):
                if not same_request(first[1].request, request):
                    raise IdempotencyKeyReused(
                        "this idempotency key already created a match with other "
                        "parameters: use a new key for a new match"
                    )
                return match_id, 0  # a retried create
            raise MatchExists(f"match {match_id} already exists")
        meta = MatchMeta.from_creation(match_id, commit)
        projection = Projection(
            meta=meta,
            version=0,
            seq=seq,
            state=decision.state,
            awaiting=decision.awaiting,
            outcome=decision.outcome,
            keys={},
            time_ms=time_ms,
            clocks=commit.clocks,
        )
        self._remember(projection)
        self.feeds.created(match_id, seq, commit)
        self.cache_writes.full(projection)
        await self._arm(match_id, 0, commit.clocks)
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
        digests: tuple[str, str] | None = None,
    ) -> MoveResult:
        """``digests``: ``key_digest(match_id, principal.subject,
        idempotency_key)`` and ``request_digest("move", move, seat)`` when the
        caller has them already (``PlayMatch``; then ``idempotency_key`` is
        not empty)."""
        started = time.perf_counter()
        try:
            reply = await self._submit(
                principal, match_id, move, expected_version, idempotency_key, seat, digests=digests
            )
        except BaseException as e:
            result = getattr(e, "reason", None) or getattr(e, "code", None) or "error"
            metrics.SUBMIT_SECONDS.labels(result).observe(time.perf_counter() - started)
            raise
        metrics.SUBMITTED[reply.status].observe(time.perf_counter() - started)
        return reply

    async def _submit(
        self,
        principal: Principal,
        match_id: str,
        move: str,
        expected_version: int | None,
        idempotency_key: str,
        seat: int | None,
        timeout: bool = False,
        digests: tuple[str, str] | None = None,
    ) -> MoveResult:
        """``timeout``: the server moves for ``seat`` (its clock ran out);
        ``digests``: see ``submit``."""
        if len(move) > MAX_MOVE_BYTES:
            raise BadRequest("move too large", "move_too_large")
        if len(idempotency_key) > MAX_KEY_LENGTH:
            raise BadRequest("idempotency key too long", "bad_key")
        p = await self.load(match_id)
        hint = seat
        seat = seat if timeout and seat is not None else self._mover_seat(principal, p, hint)
        generated = not idempotency_key
        key = idempotency_key or os.urandom(16).hex()
        if digests is not None and not generated:
            digest, request = digests
        else:
            digest = key_digest(match_id, principal.subject, key)
            # What the key stands for: this move for the seat the request
            # named (a condition such as ``expected_version`` is not part of
            # it: the move was applied or not).
            request = request_digest("move", move, hint)
        # On an ``OutcomeUnknown``, the key to retry with (the one the server
        # drew when the client sent none).
        unknown = {"idempotency_key": key} if generated else {}
        # Whether ``p`` is known to be the stream's head: a copy in memory or
        # in Redis may be behind (another replica moved), so a rejection or a
        # stale expected version decided on it is checked first, and an
        # append refused on it is not a race lost (``races``: the appends
        # refused on a head just read, in a row). Each pass that neither
        # answers nor counts a race makes ``p`` current, which it stays: so
        # the loop ends.
        current = False
        races = 0
        while races < self.config.max_decide_attempts:
            if digest in p.keys:  # a key once applied stays applied: no check needed
                metrics.IDEMPOTENT_REPLIES.inc()
                stored = await self._store(self.store.commit_at(p.keys[digest]))
                return await self._answer(p.meta, stored, request)
            if expected_version is not None and expected_version != p.version:
                if not current:
                    current = True
                    p = await self._head(p)
                    continue
                raise StaleVersion(
                    f"the match is at version {p.version}, not {expected_version}", p.version
                )
            if p.outcome is not None:  # the last commit: ``p`` is the head
                raise GameOver(message="the game is over")
            time_ms = max(now_ms(), p.time_ms)
            if not (timeout or clocks.in_time(p.clocks, seat, time_ms)):
                # a deadline of a stale projection: check against the head first
                if not current:
                    current = True
                    p = await self._head(p)
                    continue
                raise TimeExpired(seat, p.version)
            entropy = os.urandom(32)
            try:
                decision = await self._rules(self.rules.decide(p.state, seat, move, entropy))
            except Unavailable:
                raise
            except (EngineError, ServiceError):
                # A rejection decided on a projection that may be stale (an
                # old Redis entry, another replica moved): answer it only once
                # the projection is known to be the stream's head.
                if current:
                    raise
                current = True
                head = await self._head(p)
                if head.seq == p.seq:
                    raise
                p = head
                continue
            tc = p.meta.match_options.clock
            commit = Commit(
                version=p.version + 1,
                kind=KIND_MOVE,
                time_ms=time_ms,
                entropy=entropy,
                events=decision.events,
                redacted=decision.redacted,
                rules_version=decision.rules_version,
                awaiting=decision.awaiting,
                outcome=decision.outcome,
                clocks=clocks.advance(
                    tc, p.clocks, p.time_ms, seat, decision.awaiting, time_ms, timeout=timeout
                ),
                seat=seat,
                player=principal.subject,
                move=move,
                key=digest,
                timeout=timeout,
                request=request,
            )
            try:
                seq, duplicate = await self._append(
                    match_id,
                    commit,
                    p.seq,
                    f"{match_id}:{digest}",
                    unknown=unknown,
                )
            except AppendConflict:
                metrics.APPEND_CONFLICTS.inc()
                if current:  # decided on the head just read: a race lost
                    races += 1
                p = await self._catch_up(p)
                current = True
                continue
            if duplicate:  # the same key was appended at ``seq`` meanwhile
                metrics.IDEMPOTENT_REPLIES.inc()
                try:
                    stored = await self._store(self.store.commit_at(seq))
                except Unavailable as e:  # applied, but its answer cannot be read now
                    raise OutcomeUnknown(e.message, **unknown) from None
                with contextlib.suppress(Unavailable):  # else the next move catches up
                    await self._catch_up(p)
                return await self._answer(p.meta, stored, request)
            return await self._applied(p, commit, seq, decision, digest)
        raise TooMuchContention(f"the move lost {races} races in a row", p.version)

    async def _head(self, p: Projection) -> Projection:
        """``p`` caught up with the stream's head (one read when it is current)."""
        if await self._store(self.store.last_seq(p.meta.match_id)) == p.seq:
            return p
        return await self._catch_up(p)

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
            time_ms=commit.time_ms,
            clocks=commit.clocks,
        )
        self._remember(new)
        # this process's watchers see it now (not after the tap's delivery)
        self.feeds.committed(p.meta.match_id, p.seq, seq, commit)
        self.cache_writes.forward(new, {digest: seq})
        if commit.outcome is not None:
            self._finish_soon(p.meta, commit)
        else:
            await self._arm(new.meta.match_id, commit.version, commit.clocks)
        assert commit.seat is not None
        return MoveResult(
            match_id=p.meta.match_id,
            version=commit.version,
            seat=commit.seat,
            events=commit.visible_events(commit.seat),
            status=STATUS_FINISHED if commit.outcome is not None else STATUS_ACTIVE,
            outcome=commit.outcome,
            clocks=commit.clocks,
        )

    async def _answer(self, meta: MatchMeta, c: Commit, request: str) -> MoveResult:
        """The first answer again, for a retry of the request of commit ``c``."""
        if not same_request(c.request, request):
            raise IdempotencyKeyReused(
                f"this idempotency key was used for another move (version {c.version}): "
                "use a new key for a new move"
            )
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
            clocks=c.clocks,
        )

    def _finish_soon(self, meta: MatchMeta, commit: Commit) -> None:
        """``_finished`` after the answer: the finishing commit is durable,
        and what follows from it (the index's mark, the fact) is derived from
        it, as the cache is. Should this process die before it is done, the
        relay (relay.py) does it from the stream; until it is done, this
        process's ``ListMatches`` of the match's players waits for it
        (``finished_of``)."""
        match_id = meta.match_id
        if match_id in self.finishing:
            return  # one at a time; the first does it
        task = asyncio.ensure_future(self._finished(meta, commit))
        self.finishing[match_id] = (meta.players, task)
        task.add_done_callback(lambda _: self.finishing.pop(match_id, None))

    async def _finished(self, meta: MatchMeta, commit: Commit) -> None:
        """Mark the match finished in the index, then publish ``MatchFinished``
        (stored once, whoever publishes it; in this order, so that a stored
        fact means a marked index: see ``relay``)."""
        try:
            await self.index.record(meta, STATUS_FINISHED)
            published = await self.index.publish_finished(
                self.config.results_prefix,
                self.config.results_stream,
                finished_fact(meta, commit),
            )
            self.known_facts.add(meta.match_id)  # stored now, by this call or before
            if published:  # counted once over every replica and the relay
                metrics.MATCHES_FINISHED.inc()
        except Exception:
            log.exception("match_finished_not_published", match=meta.match_id)

    def _match_options(self, game: str, options: MatchOptions | None) -> MatchOptions:
        """The match options with a sound time control, the game's default
        filled in (``InvalidArgument("bad_time_control")`` otherwise)."""
        options = options or MatchOptions()
        if options.time_control is None:
            return options
        tc = clocks.validate(options.time_control, known_bot)
        return msgspec.structs.replace(options, time_control=clocks.resolve(tc, game))

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
