"""A small typed client of the rules service (used by the match service and tests).

::

    async with RulesClient("dns:///rules.tabletop.svc:50051") as rules:
        new = await rules.new_game("tic_tac_toe", players=2)
        step = await rules.apply_move("tic_tac_toe", new.state, seat=0,
                                      move={"type": "place_mark", "cell": 4})

Targets are gRPC names: ``host:port`` or ``dns:///name:port``; with a DNS
name that resolves to several addresses (a Kubernetes headless Service) the
channel balances calls round-robin over them. Every call has a deadline
(``timeout``, default 2 s). Rules calls are pure functions of their request,
so the channel retries them on UNAVAILABLE (another replica answers).

A rejection raises ``RulesError``, a ``ServiceError`` carrying the server's
status, reason and metadata: a service that calls the rules service can let
it propagate and its own client sees the same status and reason.

With ``streams=N`` (N > 0) ``apply_move``, ``new_game``, ``view`` and
``legal_moves`` go over ``MoveStreams``: N long-lived ApplyMoves streams,
each on a channel (a connection) of its own, carrying batches of calls; the
answers and errors are the same as the unary calls'. A rules service without
ApplyMoves is called with ApplyMove, and one whose streams do not take a
kind of call with that kind's unary call.
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import json
import random
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import grpc
import msgspec

from engine_core.types import Outcome
from services.common.errors import ServiceError, error_info
from services.common.grpcserver import channel_options
from tabletop.rules.v1 import rules_pb2, rules_pb2_grpc

__all__ = [
    "CALLS_HEADER",
    "INSTANCE_HEADER",
    "GameListing",
    "GameStatus",
    "LegalMoves",
    "MoveStreams",
    "Played",
    "RulesClient",
    "RulesError",
    "service_config",
]

_SERVICE = "tabletop.rules.v1.RulesService"
_APPLY_MOVES = f"/{_SERVICE}/ApplyMoves"
INSTANCE_HEADER = "tabletop-rules-instance"
"""The initial metadata of an ApplyMoves stream: the name of the server (the
replica, or the worker process) it landed on."""
CALLS_HEADER = "tabletop-rules-calls"
"""The initial metadata of an ApplyMoves stream: the kinds of call it answers,
comma-separated (``apply_move,new_game,view,legal_moves``; a server without
it answers ApplyMove calls only)."""
_CODES = {code.value[0]: code for code in grpc.StatusCode}
_BROKEN = frozenset(
    {
        grpc.StatusCode.UNAVAILABLE,
        # how gRPC may report a connection reset mid-stream, or a server that
        # cancelled its streams while stopping
        grpc.StatusCode.INTERNAL,
        grpc.StatusCode.UNKNOWN,
        grpc.StatusCode.CANCELLED,
    }
)
"""A stream that ends so had its calls unanswered: they are sent again. Any
other end (UNAUTHENTICATED, PERMISSION_DENIED, RESOURCE_EXHAUSTED, ...) is a
refusal, the answer of each of its calls."""


def service_config(*, retries: int = 3) -> str:
    """Round-robin load balancing and retry-on-UNAVAILABLE for the rules service."""
    return json.dumps(
        {
            "loadBalancingConfig": [{"round_robin": {}}],
            "methodConfig": [
                {
                    "name": [{"service": _SERVICE}],
                    "retryPolicy": {
                        "maxAttempts": retries,
                        "initialBackoff": "0.05s",
                        "maxBackoff": "0.5s",
                        "backoffMultiplier": 2,
                        "retryableStatusCodes": ["UNAVAILABLE"],
                    },
                }
            ],
        }
    )


class RulesError(ServiceError):
    """A call the rules service refused (or could not answer)."""

    def __init__(self, status: grpc.StatusCode, reason: str, message: str, **metadata: str) -> None:
        super().__init__(reason, message, **metadata)
        self.status = status

    @classmethod
    def from_rpc(cls, error: grpc.aio.AioRpcError) -> RulesError:
        info = error_info(error)
        code = error.code()
        if info is not None:
            return cls(code, info.reason, error.details() or info.reason, **dict(info.metadata))
        return cls(code, code.name.lower(), error.details() or code.name)

    @classmethod
    def from_pb(cls, error: rules_pb2.CallError) -> RulesError:
        """The error an ApplyMoves stream answered for one call."""
        code = _CODES.get(error.code, grpc.StatusCode.UNKNOWN)
        return cls(code, error.reason, error.message or error.reason, **dict(error.metadata))


class GameStatus(msgspec.Struct, frozen=True):
    awaiting: tuple[int, ...]
    outcome: Outcome | None

    @classmethod
    def from_pb(cls, pb: rules_pb2.GameStatus) -> GameStatus:
        outcome = None
        if pb.HasField("outcome"):
            o = pb.outcome
            outcome = Outcome(ranks=tuple(o.ranks), scores=tuple(o.scores), reason=o.reason)
        return cls(tuple(pb.awaiting), outcome)

    @property
    def over(self) -> bool:
        return self.outcome is not None


class Played(msgspec.Struct, frozen=True):
    """The answer of ``new_game`` and ``apply_move``."""

    state: bytes
    events: tuple[str, ...]
    """JSON text of each event, in order (not redacted)."""
    status: GameStatus
    entropy: bytes
    redacted: tuple[tuple[str | None, ...], ...]
    """``redacted[s]``: the events as seat ``s`` sees them, ``redacted[-1]`` as a
    spectator does; same length as ``events``, ``None`` where hidden."""
    rules_version: str

    @classmethod
    def from_pb(cls, pb: rules_pb2.NewGameResponse | rules_pb2.ApplyMoveResponse) -> Played:
        events = tuple(pb.events)
        redacted = []
        for r in pb.redacted:
            row = tuple(r.events)
            if row == events:  # all shown (no event's JSON text is empty): one tuple
                redacted.append(events)
            elif "" in row:
                redacted.append(tuple(e or None for e in row))
            else:
                redacted.append(row)
        return cls(
            state=pb.state,
            events=events,
            status=GameStatus.from_pb(pb.status),
            entropy=pb.entropy,
            redacted=tuple(redacted),
            rules_version=pb.rules_version,
        )

    def visible(self, seat: int | None) -> tuple[str, ...]:
        """The events ``seat`` (``None``: a spectator) may see, hidden ones left out."""
        return tuple(e for e in self.redacted[-1 if seat is None else seat] if e is not None)

    def event_dicts(self) -> list[dict[str, Any]]:
        return [json.loads(e) for e in self.events]


@dataclass(frozen=True)
class LegalMoves:
    moves: tuple[str, ...]
    """JSON text of each legal move."""
    texts: tuple[str, ...]


@dataclass(frozen=True)
class GameListing:
    id: str
    title: str
    min_players: int
    max_players: int
    rules_version: str
    schemas: Mapping[str, Any]
    """``options``, ``move``, ``event``, ``view``: JSON Schema documents."""


def _json_text(value: Any) -> str:
    if isinstance(value, str):
        return value
    if isinstance(value, bytes):
        return value.decode()
    return msgspec.json.encode(value).decode()


class RulesClient:
    """Typed async calls to ``tabletop.rules.v1.RulesService``."""

    def __init__(
        self,
        target: str,
        *,
        timeout: float = 2.0,
        max_message_bytes: int = 4 * 1024 * 1024,
        channel: grpc.aio.Channel | None = None,
        metadata: Callable[[], Sequence[tuple[str, str]]] | None = None,
        streams: int = 0,
        calls_per_turn: int = 32,
        spread_attempts: int = 8,
    ) -> None:
        """``metadata``: called before each call for its metadata, e.g. a
        ``ServiceToken``'s ``metadata`` when the rules service requires one.
        ``streams``: ``apply_move``, ``new_game``, ``view`` and
        ``legal_moves`` over that many
        ApplyMoves streams (``MoveStreams``, with ``calls_per_turn`` and
        ``spread_attempts``); 0 = one unary call each."""
        self.target = target
        self.timeout = timeout
        self._metadata = metadata
        self._own_channel = channel is None
        self.channel = channel or grpc.aio.insecure_channel(
            target,
            options=[
                *channel_options(max_message_bytes),
                ("grpc.service_config", service_config()),
                ("grpc.enable_retries", 1),
            ],
        )
        self.stub = rules_pb2_grpc.RulesServiceStub(self.channel)
        self.streams = (
            MoveStreams(
                target,
                streams,
                unary=self.stub.ApplyMove,
                new_game_unary=self.stub.NewGame,
                view_unary=self.stub.View,
                legal_moves_unary=self.stub.LegalMoves,
                max_message_bytes=max_message_bytes,
                metadata=metadata,
                calls_per_turn=calls_per_turn,
                spread_attempts=spread_attempts,
            )
            if streams > 0
            else None
        )

    async def __aenter__(self) -> RulesClient:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.close()

    async def close(self) -> None:
        if self.streams is not None:
            await self.streams.close()
        if self._own_channel:
            await self.channel.close()

    async def _call(self, method: Any, request: Any, timeout: float | None) -> Any:
        try:
            return await method(
                request,
                timeout=self.timeout if timeout is None else timeout,
                metadata=self._metadata() if self._metadata is not None else None,
            )
        except grpc.aio.AioRpcError as e:
            raise RulesError.from_rpc(e) from None

    # ------------------------------------------------------------------ RPCs
    async def list_games(self, *, timeout: float | None = None) -> list[GameListing]:
        reply = await self._call(self.stub.ListGames, rules_pb2.ListGamesRequest(), timeout)
        return [
            GameListing(
                id=g.info.id,
                title=g.info.title,
                min_players=g.info.min_players,
                max_players=g.info.max_players,
                rules_version=g.info.rules_version,
                schemas={
                    "options": json.loads(g.schemas.options),
                    "move": json.loads(g.schemas.move),
                    "event": json.loads(g.schemas.event),
                    "view": json.loads(g.schemas.view),
                },
            )
            for g in reply.games
        ]

    async def new_game(
        self,
        game: str,
        players: int,
        *,
        options: Any = None,
        entropy: bytes = b"",
        timeout: float | None = None,
    ) -> Played:
        request = rules_pb2.NewGameRequest(
            game=game,
            players=players,
            options="" if options is None else _json_text(options),
            entropy=entropy,
        )
        if self.streams is not None:
            reply = await self.streams.new_game(
                request, self.timeout if timeout is None else timeout
            )
            return Played.from_pb(reply)
        return Played.from_pb(await self._call(self.stub.NewGame, request, timeout))

    async def apply_move(
        self,
        game: str,
        state: bytes,
        seat: int,
        move: Any,
        *,
        entropy: bytes = b"",
        timeout: float | None = None,
    ) -> Played:
        """``move`` is JSON text, or a dict / msgspec Struct encoded to JSON.
        ``game`` may be ``""``: the game the state names."""
        request = rules_pb2.ApplyMoveRequest(
            game=game, state=state, seat=seat, move=_json_text(move), entropy=entropy
        )
        if self.streams is not None:
            reply = await self.streams.apply_move(
                request, self.timeout if timeout is None else timeout
            )
            return Played.from_pb(reply)
        return Played.from_pb(await self._call(self.stub.ApplyMove, request, timeout))

    async def legal_moves(
        self, game: str, state: bytes, seat: int, *, timeout: float | None = None
    ) -> LegalMoves:
        request = rules_pb2.LegalMovesRequest(game=game, state=state, seat=seat)
        if self.streams is not None:
            reply = await self.streams.legal_moves(
                request, self.timeout if timeout is None else timeout
            )
        else:
            reply = await self._call(self.stub.LegalMoves, request, timeout)
        return LegalMoves(tuple(reply.moves), tuple(reply.texts))

    async def view(
        self,
        game: str,
        state: bytes,
        seat: int | None,
        *,
        full: bool = False,
        timeout: float | None = None,
    ) -> tuple[str, GameStatus]:
        """The view JSON for ``seat`` (``None`` = a spectator) and the game's status;
        ``full``: the whole state (only once the game is over)."""
        request = rules_pb2.ViewRequest(game=game, state=state, full=full)
        if seat is not None:
            request.seat = seat
        if self.streams is not None:
            reply = await self.streams.view(request, self.timeout if timeout is None else timeout)
        else:
            reply = await self._call(self.stub.View, request, timeout)
        return reply.view, GameStatus.from_pb(reply.status)

    async def outcome(self, game: str, state: bytes, *, timeout: float | None = None) -> GameStatus:
        request = rules_pb2.OutcomeRequest(game=game, state=state)
        reply = await self._call(self.stub.Outcome, request, timeout)
        return GameStatus.from_pb(reply.status)

    async def fold(
        self,
        game: str,
        state: bytes | None,
        events: Sequence[str],
        *,
        timeout: float | None = None,
    ) -> tuple[bytes, GameStatus]:
        """``state`` (``None``: before the first event) with ``events`` (JSON) applied."""
        request = rules_pb2.FoldRequest(game=game, state=state or b"", events=list(events))
        reply = await self._call(self.stub.Fold, request, timeout)
        return reply.state, GameStatus.from_pb(reply.status)

    async def default_move(
        self,
        game: str,
        state: bytes,
        seat: int,
        *,
        bot: str = "",
        entropy: bytes = b"",
        timeout: float | None = None,
    ) -> str:
        """The move the server makes for ``seat`` (JSON): the game's default
        move, or ``bot``'s choice."""
        request = rules_pb2.DefaultMoveRequest(
            game=game, state=state, seat=seat, bot=bot, entropy=entropy
        )
        return (await self._call(self.stub.DefaultMove, request, timeout)).move


