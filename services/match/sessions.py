"""A client's session on one stream (``PlaySession``): any number of matches
followed and played at once, and matches created, over one call kept from
match to match.

Each subscription is a play stream's state (``plays._Play``) under a name the
client chose: the same watch, the same moves through ``Writes.submit``, the
same answers, so a subscription's frames are exactly what a ``PlayMatch``
stream opened the same way would send. What the session adds is the
multiplexing: one queue of every subscription's items, read by the one loop
that writes the stream (so frames of one subscription keep their order), and
the lifetimes:

* ``open`` starts the subscription's follower and mover at once; a bad match,
  a bad version or a caller refused come back from the follower as an
  ``error`` frame with no ref, which ends the subscription;
* a subscription ends after its match's last commit once every move queued
  for it is answered (a move queued after the last commit is still played,
  and refused as the game is over: every move sent is answered);
* ``close`` ends it at once: its tasks are cancelled, whatever of it was
  still queued is dropped, and a ``Closed`` frame is the last of it;
* ``create`` runs ``Writes.create`` in a task of its own, answered by a
  ``Created`` frame (or an error) under its ref;
* the client's half-close ends the session once its subscriptions and
  creates have; the token's expiry ends it with ``token_expired``.

Open subscriptions and creates in flight together are at most
``max_subscriptions`` per session: a session counts as one stream for the
per-caller limits, so this bounds what one stream can hold.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any

import msgspec

from services.common.auth import Principal
from services.common.errors import FailedPrecondition, InvalidArgument, ResourceExhausted
from services.common.mailbox import Mailbox
from services.common.tasks import cancel_and_wait
from services.match.model import MatchOptions
from services.match.plays import (
    EXPIRED,
    Frame,
    MoveRate,
    PlayMove,
    Plays,
    Refused,
    _Play,
    token_expired,
)

CreateRate = Callable[[Principal], Awaitable[None]]


class Open(msgspec.Struct, frozen=True):
    """Follow a match under the name ``sub`` (``PlayMatch``'s open)."""

    sub: str
    match_id: str
    after_version: int | None = None
    include_view: bool = False
    include_turn: bool = False
    seat: int | None = None
    error: Exception | None = None
    """Refused before it is an open (a field out of bounds)."""


class Move(msgspec.Struct, frozen=True):
    """A move for the subscription ``sub`` (or a request refused before it
    is one: a ``Refused`` answered under its ref)."""

    sub: str
    move: PlayMove | Refused


class Close(msgspec.Struct, frozen=True):
    sub: str


class Create(msgspec.Struct, frozen=True):
    """``Writes.create`` on the stream, answered under ``ref``."""

    ref: str
    game: str
    players: list[str]
    options: str = ""
    match_options: MatchOptions | None = None
    idempotency_key: str = ""
    error: Exception | None = None
    """Refused before it is a create (a field out of bounds, bad options)."""


Request = Open | Move | Close | Create


class SubFrame(msgspec.Struct, frozen=True):
    """A frame of the subscription ``sub``: a play stream's frame."""

    sub: str
    frame: Frame


class Closed(msgspec.Struct, frozen=True):
    """The subscription ``sub`` closed at the client's request."""

    sub: str


class Created(msgspec.Struct, frozen=True):
    ref: str
    match_id: str
    version: int


class CreateRefused(msgspec.Struct, frozen=True):
    ref: str
    error: Exception


SessionFrame = SubFrame | Closed | Created | CreateRefused


@dataclass(eq=False, slots=True)
class _Sub:
    name: str
    play: _Play
    moves: Mailbox[PlayMove | Refused]
    tasks: list[asyncio.Task[None]] = field(default_factory=list)
    closed: bool = False

    def stop(self) -> None:
        self.closed = True
        for task in self.tasks:
            task.cancel()


_INPUT_DONE = object()
"""The client half-closed: no more requests."""


class _InputFailed(msgspec.Struct, frozen=True):
    error: BaseException


class _Session:
    def __init__(
        self,
        app: Sessions,
        principal: Principal,
        move_rate: MoveRate | None,
        create_rate: CreateRate | None,
        max_subscriptions: int,
    ) -> None:
        self.app = app
        self.principal = principal
        self.move_rate = move_rate
        self.create_rate = create_rate
        self.max_subscriptions = max_subscriptions
        self.out: Mailbox[Any] = Mailbox()
        self.subs: dict[str, _Sub] = {}
        self.creates: set[asyncio.Task[None]] = set()
        self.input_done = False

    # ------------------------------------------------------------ requests in
    async def read(self, requests: AsyncIterator[Request]) -> None:
        put = self.out.put_nowait
        try:
            async for r in requests:
                kind = type(r)
                if kind is Move:
                    self._move(r)
                elif kind is Open:
                    self._open(r)
                elif kind is Close:
                    self._close(r.sub)
                else:
                    self._create(r)
        except Exception as e:
            put(_InputFailed(e))
        else:
            put(_INPUT_DONE)

    def _move(self, r: Move) -> None:
        sub = self.subs.get(r.sub)
        if sub is None:
            error = FailedPrecondition(
                "not_subscribed",
                f"no open subscription {r.sub!r} on this session: open it first",
                sub=r.sub,
            )
            self.out.put_nowait(SubFrame(r.sub, Refused(r.move.ref, error)))
            return
        sub.play.in_flight += 1
        sub.moves.put_nowait(r.move)

    def _refuse_open(self, sub: str, error: Exception) -> None:
        self.out.put_nowait(SubFrame(sub, Refused("", error)))

    def _full(self) -> bool:
        return len(self.subs) + len(self.creates) >= self.max_subscriptions

    def _too_many(self) -> ResourceExhausted:
        return ResourceExhausted(
            "too_many_subscriptions",
            f"a session holds at most {self.max_subscriptions} subscriptions and creates "
            "in flight: close one, or wait for a match to end",
            limit=str(self.max_subscriptions),
        )

    def _open(self, r: Open) -> None:
        if r.error is not None:
            self._refuse_open(r.sub, r.error)
            return
        if not r.sub:
            self._refuse_open(
                r.sub, InvalidArgument("bad_subscription", "name the subscription: sub is empty")
            )
            return
        if r.sub in self.subs:
            self._refuse_open(
                r.sub,
                FailedPrecondition(
                    "subscription_in_use",
                    f"subscription {r.sub!r} is open on this session: close it or pick another",
                    sub=r.sub,
                ),
            )
            return
        if self._full():
            self._refuse_open(r.sub, self._too_many())
            return
        put = self.out.put_nowait
        # the play's items reach the session's queue tagged with their subscription
        play = _Play(self.app, self.principal, r.match_id, r.seat, lambda item: put((sub, item)))
        moves: Mailbox[PlayMove | Refused] = Mailbox()
        sub = _Sub(r.sub, play, moves)
        sub.tasks.append(
            asyncio.ensure_future(play.follow(r.after_version, r.include_view, r.include_turn))
        )
        sub.tasks.append(asyncio.ensure_future(play.queued(moves, self.move_rate)))
        self.subs[r.sub] = sub

    def _close(self, name: str) -> None:
        sub = self.subs.pop(name, None)
        if sub is None:
            error = FailedPrecondition(
                "not_subscribed", f"no open subscription {name!r} on this session", sub=name
            )
            self.out.put_nowait(SubFrame(name, Refused("", error)))
            return
        sub.stop()
        self.out.put_nowait(Closed(name))

    def _create(self, r: Create) -> None:
        if r.error is not None:
            self.out.put_nowait(CreateRefused(r.ref, r.error))
            return
        if self._full():
            self.out.put_nowait(CreateRefused(r.ref, self._too_many()))
            return
        task = asyncio.ensure_future(self._run_create(r))
        self.creates.add(task)

    async def _run_create(self, r: Create) -> None:
        try:
            if self.create_rate is not None:
                await self.create_rate(self.principal)
            match_id, version = await self.app.create(
                self.principal,
                game=r.game,
                players=r.players,
                options=r.options,
                match_options=r.match_options,
                idempotency_key=r.idempotency_key,
            )
        except Exception as e:
            answer: SessionFrame = CreateRefused(r.ref, e)
        else:
            answer = Created(r.ref, match_id, version)
        # no longer in flight once its answer is queued (the session may end on it)
        self.creates.discard(asyncio.current_task())  # type: ignore[arg-type]
        self.out.put_nowait((self, answer))

    # ------------------------------------------------------------ frames out
    def _ended(self, sub: _Sub) -> None:
        if self.subs.get(sub.name) is sub:
            del self.subs[sub.name]
        sub.stop()

    async def frames(self, expires_at: float | None) -> AsyncIterator[SessionFrame]:
        loop = asyncio.get_running_loop()
        out = self.out
        expiry = None
        if expires_at is not None:
            expiry = loop.call_later(max(0.0, expires_at - time.time()), out.put_nowait, EXPIRED)
        try:
            while not (self.input_done and not self.subs and not self.creates):
                item = await out.get()
                if type(item) is tuple:
                    owner, x = item
                    if owner is self:  # a create's answer
                        yield x
                        continue
                    sub = owner
                    if sub.closed:
                        continue  # left of a subscription closed or ended
                    try:
                        frame = sub.play.handle(x)
                    except Exception as e:  # the follow failed: the subscription ends
                        self._ended(sub)
                        yield SubFrame(sub.name, Refused("", e))
                        continue
                    if frame is not None:
                        yield SubFrame(sub.name, frame)
                    if sub.play.done:
                        self._ended(sub)
                elif item is _INPUT_DONE:
                    self.input_done = True
                elif item is EXPIRED:
                    raise token_expired()
                elif isinstance(item, _InputFailed):
                    raise item.error
                else:
                    yield item
        finally:
            if expiry is not None:
                expiry.cancel()

    def stop(self) -> list[asyncio.Task[None]]:
        """Cancel everything the session runs; the tasks, to wait for."""
        tasks = [t for sub in self.subs.values() for t in sub.tasks] + list(self.creates)
        for sub in self.subs.values():
            sub.stop()
        self.subs.clear()
        for task in self.creates:
            task.cancel()
        self.creates.clear()
        return tasks


class Sessions(Plays):
    async def session(
        self,
        principal: Principal,
        requests: AsyncIterator[Request],
        *,
        expires_at: float | None = None,
        move_rate: MoveRate | None = None,
        create_rate: CreateRate | None = None,
        max_subscriptions: int = 64,
    ) -> AsyncIterator[SessionFrame]:
        """The frames of a session stream (see the module). ``requests``:
        what the client sends; ``expires_at``: when the caller's token
        expires (Unix seconds); ``move_rate``, ``create_rate``: count each
        move and create first."""
        session = _Session(self, principal, move_rate, create_rate, max_subscriptions)
        reader = asyncio.ensure_future(session.read(requests))
        try:
            async for frame in session.frames(expires_at):
                yield frame
        finally:
            # as PlayMatch's end: the moves and creates in flight stopped
            # before the call ends (subscriptions that ended before were
            # stopped then, between two awaits of theirs)
            reader.cancel()
            for task in session.stop():
                await cancel_and_wait(task)
