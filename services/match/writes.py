"""The write path: create a match, submit a move.

The per-move loop (``submit``) is short: load the projection (in memory, else
Redis, else fold the stream), ask the rules once, append once with the
expected stream sequence, and write the cache after answering. A lost race
(JetStream error 10071) reads only the commits since the decision: if one of
them carries the same idempotency key, that is the answer; otherwise the move
is decided again on the new state (when the client sent no
``expected_version``), a bounded number of times.
"""

from __future__ import annotations

import os
import time
from dataclasses import dataclass

import structlog

from engine_core.errors import EngineError, GameOver, IllegalMove
from engine_core.types import Outcome
from services.common.auth import Principal, is_bot
from services.common.errors import InvalidArgument, PermissionDenied, ServiceError
from services.match import metrics
from services.match.base import MAX_KEY_LENGTH, MAX_MOVE_BYTES, MAX_PLAYERS_IDS
from services.match.errors import (
    BadRequest,
    MatchExists,
    StaleVersion,
    TooMuchContention,
    Unavailable,
)
from services.match.index import finished_fact, publish_finished
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
)
from services.match.ports import AppendConflict
from services.match.projections import Projections

log = structlog.get_logger("tabletop.match")


@dataclass(frozen=True, slots=True)
class MoveResult:
    match_id: str
    version: int
    seat: int
    events: tuple[str, ...]
    status: str
    outcome: Outcome | None


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
        self.cache_writes.full(projection)
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
        self.cache_writes.forward(new, {digest: seq})
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