# ----------------------------------------------------------------- streams
_StreamRequest = (
    rules_pb2.ApplyMoveRequest
    | rules_pb2.NewGameRequest
    | rules_pb2.ViewRequest
    | rules_pb2.LegalMovesRequest
)
_KINDS: dict[type, tuple[str, str, str]] = {
    rules_pb2.ApplyMoveRequest: ("apply_move", "request", "reply"),
    rules_pb2.NewGameRequest: ("new_game", "new_game", "new_game"),
    rules_pb2.ViewRequest: ("view", "view", "view"),
    rules_pb2.LegalMovesRequest: ("legal_moves", "legal_moves", "legal_moves"),
}
"""Each request type an ApplyMoves stream carries: its kind (as
``CALLS_HEADER`` names it), its field of the call and of the result."""


class _Call:
    """One call (ApplyMove, NewGame, View or LegalMoves) on its way: sent,
    perhaps sent again, answered once."""

    __slots__ = (
        "answer",
        "attempts",
        "deadline",
        "field",
        "future",
        "id",
        "kind",
        "request",
        "size",
        "stream",
    )

    def __init__(
        self,
        id: int,
        request: _StreamRequest,
        future: asyncio.Future[Any],
        deadline: float,
    ) -> None:
        self.id = id
        self.request = request
        self.kind, self.field, self.answer = _KINDS[type(request)]
        self.future = future
        self.deadline = deadline
        self.size = request.ByteSize() + 24  # with its id, timeout and framing
        self.attempts = 0
        self.stream: _Stream | None = None


