"""The streams: watch a match live (resuming after a version), replay it
from its events at any speed.

The process follows every match with one JetStream consumer, fanned out to
each match's feed (``feeds.Feeds``): each commit is delivered and decoded
once per process, then redacted here for each watcher's seat."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator

import msgspec

from engine_core.types import Outcome
from services.common.auth import Principal, is_bot
from services.match import metrics
from services.match.base import REPLAY_MAX_PAUSE_S
from services.match.errors import BadRequest
from services.match.model import (
    KIND_ENDED,
    KIND_FORFEIT,
    STATUS_ACTIVE,
    STATUS_FINISHED,
    Clocks,
    Commit,
    Projection,
    now_ms,
)
from services.match.projections import Projections


class Turn(msgspec.Struct, frozen=True):
    """The turn after a commit, as one caller sees it: the seats the game
    waits for and the moves the caller's seat may make now."""

    awaiting: tuple[int, ...]
    your_seat: int | None
    legal_moves: tuple[str, ...]
    server_ms: int
    """When the server sent it (for a client to correct its clock by)."""


class CommitView(msgspec.Struct, frozen=True):
    """A commit as one caller may see it."""

    version: int
    seat: int | None
    events: tuple[str, ...]
    view: str
    status: str
    outcome: Outcome | None
    committed_at: str
    move: str
    clocks: Clocks | None = None
    timeout: bool = False
    forfeit: bool = False
    ended_by_service: bool = False
    key: str = ""
    """The digest of the commit's idempotency key and of its request (never
    sent: ``PlayMatch`` finds a stream's own moves by them)."""
    request: str = ""
    turn: Turn | None = None


class Streams(Projections):
    async def watch(
        self,
        principal: Principal,
        match_id: str,
        after_version: int | None,
        *,
        include_view: bool = False,
        include_turn: bool = False,
    ) -> AsyncIterator[CommitView]:
        """``include_turn``: each commit that is the newest this process
        knows when it is sent carries the turn after it (``_turn``)."""
        p = await self.watch_start(match_id, after_version)
        meta = p.meta
        seat = self.viewer_seat(principal, meta)
        metrics.WATCHERS.inc()
        if is_bot(principal.subject):
            gauge = metrics.WATCHING["bot"]
        elif principal.is_service:
            gauge = metrics.WATCHING["service"]
        else:
            gauge = metrics.WATCHING["spectator" if seat is None else "player"]
        gauge.inc()
        try:
            async for view in self._watch(p, seat, after_version, include_view, include_turn):
                yield view
        finally:
            gauge.dec()

    async def watch_start(self, match_id: str, after_version: int | None) -> Projection:
        """The projection a watch after ``after_version`` starts from;
        ``BadRequest`` (``bad_match_id``, ``version_ahead``), ``MatchNotFound``."""
        # The projection in hand may be behind the stream (another replica
        # moved): following from it still delivers every later commit, so the
        # head is asked for only when the client claims a version beyond it.
        p = await self.load(match_id)
        if after_version is not None and after_version > p.version:
            p = await self.load(match_id, fresh=True)
        _check_after(p, after_version)
        return p

    async def _watch(
        self,
        p: Projection,
        seat: int | None,
        after_version: int | None,
        include_view: bool,
        include_turn: bool = False,
    ) -> AsyncIterator[CommitView]:
        meta = p.meta
        match_id = meta.match_id
        _check_after(p, after_version)
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
        async for _seq, c in self._store_iter(self.feeds.follow(match_id, start, seat)):
            if include_view:
                pending.extend(c.events)
            if c.version <= skip:
                continue
            view = ""
            if include_view:
                if pending:
                    hot = self._hot.get(match_id)
                    if hot is not None and hot.version == c.version:
                        # The projection in memory is at this very commit (a
                        # live commit, the usual case): its state is the one
                        # after it, with no fold asked of the rules.
                        state = hot.state
                    else:
                        state = await self._rules(self.rules.evolve(meta.game, state, pending))
                    pending.clear()
                assert state is not None
                view = await self._rules(self.rules.view(state, seat))
            cv = self._commit_view(c, seat, view, full=False)
            if include_turn:
                turn = await self._turn(p, c, seat, state if include_view else None)
                if turn is not None:
                    cv = msgspec.structs.replace(cv, turn=turn)
            yield cv
            if c.outcome is not None:
                return

    async def _turn(
        self, start: Projection, c: Commit, seat: int | None, state: bytes | None
    ) -> Turn | None:
        """The turn after ``c`` if ``c`` is the newest commit this process
        knows (None for a commit known to be followed by others: a resumed
        watch's backlog, or a watcher that lags), the caller's legal moves
        asked of the rules only when the game waits for its seat. ``state``:
        the state after ``c``, if the caller has it; else it is the
        projection's (in memory at ``c``, the usual case of a live commit), or
        the projection brought forward from the stream (``c`` came from
        another replica)."""
        hot = self._hot.get(start.meta.match_id)
        q = hot if hot is not None and hot.version >= start.version else start
        if q.version > c.version:
            return None  # newer commits are on their way to this watcher
        legal: tuple[str, ...] = ()
        if seat is not None and c.outcome is None and seat in c.awaiting:
            if state is None:
                if q.version < c.version:  # appended elsewhere: read up to it
                    q = await self._catch_up(q)
                if q.version != c.version:
                    return None
                state = q.state
            legal = await self._rules(self.rules.legal_moves(state, seat))
        return Turn(awaiting=c.awaiting, your_seat=seat, legal_moves=legal, server_ms=now_ms())

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
            clocks=c.clocks,
            timeout=c.timeout,
            forfeit=c.kind == KIND_FORFEIT,
            ended_by_service=c.kind == KIND_ENDED,
            key=c.key,
            request=c.request,
        )


def _check_after(p: Projection, after_version: int | None) -> None:
    if after_version is not None and after_version > p.version:
        raise BadRequest(
            f"the match is at version {p.version}; nothing is known after {after_version}",
            "version_ahead",
        )
