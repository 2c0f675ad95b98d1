"""Play a match on one stream: follow it and submit moves in one call
(``PlayMatch``), each move's answer tied to the client's ``ref``.

A play stream is a watch (``Streams.watch``, unchanged: the same commits, in
the same order, redacted for the caller the same way) and a queue of moves
played one at a time, in order, each through ``Writes.submit`` unchanged (the
same checks, idempotency, durability before the answer, clocks), the
per-caller move rate counted first. Each move is answered once:

* by the commit it made, when this stream sends that commit: the digest of
  the move's idempotency key (the client's, or one drawn here) is known
  before ``submit`` is called, so the commit is recognised by its key and
  its request digest, even when another seat's commit comes first or between;
* by ``Answered`` when that commit went out before the answer was known (a
  retry answered from an earlier commit the stream had already sent);
* by ``Refused`` with the error ``submit`` raised; the stream goes on.

The stream ends after the match's last commit (once the move in flight, if
any, is answered; moves not yet read are not played), or with
``UNAUTHENTICATED token_expired`` when the caller's token expires.
"""

from __future__ import annotations

import asyncio
import os
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Any

import msgspec

from services.common.auth import Principal
from services.common.errors import ServiceError, Unauthenticated
from services.common.mailbox import Mailbox
from services.common.tasks import cancel_and_wait
from services.match.model import key_digest, request_digest, same_request
from services.match.streams import CommitView, Streams
from services.match.writes import MoveResult, Writes


class PlayMove(msgspec.Struct, frozen=True):
    """A move sent on a play stream."""

    ref: str
    move: str
    expected_version: int | None = None
    idempotency_key: str = ""
    seat: int | None = None
    """None: the seat named when the stream was opened."""


class Committed(msgspec.Struct, frozen=True):
    """A commit of the match; ``ref`` names this stream's move that made it."""

    commit: CommitView
    ref: str = ""


class Answered(msgspec.Struct, frozen=True):
    """A move applied whose commit went out on this stream before."""

    ref: str
    result: MoveResult


class Refused(msgspec.Struct, frozen=True):
    """A move refused (or of unknown outcome): what ``submit`` raised. Also
    what the caller passes in for a request refused before it is a move."""

    ref: str
    error: Exception


Frame = Committed | Answered | Refused
MoveRate = Callable[[Principal], Awaitable[None]]


class _Move:
    """A move in flight: what its commit is recognised by."""

    __slots__ = ("claimed", "digest", "done", "ref", "request")

    def __init__(self, ref: str, digest: str, request: str) -> None:
        self.ref = ref
        self.digest = digest
        self.request = request
        self.claimed = False
        self.done = False
        """Its answer came, before its commit."""


class _Done(msgspec.Struct, frozen=True):
    move: _Move | None
    ref: str
    result: MoveResult | None = None
    error: Exception | None = None


class _Failed(msgspec.Struct, frozen=True):
    error: BaseException


_FOLLOWED = object()
"""The watch ended: the match's last commit was sent."""
EXPIRED = object()
"""Put in a stream's queue when the caller's token expires."""