class _Stream:
    """One ApplyMoves stream: its calls not answered yet, the calls waiting to
    be written, and the task reading its answers."""

    def __init__(self, owner: MoveStreams, lane: int, channel: Any, call: Any) -> None:
        self.owner = owner
        self.lane = lane
        self.channel = channel
        self.call = call
        self.instance: str | None = None
        """The server it landed on (``INSTANCE_HEADER``), once known."""
        self.takes: frozenset[str] = frozenset()
        """The kinds of call besides ApplyMove its server answers on it
        (``CALLS_HEADER``), once known."""
        self.opened = time.monotonic()
        self.pending: dict[int, _Call] = {}
        self.queue: list[_Call] = []
        self.writing = False
        self.writer: asyncio.Future[None] | None = None
        self.retiring = False
        self.reader = asyncio.ensure_future(self._read())

    def send(self, call: _Call) -> None:
        call.stream = self
        call.attempts += 1
        self.pending[call.id] = call
        self.queue.append(call)
        if not self.writing:
            self.writing = True
            self.writer = asyncio.ensure_future(self._write())

    def retire(self) -> None:
        """Take no more calls; half-close once what is queued is written (the
        server then ends the stream after its last answer)."""
        self.retiring = True
        if not self.writing:
            self.writing = True
            self.writer = asyncio.ensure_future(self._write())

    async def _write(self) -> None:
        """Write what is queued, as one message; what queued up meanwhile, as
        the next one (no timer: a batch is what waited for the last write).
        While the stream has other calls in flight (their answers will wake
        the loop anyway), the writer first lets the loop run once more, so
        the calls made in that pass join the batch; a lone call goes at once."""
        try:
            limit = self.owner.max_batch_bytes
            while self.queue:
                if len(self.pending) > len(self.queue):
                    await asyncio.sleep(0)
                message = rules_pb2.ApplyMovesRequest()
                now = time.monotonic()
                size = taken = 0
                for c in self.queue:
                    if size and size + c.size > limit:
                        break  # the rest in the next message
                    taken += 1
                    if c.future.done():
                        continue
                    size += c.size
                    item = message.calls.add(
                        id=c.id, timeout_ms=max(1, int((c.deadline - now) * 1000))
                    )
                    getattr(item, c.field).CopyFrom(c.request)
                del self.queue[:taken]
                if message.calls:
                    self.owner.messages += 1
                    await self.call.write(message)
            if self.retiring:
                await self.call.done_writing()
        except grpc.aio.AioRpcError:
            # The call has ended with a status (a refusal such as
            # UNAUTHENTICATED, or a broken connection): its reader reads that
            # status and acts on it. Cancelling here could beat the status to
            # the reader, which would then see CANCELLED and send a refused
            # call again.
            pass
        except Exception:
            # The stream is broken (its reader learns why and sends its calls again).
            self.call.cancel()
        finally:
            self.writing = False

    async def _read(self) -> None:
        error: grpc.aio.AioRpcError | None = None
        try:
            self.owner._placed(self, await self.call.initial_metadata())
            while True:
                message = await self.call.read()
                if message is grpc.aio.EOF:
                    break
                for result in message.results:
                    c = self.pending.pop(result.id, None)
                    if c is None or c.future.done():
                        continue
                    if result.HasField("error"):
                        c.future.set_exception(RulesError.from_pb(result.error))
                    else:
                        c.future.set_result(getattr(result, c.answer))
        except grpc.aio.AioRpcError as e:
            error = e
        except BaseException:  # cancelled (by a failed write, or close), or broken
            pass
        self.owner._ended(self, error)


