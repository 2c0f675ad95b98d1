"""``RulesService``: decode, one engine call, encode. No rules live here.

Errors are raised, not returned: the server's ``RpcInterceptor``
(``services.common.interceptor``) turns them into statuses with ``ErrorInfo``
details (``services.common.errors``; see ``rules.proto``).
"""

from __future__ import annotations

import contextvars
import functools
import inspect
import os
import secrets
import time
from collections.abc import AsyncIterator, Sequence
from typing import Any

import grpc
import msgspec

from engine_core.decider import BaseGame, Game, apply, start
from engine_core.errors import EngineError, UnknownSeat
from engine_core.notation import move_text
from engine_core.registry import Registry, UnknownGame, default_registry
from engine_core.types import Outcome
from services.common.bounds import check_message, check_request
from services.common.codecs import (
    check_json,
    codec_for,
    decode_events,
    decode_options,
    decode_state,
    encode_state,
    envelope_of,
    state_from,
    to_json,
)
from services.common.errors import (
    MAX_MESSAGE_CHARS,
    MAX_METADATA_CHARS,
    MAX_METADATA_ENTRIES,
    FailedPrecondition,
    InvalidArgument,
    ServiceError,
    clip,
    status_of,
)
from services.common.logging import RpcObserver, bind, get_logger, log_rpc, notify, rpc_quiet
from services.common.standin import stand_in_move
from services.rules.client import CALLS_HEADER, INSTANCE_HEADER
from services.rules.settings import RulesSettings
from tabletop.common.v1 import common_pb2
from tabletop.rules.v1 import rules_pb2, rules_pb2_grpc

SERVICE_NAME = rules_pb2.DESCRIPTOR.services_by_name["RulesService"].full_name
APPLY_MOVE = f"/{SERVICE_NAME}/ApplyMove"
NEW_GAME = f"/{SERVICE_NAME}/NewGame"
VIEW = f"/{SERVICE_NAME}/View"
LEGAL_MOVES = f"/{SERVICE_NAME}/LegalMoves"
STREAM_CALLS = "apply_move,new_game,view,legal_moves"
"""The kinds of call an ApplyMoves stream of this server answers (``CALLS_HEADER``)."""


def describe(game: Game) -> rules_pb2.GameDescription:
    """A game's identity and the JSON Schemas of its wire types."""

    def schema(tp: Any) -> str:
        return msgspec.json.encode(msgspec.json.schema(tp)).decode()

    return rules_pb2.GameDescription(
        info=common_pb2.GameInfo(
            id=game.name,
            title=game.title,
            min_players=game.min_players,
            max_players=game.max_players,
            rules_version=game.rules_version,
        ),
        schemas=rules_pb2.GameSchemas(
            options=schema(game.Options),
            move=schema(game.Move),
            event=schema(game.Event),
            view=schema(game.View),
        ),
    )


def outcome_pb(outcome: Outcome | None) -> common_pb2.Outcome | None:
    if outcome is None:
        return None
    return common_pb2.Outcome(
        ranks=list(outcome.ranks), scores=list(outcome.scores), reason=outcome.reason
    )


_log = get_logger("rules")
_REJECTIONS = (ServiceError, EngineError, UnknownGame, grpc.aio.AbortError)


def _unprocessable(e: Exception) -> InvalidArgument:
    _log.error("engine_failed_on_input", error=type(e).__name__, exc_info=e)
    return InvalidArgument(
        "unprocessable_input",
        f"the engine could not process this input ({type(e).__name__}): "
        "a state no game reaches, or a move the rules do not cover",
        error=type(e).__name__,
    )