class _Play:
    """The state of one play stream, shared by its three parts: the follower
    (commits in), the mover (moves in, answers out) and the writer (frames
    out, in the order of one queue)."""

    def __init__(
        self,
        app: Plays,
        principal: Principal,
        match_id: str,
        seat: int | None,
        put: Callable[[Any], None] | None = None,
    ) -> None:
        """``put``: where the follower and the mover hand their items (a
        session's queue, tagged with its subscription); by default the
        stream's own ``queue``, read by ``frames``."""
        self.app = app
        self.principal = principal
        self.match_id = match_id
        self.seat = seat
        if put is None:
            self.queue: Mailbox[Any] = Mailbox()
            put = self.queue.put_nowait
        self.put = put
        self.pending: dict[str, list[_Move]] = {}
        self.in_flight = 0
        """Moves taken and not answered yet."""
        self.ending = False
        self.last = -1
        """The version of the last commit sent."""

    async def follow(
        self, after_version: int | None, include_view: bool, include_turn: bool = False
    ) -> None:
        put = self.put
        try:
            async for c in self.app.watch(
                self.principal,
                self.match_id,
                after_version,
                include_view=include_view,
                include_turn=include_turn,
            ):
                put(c)
        except Exception as e:
            put(_Failed(e))
        else:
            put(_FOLLOWED)

    async def moves(self, moves: AsyncIterator[PlayMove | Refused], rate: MoveRate | None) -> None:
        """Play the client's moves as they come, until the match's end."""
        put = self.put
        try:
            async for m in moves:
                if self.ending:
                    return
                self.in_flight += 1
                put(await self.one(m, rate))
        except Exception as e:
            put(_Failed(e))

    async def queued(self, moves: Mailbox[PlayMove | Refused], rate: MoveRate | None) -> None:
        """Play the moves of a session's subscription, counted in
        ``in_flight`` when they were queued (each is answered, however late)."""
        put = self.put
        try:
            while True:
                m = await moves.get()
                put(await self.one(m, rate))
        except Exception as e:
            put(_Failed(e))

    async def one(self, m: PlayMove | Refused, rate: MoveRate | None) -> _Done:
        if isinstance(m, Refused):
            return _Done(None, m.ref, error=m.error)
        return await self._play(m, rate)

    async def _play(self, m: PlayMove, rate: MoveRate | None) -> _Done:
        principal = self.principal
        key = m.idempotency_key or os.urandom(16).hex()
        seat = self.seat if m.seat is None else m.seat
        digest = key_digest(self.match_id, principal.subject, key)
        request = request_digest("move", m.move, seat)
        move = _Move(m.ref, digest, request)
        self.pending.setdefault(digest, []).append(move)
        try:
            if rate is not None:
                await rate(principal)
            result = await self.app.submit(
                principal,
                self.match_id,
                m.move,
                expected_version=m.expected_version,
                idempotency_key=key,
                seat=seat,
                digests=(digest, request),  # the same, not computed again
            )
        except Exception as e:
            if (
                not m.idempotency_key
                and isinstance(e, ServiceError)
                and e.reason == "outcome_unknown"
            ):
                e.metadata.setdefault("idempotency_key", key)  # the key to retry with
            return _Done(move, m.ref, error=e)
        return _Done(move, m.ref, result=result)

    def _forget(self, move: _Move) -> None:
        waiting = self.pending.get(move.digest)
        if waiting is not None:
            waiting.remove(move)
            if not waiting:
                del self.pending[move.digest]

    @property
    def done(self) -> bool:
        """The match's last commit is sent and every move taken is answered."""
        return self.ending and self.in_flight == 0

    def handle(self, item: Any) -> Frame | None:
        """The frame an item of the follower or the mover makes, if any;
        raises what ended the follow or the moves."""
        if isinstance(item, CommitView):
            ref = ""
            for move in self.pending.get(item.key, ()) if item.key else ():
                if not move.claimed and same_request(item.request, move.request):
                    move.claimed = True
                    ref = move.ref
                    if move.done:  # its answer came first: nothing more
                        self._forget(move)
                    break
            self.last = item.version
            return Committed(item, ref)
        if isinstance(item, _Done):
            self.in_flight -= 1
            move = item.move
            if item.error is not None:
                if move is not None:
                    self._forget(move)
                return Refused(item.ref, item.error)
            assert move is not None and item.result is not None
            if move.claimed:
                self._forget(move)
            elif item.result.version <= self.last:  # its commit went out without it
                self._forget(move)
                return Answered(item.ref, item.result)
            else:  # its commit is still to come, and will claim it
                move.done = True
            return None
        if item is _FOLLOWED:
            self.ending = True
            return None
        if isinstance(item, _Failed):
            raise item.error
        raise AssertionError(f"unexpected play item {item!r}")

    async def frames(self, expires_at: float | None) -> AsyncIterator[Frame]:
        loop = asyncio.get_running_loop()
        expiry = None
        if expires_at is not None:
            expiry = loop.call_later(
                max(0.0, expires_at - time.time()), self.queue.put_nowait, EXPIRED
            )
        try:
            while not (self.ending and self.in_flight == 0):
                item = await self.queue.get()
                if item is EXPIRED:
                    raise token_expired()
                frame = self.handle(item)
                if frame is not None:
                    yield frame
        finally:
            if expiry is not None:
                expiry.cancel()


def token_expired() -> Unauthenticated:
    return Unauthenticated(
        "token_expired", "the token has expired: open the stream again with a fresh token"
    )


class Plays(Writes, Streams):
    async def play(
        self,
        principal: Principal,
        match_id: str,
        moves: AsyncIterator[PlayMove | Refused],
        *,
        after_version: int | None = None,
        include_view: bool = False,
        include_turn: bool = False,
        seat: int | None = None,
        expires_at: float | None = None,
        move_rate: MoveRate | None = None,
    ) -> AsyncIterator[Frame]:
        """The frames of a play stream (see the module). ``moves``: what the
        client sends after opening; ``expires_at``: when the caller's token
        expires (Unix seconds); ``move_rate``: counts each move first."""
        # a bad match id, an unknown match, a version ahead: nothing starts
        await self.watch_start(match_id, after_version)
        play = _Play(self, principal, match_id, seat)
        follower = asyncio.ensure_future(play.follow(after_version, include_view, include_turn))
        mover = asyncio.ensure_future(play.moves(moves, move_rate))
        try:
            async for frame in play.frames(expires_at):
                yield frame
        finally:
            if play.in_flight:  # a move being played: stopped before the stream ends
                await cancel_and_wait(mover)
            else:
                # Waiting for the client's next request: cancelled, not waited
                # for (its read ends with the call; waiting would hold the
                # stream's end back by a round of the event loop with gRPC).
                mover.cancel()
            await cancel_and_wait(follower)