SPREAD_DELAY_S = 0.01
"""How long after opening a stream that landed where another lane's is gets
replaced, the first time in a row (doubled each next time)."""
SPREAD_MAX_DELAY_S = 0.2


class MoveStreams:
    """ApplyMove calls (and NewGame, View and LegalMoves calls) over ``count``
    long-lived ApplyMoves streams.

    Each stream has a channel of its own (``grpc.use_local_subchannel_pool``:
    a connection of its own), so with ``SO_REUSEPORT`` workers or several
    replicas behind one name the streams land on different processes (a
    channel balances round-robin over the addresses of its target; each
    stream picks one when it opens). A stream that lands on a server another
    of this client's streams is on (by the ``INSTANCE_HEADER`` the server
    opens it with) is replaced, up to ``spread_attempts`` times in a row: the
    first time on the same channel (whose round robin picks the next
    address), then on a fresh channel (a fresh connection, which the kernel
    may hand to another ``SO_REUSEPORT`` worker); the replaced stream takes
    no more calls and answers those it has. Each replacement comes a little
    after the stream opened (``SPREAD_DELAY_S``, doubling with each attempt
    in a row, at most ``SPREAD_MAX_DELAY_S``), the stream taking its lane's
    calls meanwhile, so that the attempts are not spent before the
    connections to the other servers are up. So the streams spread over as
    many replicas and workers as there are, and with a single server they
    settle after those attempts. Calls go to the streams in turns of up
    to ``calls_per_turn`` calls, each call with an id; a turn ends early as
    soon as its stream has no call in flight, so unloaded the calls
    alternate between the streams. The calls that queue up while a stream's
    write is in flight go as one batch in its next message (up to half the
    message size limit; a call larger than that goes as the unary call,
    which answers it as it always did). A call of another kind (NewGame,
    View, LegalMoves) goes on the stream whose turn it is if that stream's
    server has said it takes that kind (``CALLS_HEADER``), else on another
    open stream that does, else as its unary call (a server of before those
    calls on streams, or no stream open yet: such a call opens none, and
    moves no turn). Turns rather than a call each: under
    load the calls of a turn queue behind one write and batch as on a single
    stream (about half the messages of alternating per call, with 50
    matches playing at once), while every stream, and so every rules replica
    the streams reach, still gets its share.

    Every call keeps its own deadline (``timeout``; past it ``RulesError``
    DEADLINE_EXCEEDED). When a stream breaks (UNAVAILABLE, or INTERNAL,
    UNKNOWN, CANCELLED as gRPC reports a connection reset mid-stream: a
    replica killed, a connection lost; or it ended with calls unanswered) its
    unanswered calls are sent again on a fresh stream, as the unary call's
    retry policy would (``service_config``: at most ``attempts`` sends each,
    after a jittered exponential backoff from 50 ms to 0.5 s); other failures of a stream
    (UNAUTHENTICATED, ...) are the error of each of its calls. A rules service
    without ApplyMoves (UNIMPLEMENTED) gets ``unary`` calls from then on. A
    stream is replaced after ``max_age_s``, so its service token (sent when it
    opens) stays fresh.
    """

    def __init__(
        self,
        target: str,
        count: int = 2,
        *,
        unary: Any,
        new_game_unary: Any = None,
        view_unary: Any = None,
        legal_moves_unary: Any = None,
        max_message_bytes: int = 4 * 1024 * 1024,
        metadata: Callable[[], Sequence[tuple[str, str]]] | None = None,
        attempts: int = 3,
        max_age_s: float = 600.0,
        calls_per_turn: int = 32,
        spread_attempts: int = 8,
    ) -> None:
        if calls_per_turn < 1:
            raise ValueError("calls_per_turn must be at least 1")
        if spread_attempts < 0:
            raise ValueError("spread_attempts must not be negative")
        self._unaries: dict[str, Any] = {
            "apply_move": unary,
            "new_game": new_game_unary,
            "view": view_unary,
            "legal_moves": legal_moves_unary,
        }
        """Each kind's unary call (None: that kind is not offered)."""
        self._metadata = metadata
        self.max_batch_bytes = max_message_bytes // 2
        """A message carries calls up to this size; a call larger alone goes unary."""
        self.attempts = attempts
        self.max_age_s = max_age_s
        self._target = target
        self._options = [
            *channel_options(max_message_bytes),
            ("grpc.service_config", json.dumps({"loadBalancingConfig": [{"round_robin": {}}]})),
            ("grpc.use_local_subchannel_pool", 1),
        ]
        self._channels = [self._channel() for _ in range(count)]
        """Each lane's channel (a lane: one of the ``count`` streams)."""
        self._streams: list[_Stream | None] = [None] * count
        self._alive: set[_Stream] = set()
        """Streams whose reader has not ended (a replaced one among them)."""
        self.spread_attempts = spread_attempts
        self._spreading = [0] * count
        """Each lane's replacements in a row of a stream that landed where another was."""
        self._ids = itertools.count(1)
        self._turn = len(self._streams) - 1  # the first call's turn passes to lane 0
        self.calls_per_turn = calls_per_turn
        self._turn_left = calls_per_turn
        """Calls the current stream (``_turn``) still takes before the next one."""
        self._closed = False
        self._tasks: set[asyncio.Future[None]] = set()
        self.unary_only = False
        """Set once the server answered UNIMPLEMENTED: every call goes unary."""
        self._loop: asyncio.AbstractEventLoop | None = None
        self.messages = 0
        """ApplyMovesRequest messages written (with ``calls``: the batching)."""
        self.calls = 0
        """Calls sent (a call sent again counts again)."""
        self.resent = 0
        """Calls sent again after their stream broke."""
        self.opened = 0
        """Streams opened."""
        self.respread = 0
        """Streams replaced for landing on a server another stream was on."""

    def _channel(self) -> grpc.aio.Channel:
        return grpc.aio.insecure_channel(self._target, options=self._options)

    def _placed(self, stream: _Stream, metadata: Any) -> None:
        """``stream`` opened on the server its initial ``metadata`` names:
        replaced when another lane's stream is there (``spread_attempts``)."""
        stream.instance = next((v for k, v in metadata or () if k == INSTANCE_HEADER), None)
        calls = next((v for k, v in metadata or () if k == CALLS_HEADER), "")
        stream.takes = frozenset(calls.split(",")) - {"", "apply_move"}
        if stream.instance is None:
            return  # a server that does not say
        if self._shares_a_server(stream):
            # Not at once: the channel's round robin picks among the
            # connections that are up, and the one to another server may
            # still be connecting (a busy machine, a client just started).
            # The stream serves its lane meanwhile.
            delay = min(SPREAD_MAX_DELAY_S, SPREAD_DELAY_S * 2 ** self._spreading[stream.lane])
            asyncio.get_running_loop().call_later(delay, self._respread, stream)

    def _shares_a_server(self, stream: _Stream) -> bool:
        """Whether ``stream`` is its lane's, on a server another lane's
        stream is on, with attempts left to move it (else the lane's
        attempts start again from 0)."""
        lane = stream.lane
        if self._closed or self._streams[lane] is not stream:
            return False  # a stream already replaced
        others = {s.instance for s in self._streams if s is not None and s is not stream}
        if stream.instance not in others or self._spreading[lane] >= self.spread_attempts:
            self._spreading[lane] = 0
            return False
        return True

    def _respread(self, stream: _Stream) -> None:
        """Replace ``stream`` (see the class) if it still shares a server."""
        if not self._shares_a_server(stream):
            return
        lane = stream.lane
        self._spreading[lane] += 1
        self.respread += 1
        self._streams[lane] = None  # the lane's next call opens another
        stream.retire()
        if self._spreading[lane] > 1:
            self._channels[lane] = self._channel()  # the old one closes with its last stream

    async def apply_move(
        self, request: rules_pb2.ApplyMoveRequest, timeout: float
    ) -> rules_pb2.ApplyMoveResponse:
        """The ApplyMoveResponse, or ``RulesError`` as the unary call would raise."""
        return await self._call(request, timeout)  # type: ignore[no-any-return]

    async def new_game(
        self, request: rules_pb2.NewGameRequest, timeout: float
    ) -> rules_pb2.NewGameResponse:
        """The NewGameResponse, or ``RulesError`` as the unary call would raise."""
        return await self._call(request, timeout)  # type: ignore[no-any-return]

    async def view(self, request: rules_pb2.ViewRequest, timeout: float) -> rules_pb2.ViewResponse:
        """The ViewResponse, or ``RulesError`` as the unary call would raise."""
        return await self._call(request, timeout)  # type: ignore[no-any-return]

    async def legal_moves(
        self, request: rules_pb2.LegalMovesRequest, timeout: float
    ) -> rules_pb2.LegalMovesResponse:
        """The LegalMovesResponse, or ``RulesError`` as the unary call would raise."""
        return await self._call(request, timeout)  # type: ignore[no-any-return]

    def offers(self, kind: str) -> bool:
        """Whether calls of ``kind`` (``CALLS_HEADER``'s names) are made here."""
        return self._unaries.get(kind) is not None

    async def _call(self, request: _StreamRequest, timeout: float) -> Any:
        if not self.offers(_KINDS[type(request)][0]):
            raise TypeError(f"these streams were made without the unary {type(request).__name__}")
        if self._closed:
            raise _closed()
        if self.unary_only:
            return await self._call_unary(request, timeout)
        loop = self._loop
        if loop is None:  # the channels' loop (taken once: a system call each on 3.11)
            loop = self._loop = asyncio.get_running_loop()
        future: asyncio.Future[Any] = loop.create_future()
        call = _Call(next(self._ids), request, future, time.monotonic() + timeout)
        timer = loop.call_later(timeout, _expire, future)
        self._send(call)
        try:
            return await future
        finally:
            timer.cancel()
            if call.stream is not None:
                call.stream.pending.pop(call.id, None)

    async def _call_unary(self, request: _StreamRequest, timeout: float) -> Any:
        method = self._unaries[_KINDS[type(request)][0]]
        try:
            return await method(
                request,
                timeout=timeout,
                metadata=self._metadata() if self._metadata is not None else None,
            )
        except grpc.aio.AioRpcError as e:
            raise RulesError.from_rpc(e) from None

    def _send(self, call: _Call) -> None:
        if call.future.done():
            return
        if self._closed:
            call.future.set_exception(_closed())
            return
        if self.unary_only or call.size > self.max_batch_bytes:
            self._send_unary(call)
            return
        current = self._streams[self._turn]
        # The turn passes on after ``calls_per_turn`` calls, and at once when
        # this stream has nothing in flight (no write for the call to batch
        # behind): unloaded, calls alternate between the streams.
        passes = self._turn_left <= 0 or current is None or not current.pending
        lane = (self._turn + 1) % len(self._streams) if passes else self._turn
        stream = self._streams[lane]
        aged = stream is not None and time.monotonic() - stream.opened > self.max_age_s
        kind = call.kind
        if kind != "apply_move" and (stream is None or aged or kind not in stream.takes):
            # Another open stream that takes it, else the unary call; either
            # way the turns stay as they were.
            other = next(
                (s for s in self._streams if s is not None and kind in s.takes and not s.retiring),
                None,
            )
            if other is None:
                self._send_unary(call)
            else:
                self.calls += 1
                other.send(call)
            return
        if passes:
            self._turn, self._turn_left = lane, self.calls_per_turn
        self._turn_left -= 1
        if aged:
            assert stream is not None
            stream.retire()
            stream = None
        if stream is None:
            metadata = self._metadata() if self._metadata is not None else None
            channel = self._channels[lane]
            rpc = channel.stream_stream(
                _APPLY_MOVES,
                request_serializer=rules_pb2.ApplyMovesRequest.SerializeToString,
                response_deserializer=rules_pb2.ApplyMovesResponse.FromString,
            )(metadata=metadata)
            stream = self._streams[lane] = _Stream(self, lane, channel, rpc)
            self._alive.add(stream)
            self.opened += 1
        self.calls += 1
        stream.send(call)

    def _send_unary(self, call: _Call) -> None:
        task = asyncio.ensure_future(self._unary_for(call))
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    async def _unary_for(self, call: _Call) -> None:
        """A call sent as the unary ApplyMove or NewGame (the server has no
        ApplyMoves, or its stream does not take the call)."""
        try:
            reply = await self._call_unary(
                call.request, max(0.001, call.deadline - time.monotonic())
            )
        except RulesError as e:
            if not call.future.done():
                call.future.set_exception(e)
        except Exception:  # the channel closed meanwhile
            if not call.future.done():
                call.future.set_exception(_closed())
        else:
            if not call.future.done():
                call.future.set_result(reply)

    def _ended(self, stream: _Stream, error: grpc.aio.AioRpcError | None) -> None:
        """A stream ended: send its unanswered calls again, or fail them."""
        if self._streams[stream.lane] is stream:
            self._streams[stream.lane] = None
        self._alive.discard(stream)
        channel = stream.channel
        if channel not in self._channels and not any(s.channel is channel for s in self._alive):
            task = asyncio.ensure_future(channel.close())  # a lane's old channel, now unused
            self._tasks.add(task)
            task.add_done_callback(self._tasks.discard)
        calls = [c for c in stream.pending.values() if not c.future.done()]
        stream.pending.clear()
        if not calls:
            return
        if error is not None and error.code() is grpc.StatusCode.UNIMPLEMENTED:
            self.unary_only = True
            for c in calls:
                self._send(c)
            return
        if self._closed:
            fail: RulesError | None = _closed()
        elif error is not None and error.code() not in _BROKEN:
            fail = RulesError.from_rpc(error)  # a refusal of the stream: each call's answer
        else:
            fail = None  # broken (or ended early): the calls were not answered
        loop = asyncio.get_running_loop()
        for c in calls:
            if fail is None and c.attempts < self.attempts:
                self.resent += 1
                backoff = min(0.05 * 2 ** (c.attempts - 1), 0.5)
                loop.call_later(random.uniform(0, backoff), self._send, c)
            elif fail is not None:
                c.future.set_exception(fail)
            elif error is not None:
                c.future.set_exception(RulesError.from_rpc(error))
            else:
                c.future.set_exception(
                    RulesError(
                        grpc.StatusCode.UNAVAILABLE,
                        "stream_broken",
                        "every ApplyMoves stream this call was sent on ended unanswered",
                    )
                )

    async def close(self) -> None:
        self._closed = True
        alive = list(self._alive)  # the lanes' streams, and replaced ones still answering
        channels = {id(c): c for c in [*self._channels, *(s.channel for s in alive)]}
        for stream in alive:
            stream.call.cancel()
        if alive:
            with contextlib.suppress(Exception):
                await asyncio.gather(*(s.reader for s in alive), return_exceptions=True)
        for channel in channels.values():
            await channel.close()


def _closed() -> RulesError:
    return RulesError(grpc.StatusCode.UNAVAILABLE, "client_closed", "the rules client was closed")


def _expire(future: asyncio.Future[Any]) -> None:
    if not future.done():
        future.set_exception(
            RulesError(grpc.StatusCode.DEADLINE_EXCEEDED, "deadline_exceeded", "deadline exceeded")
        )
