"""``RulesService``: decode, one engine call, encode. No rules live here.

Errors are raised, not returned: ``services.common.errors.ErrorInterceptor``
turns them into statuses with ``ErrorInfo`` details (see ``rules.proto``).
"""

from __future__ import annotations

import os
from typing import Any

import grpc
import msgspec

from engine_core.decider import Game, apply, start
from engine_core.errors import UnknownSeat
from engine_core.notation import move_text
from engine_core.registry import Registry, default_registry
from engine_core.types import Outcome
from services.common.codecs import (
    check_json,
    decode_events,
    decode_move,
    decode_options,
    decode_state,
    encode_state,
    peek_state_game,
    to_json,
)
from services.common.errors import FailedPrecondition, InvalidArgument
from services.common.logging import bind
from services.common.standin import stand_in_move
from services.rules.settings import RulesSettings
from tabletop.common.v1 import common_pb2
from tabletop.rules.v1 import rules_pb2, rules_pb2_grpc

SERVICE_NAME = rules_pb2.DESCRIPTOR.services_by_name["RulesService"].full_name


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


def _tag(value: Any) -> str:
    return str(getattr(type(value).__struct_config__, "tag", type(value).__name__))


class RulesServicer(rules_pb2_grpc.RulesServiceServicer):
    """The engine behind ``tabletop.rules.v1.RulesService``."""

    def __init__(
        self, settings: RulesSettings | None = None, registry: Registry | None = None
    ) -> None:
        self.settings = settings or RulesSettings()
        self.registry = registry or default_registry()
        self._games = rules_pb2.ListGamesResponse(games=[describe(game) for game in self.registry])

    # ------------------------------------------------------------- helpers
    def _game(self, name: str) -> Game:
        game = self.registry.get(name)  # UnknownGame -> NOT_FOUND
        bind(game=name)
        return game

    def _game_and_state(self, name: str, data: bytes) -> tuple[Game, Any]:
        """The game (``name``, or the one the state names if empty) and the state."""
        if not name:
            name, _ = peek_state_game(data)
        game = self._game(name)
        return game, decode_state(game, data)

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
    def _redacted(
        game: Game, state: Any, events: tuple[Any, ...], texts: list[str]
    ) -> list[rules_pb2.RedactedEvents]:
        """The events as each seat, then a spectator, may see them ("" = hidden)."""
        out = []
        for seat in [*range(game.seats(state)), None]:
            row = []
            for event, text in zip(events, texts, strict=True):
                shown = game.redact(event, seat)
                if shown is None:
                    row.append("")
                elif shown is event or shown == event:
                    row.append(text)
                else:
                    row.append(to_json(shown).decode())
            out.append(rules_pb2.RedactedEvents(seat=seat, events=row))
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
        await self._before_work(context)
        state, events = start(game, request.players, options, entropy)
        texts = [to_json(e).decode() for e in events]
        return rules_pb2.NewGameResponse(
            state=encode_state(game, state),
            events=texts,
            status=self._status(game, state),
            entropy=entropy,
            redacted=self._redacted(game, state, events, texts),
            rules_version=game.rules_version,
        )

    async def ApplyMove(
        self, request: rules_pb2.ApplyMoveRequest, context: grpc.aio.ServicerContext
    ) -> rules_pb2.ApplyMoveResponse:
        bind(seat=request.seat)
        game, state = self._game_and_state(request.game, request.state)
        move = decode_move(game, self._json("move", request.move))
        bind(move=_tag(move))
        entropy = self._entropy(request.entropy)
        await self._before_work(context)
        after, events = apply(game, state, request.seat, move, entropy)
        texts = [to_json(e).decode() for e in events]
        return rules_pb2.ApplyMoveResponse(
            state=encode_state(game, after),
            events=texts,
            status=self._status(game, after),
            entropy=entropy,
            redacted=self._redacted(game, after, events, texts),
            rules_version=game.rules_version,
        )

    async def LegalMoves(
        self, request: rules_pb2.LegalMovesRequest, context: grpc.aio.ServicerContext
    ) -> rules_pb2.LegalMovesResponse:
        bind(seat=request.seat)
        game, state = self._game_and_state(request.game, request.state)
        seat = self._seat(game, state, request.seat)
        await self._before_work(context)
        moves = game.legal_moves(state, seat)
        return rules_pb2.LegalMovesResponse(
            moves=[to_json(m).decode() for m in moves], texts=[move_text(m) for m in moves]
        )

    async def View(
        self, request: rules_pb2.ViewRequest, context: grpc.aio.ServicerContext
    ) -> rules_pb2.ViewResponse:
        game, state = self._game_and_state(request.game, request.state)
        seat = self._seat(game, state, request.seat) if request.HasField("seat") else None
        bind(seat=seat if seat is not None else "spectator", full=request.full)
        await self._before_work(context)
        if request.full:
            if game.outcome(state) is None:
                raise FailedPrecondition(
                    "game_not_over", "the whole state is shown only once the game is over"
                )
            view = state
        else:
            view = game.view(state, seat)
        return rules_pb2.ViewResponse(view=to_json(view).decode(), status=self._status(game, state))

    async def Outcome(
        self, request: rules_pb2.OutcomeRequest, context: grpc.aio.ServicerContext
    ) -> rules_pb2.OutcomeResponse:
        game, state = self._game_and_state(request.game, request.state)
        return rules_pb2.OutcomeResponse(status=self._status(game, state))

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