def _on_client_input(rpc: Any) -> Any:
    """Every input of these calls is the client's (the state too: this service
    keeps none). A state can decode as the game's type and still be one no
    game reaches (crafted, or mutated in transit), and the engine trusts its
    states: what it raises then is answered ``INVALID_ARGUMENT
    unprocessable_input``, never INTERNAL, and logged with its traceback (an
    engine bug on a real state shows up there)."""

    if not inspect.iscoroutinefunction(rpc):

        @functools.wraps(rpc)
        def work(*args: Any) -> Any:
            try:
                return rpc(*args)
            except _REJECTIONS:
                raise
            except Exception as e:
                raise _unprocessable(e) from None

        return work

    @functools.wraps(rpc)
    async def call(self: Any, request: Any, context: Any) -> Any:
        try:
            return await rpc(self, request, context)
        except _REJECTIONS:
            raise
        except Exception as e:
            raise _unprocessable(e) from None

    return call


class _Late(ServiceError):
    """A call of ApplyMoves whose caller stopped waiting before its turn came."""

    status = grpc.StatusCode.DEADLINE_EXCEEDED


def _tag(value: Any) -> str:
    return str(getattr(type(value).__struct_config__, "tag", type(value).__name__))


class RulesServicer(rules_pb2_grpc.RulesServiceServicer):
    """The engine behind ``tabletop.rules.v1.RulesService``."""

    def __init__(
        self,
        settings: RulesSettings | None = None,
        registry: Registry | None = None,
        *,
        observers: Sequence[RpcObserver] = (),
    ) -> None:
        """``observers``: called after each call of an ApplyMoves stream as the
        server interceptor's are after a unary call (method ``ApplyMove``)."""
        self.settings = settings or RulesSettings()
        self.observers = tuple(observers)
        self.registry = registry or default_registry()
        self._games = rules_pb2.ListGamesResponse(games=[describe(game) for game in self.registry])
        self.instance = secrets.token_hex(8)
        """This server's name on its ApplyMoves streams (``INSTANCE_HEADER``):
        random, so it says nothing of the host; one per server, so each
        worker process and each replica has its own."""
        self._stream_calls = {
            kind: (method, work, answer, rpc_quiet(method), in_place)
            for kind, method, work, answer, in_place in (
                ("request", APPLY_MOVE, self._apply_move, "reply", True),
                ("new_game", NEW_GAME, self._new_game, "new_game", True),
                ("view", VIEW, self._view, "view", False),
                ("legal_moves", LEGAL_MOVES, self._legal_moves, "legal_moves", False),
            )
        }
        """Each kind of call of an ApplyMoves stream (its field of the call):
        the unary method it stands for, its work, its field of the result,
        how its ``rpc`` line is logged (as that method's: a successful
        ``View`` or ``LegalMoves`` at debug, one in ``TABLETOP_LOG_SAMPLE``
        at info), and whether its work writes the answer into the result's
        field itself (else the answer is copied there)."""

    # ------------------------------------------------------------- helpers
    def _game(self, name: str) -> Game:
        game = self.registry.get(name)  # UnknownGame -> NOT_FOUND
        bind(game=name)
        return game

    def _game_and_state(self, name: str, data: bytes) -> tuple[Game, Any]:
        """The game (``name``, or the one the state names if empty) and the
        state (its envelope read once)."""
        if name:  # an unknown game is refused before the state is read
            game = self._game(name)
            return game, decode_state(game, data)
        env = envelope_of(data)
        game = self._game(env.game)
        return game, state_from(game, env)

    def _json(self, what: str, text: str) -> str:
        """``text`` within the size limit and ``MAX_JSON_DEPTH`` (INVALID_ARGUMENT
        ``json_too_large`` / ``json_too_deep`` beyond)."""
        return check_json(what, text, self.settings.max_json_bytes)  # type: ignore[return-value]

    def _entropy(self, data: bytes) -> bytes:
        if len(data) > self.settings.max_entropy_bytes:
            raise InvalidArgument(
                "entropy_too_large",
                f"entropy is limited to {self.settings.max_entropy_bytes} bytes",
            )
        return data or os.urandom(32)

    @staticmethod
    def _seat(game: Game, state: Any, seat: int) -> int:
        seats = game.seats(state)
        if not 0 <= seat < seats:
            raise UnknownSeat(message=f"seat {seat} is not in this match (seats 0..{seats - 1})")
        return seat

    @staticmethod
    async def _before_work(context: grpc.aio.ServicerContext) -> None:
        """Do not start work whose answer nobody waits for any more."""
        remaining = context.time_remaining()
        if remaining is not None and remaining <= 0:
            await context.abort(grpc.StatusCode.DEADLINE_EXCEEDED, "deadline exceeded")

    @staticmethod
    def _rows(
        game: Game, state: Any, events: tuple[Any, ...], texts: list[str]
    ) -> list[tuple[int | None, list[str]]]:
        """The events as each seat, then a spectator, may see them ("" = hidden)."""
        seats = [*range(game.seats(state)), None]
        if type(game).redact is BaseGame.redact:  # a public game: everybody sees them all
            return [(seat, texts) for seat in seats]
        out = []
        for seat in seats:
            row = []
            for event, text in zip(events, texts, strict=True):
                shown = game.redact(event, seat)
                if shown is None:
                    row.append("")
                elif shown is event or shown == event:
                    row.append(text)
                else:
                    row.append(to_json(shown).decode())
            out.append((seat, row))
        return out

    def _played(
        self,
        out: rules_pb2.ApplyMoveResponse | rules_pb2.NewGameResponse,
        game: Game,
        state: Any,
        events: tuple[Any, ...],
        entropy: bytes,
    ) -> Any:
        """The answer of a NewGame or an ApplyMove call, written into ``out``
        (on a stream, the result's field: the answer is built where it is
        sent, not built and then copied there). ``out`` is touched only once
        all of it is known, so a call that fails leaves it empty."""
        texts = [to_json(e).decode() for e in events]
        data = encode_state(game, state)
        awaiting = game.awaiting(state)
        outcome = game.outcome(state)
        bind(outcome=outcome.reason if outcome is not None else "ongoing")
        rows = self._rows(game, state, events, texts)
        out.state = data
        out.events.extend(texts)
        out.status.awaiting.extend(awaiting)
        if outcome is not None:
            out.status.outcome.CopyFrom(outcome_pb(outcome))
        out.entropy = entropy
        for seat, row in rows:
            if seat is None:
                out.redacted.add(events=row)
            else:
                out.redacted.add(seat=seat, events=row)
        out.rules_version = game.rules_version
        return out

    @staticmethod
    def _status(game: Game, state: Any) -> rules_pb2.GameStatus:
        outcome = game.outcome(state)
        bind(outcome=outcome.reason if outcome is not None else "ongoing")
        return rules_pb2.GameStatus(
            awaiting=list(game.awaiting(state)), outcome=outcome_pb(outcome)
        )

    # ---------------------------------------------------------------- RPCs
    async def ListGames(
        self, request: rules_pb2.ListGamesRequest, context: grpc.aio.ServicerContext
    ) -> rules_pb2.ListGamesResponse:
        return self._games

    async def NewGame(
        self, request: rules_pb2.NewGameRequest, context: grpc.aio.ServicerContext
    ) -> rules_pb2.NewGameResponse:
        await self._before_work(context)
        return self._new_game(request)

    @_on_client_input
    def _new_game(
        self, request: rules_pb2.NewGameRequest, out: rules_pb2.NewGameResponse | None = None
    ) -> rules_pb2.NewGameResponse:
        """One NewGame call, for the unary RPC and for each such call of
        ApplyMoves (``out``: the answer's place in the stream's result)."""
        game = self._game(request.game)
        bind(players=request.players)
        if not game.min_players <= request.players <= game.max_players:
            raise InvalidArgument(
                "bad_player_count",
                f"{game.name} plays with {game.min_players}-{game.max_players} players, "
                f"not {request.players}",
                min_players=str(game.min_players),
                max_players=str(game.max_players),
            )
        options = decode_options(game, self._json("options", request.options))
        entropy = self._entropy(request.entropy)
        state, events = start(game, request.players, options, entropy)
        return self._played(
            rules_pb2.NewGameResponse() if out is None else out, game, state, events, entropy
        )

    async def ApplyMove(
        self, request: rules_pb2.ApplyMoveRequest, context: grpc.aio.ServicerContext
    ) -> rules_pb2.ApplyMoveResponse:
        await self._before_work(context)
        return self._apply_move(request)

    @_on_client_input
    def _apply_move(
        self, request: rules_pb2.ApplyMoveRequest, out: rules_pb2.ApplyMoveResponse | None = None
    ) -> rules_pb2.ApplyMoveResponse:
        """One ApplyMove call, for the unary RPC and for each call of
        ApplyMoves (``out``: the answer's place in the stream's result)."""
        bind(seat=request.seat)
        game, state = self._game_and_state(request.game, request.state)
        # checked by ``_json`` (its size and depth): decoded with no check again
        move = codec_for(game).decode_move(self._json("move", request.move))
        bind(move=_tag(move))
        entropy = self._entropy(request.entropy)
        after, events = apply(game, state, request.seat, move, entropy)
        return self._played(
            rules_pb2.ApplyMoveResponse() if out is None else out, game, after, events, entropy
        )

    async def ApplyMoves(
        self,
        requests: AsyncIterator[rules_pb2.ApplyMovesRequest],
        context: grpc.aio.ServicerContext,
    ) -> AsyncIterator[rules_pb2.ApplyMovesResponse]:
        """Each request message's calls (ApplyMove, or NewGame, View or
        LegalMoves for a call with that field), one after the other, answered in one
        response message (or several, each under half the message size
        limit). The server interceptor leaves a request stream's messages to
        its handler: a message that does not decode ends the stream
        (``malformed_request``); each call's request is checked alone
        (``check_request`` in ``_one_call``: a refusal for that call). Each
        call runs in a context of its own: its fields, its log line, the
        metrics of the unary method it stands for. The stream opens with this
        server's ``INSTANCE_HEADER``, by which a client spreads its streams
        over the replicas and workers behind one target, and with
        ``CALLS_HEADER``, the kinds of call it answers."""
        await context.send_initial_metadata(
            ((INSTANCE_HEADER, self.instance), (CALLS_HEADER, STREAM_CALLS))
        )
        limit = self.settings.max_message_bytes // 2
        async for batch in requests:
            if not isinstance(batch, rules_pb2.ApplyMovesRequest):
                check_message(batch)  # bytes that are not one: malformed_request
            received = time.perf_counter()
            out = rules_pb2.ApplyMovesResponse()
            size = 0
            for call in batch.calls:
                result = out.results.add(id=call.id)
                contextvars.copy_context().run(self._one_call, call, received, result)
                size += result.ByteSize() + 8
                if size >= limit:  # answers of many large calls: in several messages
                    yield out
                    out, size = rules_pb2.ApplyMovesResponse(), 0
            if out.results:
                yield out

    def _one_call(
        self,
        call: rules_pb2.ApplyMovesRequest.Call,
        received: float,
        result: rules_pb2.ApplyMovesResponse.Result,
    ) -> None:
        """Answer one call of ApplyMoves into ``result``, as the unary call
        (ApplyMove, or the one whose field the call sets) would: the same
        bounds (``check_request``), the same work, the same reason codes;
        then one ``rpc`` line and the observers, with that unary call's
        method, as the interceptors do for a unary call."""
        kind = call.WhichOneof("call") or "request"
        method, work, answer, quiet, in_place = self._stream_calls[kind]
        bind(method=method, via="ApplyMoves")
        started = time.perf_counter()
        code = "OK"
        try:
            request = getattr(call, kind)
            check_request(request)
            if call.timeout_ms and (started - received) * 1000 >= call.timeout_ms:
                raise _Late("deadline_exceeded", "deadline exceeded")
            if in_place:
                work(request, getattr(result, answer))
            else:
                getattr(result, answer).CopyFrom(work(request))
        except Exception as e:
            status, reason, message, metadata = status_of(e)
            bind(reason=reason)
            if status is grpc.StatusCode.INTERNAL:
                _log.error("unhandled_error", exc_info=e)
            code = status.name
            error = result.error
            error.code = status.value[0]
            error.reason = clip(reason, 64)
            error.message = clip(message, MAX_MESSAGE_CHARS)
            for k, v in list(metadata.items())[:MAX_METADATA_ENTRIES]:
                error.metadata[clip(str(k), 64)] = clip(str(v), MAX_METADATA_CHARS)
        seconds = time.perf_counter() - started
        log_rpc(method, quiet, code, seconds)
        if self.observers:
            notify(self.observers, method, code, seconds)

    async def LegalMoves(
        self, request: rules_pb2.LegalMovesRequest, context: grpc.aio.ServicerContext
    ) -> rules_pb2.LegalMovesResponse:
        await self._before_work(context)
        return self._legal_moves(request)

    @_on_client_input
    def _legal_moves(self, request: rules_pb2.LegalMovesRequest) -> rules_pb2.LegalMovesResponse:
        """One LegalMoves call, for the unary RPC and for each such call of ApplyMoves."""
        bind(seat=request.seat)
        game, state = self._game_and_state(request.game, request.state)
        seat = self._seat(game, state, request.seat)
        moves = game.legal_moves(state, seat)
        return rules_pb2.LegalMovesResponse(
            moves=[to_json(m).decode() for m in moves], texts=[move_text(m) for m in moves]
        )

    async def View(
        self, request: rules_pb2.ViewRequest, context: grpc.aio.ServicerContext
    ) -> rules_pb2.ViewResponse:
        await self._before_work(context)
        return self._view(request)

    @_on_client_input
    def _view(self, request: rules_pb2.ViewRequest) -> rules_pb2.ViewResponse:
        """One View call, for the unary RPC and for each such call of ApplyMoves."""
        game, state = self._game_and_state(request.game, request.state)
        seat = self._seat(game, state, request.seat) if request.HasField("seat") else None
        bind(seat=seat if seat is not None else "spectator", full=request.full)
        if request.full:
            if game.outcome(state) is None:
                raise FailedPrecondition(
                    "game_not_over", "the whole state is shown only once the game is over"
                )
            view = state
        else:
            view = game.view(state, seat)
        return rules_pb2.ViewResponse(view=to_json(view).decode(), status=self._status(game, state))

    @_on_client_input
    async def Outcome(
        self, request: rules_pb2.OutcomeRequest, context: grpc.aio.ServicerContext
    ) -> rules_pb2.OutcomeResponse:
        game, state = self._game_and_state(request.game, request.state)
        return rules_pb2.OutcomeResponse(status=self._status(game, state))

    @_on_client_input
    async def DefaultMove(
        self, request: rules_pb2.DefaultMoveRequest, context: grpc.aio.ServicerContext
    ) -> rules_pb2.DefaultMoveResponse:
        bind(seat=request.seat, bot=request.bot or "default")
        game, state = self._game_and_state(request.game, request.state)
        seat = self._seat(game, state, request.seat)
        entropy = self._entropy(request.entropy)
        await self._before_work(context)
        move = stand_in_move(game, state, seat, request.bot, entropy)
        return rules_pb2.DefaultMoveResponse(move=to_json(move).decode())

    @_on_client_input
    async def Fold(
        self, request: rules_pb2.FoldRequest, context: grpc.aio.ServicerContext
    ) -> rules_pb2.FoldResponse:
        if request.state:
            game, state = self._game_and_state(request.game, request.state)
        else:
            game, state = self._game(request.game), None
        bind(events=len(request.events))
        events = decode_events(game, request.events)
        if state is None and not events:
            raise InvalidArgument("nothing_to_fold", "neither a state nor events were sent")
        await self._before_work(context)
        for i, event in enumerate(events):
            try:
                state = game.evolve(state, event)
            except Exception as e:
                # evolve records facts and trusts them; a sequence that does not
                # apply is the caller's (a foreign or reordered log), not a crash.
                raise InvalidArgument(
                    "events_do_not_apply",
                    f"event {i} ({_tag(event)}) does not apply to the state before it "
                    f"({type(e).__name__})",
                    index=str(i),
                ) from None
        return rules_pb2.FoldResponse(
            state=encode_state(game, state), status=self._status(game, state)
        )
