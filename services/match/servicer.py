"""The gRPC face of the match application: proto in, one call, proto out.

Every call authenticates its bearer token first (``GuestLogin`` excepted;
``RefreshToken`` also takes a recently expired one).
Errors are raised as they are: the server's ``RpcInterceptor`` turns them
into statuses with ``ErrorInfo`` details and writes one line per call with
the fields bound here (player, game, match, seat, version, outcome).
"""

from __future__ import annotations

import math
from typing import Any

from engine_core.types import Outcome
from services.common.auth import Principal, Tokens, bearer_token, is_bot
from services.common.bounds import check_message
from services.common.codecs import check_json
from services.common.errors import InvalidArgument, error_fields
from services.common.logging import bind
from services.match.app import CommitView, MatchApp, MoveResult, Turn
from services.match.errors import BadRequest
from services.match.model import (
    STATUS_ACTIVE,
    STATUS_FINISHED,
    Clocks,
    MatchOptions,
    now_ms,
    rfc3339,
)
from services.match.plays import Answered, Committed, Frame, MoveRate, PlayMove, Refused
from services.match.sessions import (
    Close,
    Closed,
    Create,
    Created,
    CreateRate,
    CreateRefused,
    Move,
    Open,
    SessionFrame,
    SubFrame,
)
from services.match.time_control_pb import time_control_in, time_control_pb
from tabletop.common.v1 import common_pb2
from tabletop.match.v1 import match_pb2, match_pb2_grpc

_STATUS = {
    STATUS_ACTIVE: match_pb2.MATCH_STATUS_ACTIVE,
    STATUS_FINISHED: match_pb2.MATCH_STATUS_FINISHED,
}
MAX_JSON_BYTES = 64 * 1024
REPLAY_MIN_SPEED = 0.1
"""Slowest replay pace (a tenth of real time: pauses are at most 2 s / 0.1 = 20 s)."""
REPLAY_MAX_SPEED = 1000.0

_STATUS_FILTER = {
    match_pb2.MATCH_STATUS_UNSPECIFIED: None,
    match_pb2.MATCH_STATUS_ACTIVE: STATUS_ACTIVE,
    match_pb2.MATCH_STATUS_FINISHED: STATUS_FINISHED,
}


def replay_speed(speed: float) -> float:
    """``speed`` if it is 0 (as fast as possible) or within the replay range."""
    if speed == 0:
        return 0.0
    if not (math.isfinite(speed) and REPLAY_MIN_SPEED <= speed <= REPLAY_MAX_SPEED):
        raise InvalidArgument(
            "bad_speed",
            f"speed is 0 (as fast as possible) or {REPLAY_MIN_SPEED}..{REPLAY_MAX_SPEED}",
            min=str(REPLAY_MIN_SPEED),
            max=str(REPLAY_MAX_SPEED),
        )
    return speed


def outcome_pb(outcome: Outcome | None) -> common_pb2.Outcome | None:
    if outcome is None:
        return None
    return common_pb2.Outcome(
        ranks=list(outcome.ranks), scores=list(outcome.scores), reason=outcome.reason
    )


def clocks_pb(clocks: Clocks | None) -> list[Any]:
    if clocks is None:
        return []
    out = []
    for s, deadline in enumerate(clocks.deadlines):
        pb = match_pb2.SeatClock(
            seat=s,
            deadline=rfc3339(deadline) if deadline else "",
            timeouts=clocks.timeouts[s] if clocks.timeouts else 0,
            taken_over=bool(clocks.taken_over and clocks.taken_over[s]),
        )
        if clocks.remaining:
            pb.remaining_ms = clocks.remaining[s]
        out.append(pb)
    return out


def match_options_pb(options: MatchOptions) -> Any:
    return match_pb2.MatchOptions(
        public_replay=options.public_replay,
        time_control=time_control_pb(options.time_control),
    )


def _commit_fields(c: CommitView) -> dict[str, Any]:
    """The fields of ``c``'s ``MatchCommit`` that differ from their defaults
    (a message built from them, or a ``PlayFrame`` from them without a copy
    of a built one)."""
    fields: dict[str, Any] = {
        "version": c.version,
        "events_json": c.events,
        "status": _STATUS[c.status],
        "committed_at": c.committed_at,
    }
    if c.seat is not None:
        fields["seat"] = c.seat
    if c.view:
        fields["view_json"] = c.view
    if c.move:
        fields["move_json"] = c.move
    if c.outcome is not None:
        fields["outcome"] = outcome_pb(c.outcome)
    if c.clocks is not None:
        fields["clocks"] = clocks_pb(c.clocks)
    if c.timeout:
        fields["timeout"] = True
    if c.forfeit:
        fields["forfeit"] = True
    if c.ended_by_service:
        fields["ended_by_service"] = True
    if c.turn is not None:
        fields["turn"] = turn_pb(c.turn)
    return fields


def turn_pb(t: Turn) -> match_pb2.Turn:
    pb = match_pb2.Turn(
        awaiting=t.awaiting, legal_moves_json=t.legal_moves, server_time=rfc3339(t.server_ms)
    )
    if t.your_seat is not None:
        pb.your_seat = t.your_seat
    return pb


def commit_pb(c: CommitView) -> match_pb2.MatchCommit:
    return match_pb2.MatchCommit(**_commit_fields(c))


def _frame_fields(frame: Frame) -> dict[str, Any]:
    """The fields of ``frame``'s ``PlayFrame`` (also those of a
    ``SessionFrame``, which has the same kinds under the same names)."""
    kind = type(frame)
    if kind is Committed:
        return {"commit": _commit_fields(frame.commit), "ref": frame.ref}
    if kind is Answered:
        r = frame.result
        answer = match_pb2.PlayAnswer(version=r.version, seat=r.seat, status=_STATUS[r.status])
        return {"answer": answer, "ref": frame.ref}
    assert kind is Refused
    return {"error": play_error_pb(frame.error), "ref": frame.ref}


def play_error_pb(error: BaseException) -> match_pb2.PlayError:
    """Exactly the status the unary call would have ended with."""
    code, reason, message, metadata = error_fields(error)
    return match_pb2.PlayError(code=code.name, reason=reason, message=message, metadata=metadata)


def play_frame_pb(frame: Frame) -> match_pb2.PlayFrame:
    return match_pb2.PlayFrame(**_frame_fields(frame))


def session_frame_pb(out: SessionFrame) -> match_pb2.SessionFrame:
    kind = type(out)
    if kind is SubFrame:
        return match_pb2.SessionFrame(sub=out.sub, **_frame_fields(out.frame))
    if kind is Created:
        created = match_pb2.CreateMatchResponse(match_id=out.match_id, version=out.version)
        return match_pb2.SessionFrame(created=created, ref=out.ref)
    if kind is CreateRefused:
        return match_pb2.SessionFrame(error=play_error_pb(out.error), ref=out.ref)
    assert kind is Closed
    return match_pb2.SessionFrame(sub=out.sub, closed=_CLOSED)


_CLOSED = match_pb2.SessionClosed()


async def play_moves(requests: Any) -> Any:
    """The moves after a play stream's first request: a bad one is
    ``Refused`` for its ref (the stream goes on); a request that is no move,
    or whose ref cannot be echoed, ends the stream."""
    async for request in requests:
        try:
            check_message(request)
        except InvalidArgument as e:
            if (
                e.metadata.get("field", "").startswith("move.")
                and e.metadata["field"] != "move.ref"
            ):
                yield Refused(request.move.ref, e)
                continue
            raise
        if request.WhichOneof("kind") != "move":
            raise BadRequest("every request after the first is a move", "move_expected")
        yield _play_move(request.move)


def _play_move(m: Any) -> PlayMove | Refused:
    """A ``PlayMove`` message's move, or its refusal (bad JSON)."""
    try:
        move = check_json("move", m.move_json, MAX_JSON_BYTES)
    except InvalidArgument as e:
        return Refused(m.ref, e)
    return PlayMove(
        ref=m.ref,
        move=move,  # type: ignore[arg-type]
        expected_version=m.expected_version if m.HasField("expected_version") else None,
        idempotency_key=m.idempotency_key,
        seat=m.seat if m.HasField("seat") else None,
    )


def _match_options(request: Any) -> MatchOptions:
    """A ``CreateMatchRequest``'s match options."""
    return MatchOptions(
        public_replay=request.match_options.public_replay,
        time_control=time_control_in(request.match_options.time_control)
        if request.match_options.HasField("time_control")
        else None,
    )


_ECHOED = frozenset(("open.sub", "move.sub", "move.move.ref", "close.sub", "create.ref"))
"""The fields of a session request that its answer echoes: out of bounds,
nothing can be answered, and the session ends."""


async def session_requests(requests: Any) -> Any:
    """The requests of a ``PlaySession`` stream: one out of bounds, or with
    bad JSON, is refused under its sub and ref (the session goes on); one
    that is none of the kinds, or whose sub or ref cannot be echoed, ends
    the session."""
    async for request in requests:
        try:
            check_message(request)
        except InvalidArgument as e:
            field = e.metadata.get("field", "")
            if not field or field in _ECHOED:  # not a message, or nothing to echo
                raise
            kind = request.WhichOneof("kind")
            if kind == "move":
                yield Move(request.move.sub, Refused(request.move.move.ref, e))
            elif kind == "create":
                yield Create(request.create.ref, "", [], error=e)
            else:  # open: refused under its sub, as a bad match id is
                yield Open(request.open.sub, "", error=e)
            continue
        kind = request.WhichOneof("kind")
        if kind == "move":
            m = request.move
            yield Move(m.sub, _play_move(m.move))
        elif kind == "open":
            o = request.open.open
            yield Open(
                request.open.sub,
                o.match_id,
                after_version=o.after_version if o.HasField("after_version") else None,
                include_view=o.include_view,
                include_turn=o.include_turn,
                seat=o.seat if o.HasField("seat") else None,
            )
        elif kind == "close":
            yield Close(request.close.sub)
        elif kind == "create":
            c = request.create
            r = c.match
            try:
                options = check_json("options", r.options_json, MAX_JSON_BYTES)
                yield Create(
                    c.ref,
                    r.game,
                    list(r.players),
                    options=options,  # type: ignore[arg-type]
                    match_options=_match_options(r),
                    idempotency_key=r.idempotency_key,
                )
            except InvalidArgument as e:
                yield Create(c.ref, "", [], error=e)
        else:
            raise BadRequest(
                "a session request is one of open, move, close or create", "request_expected"
            )


class MatchServicer(match_pb2_grpc.MatchServiceServicer):
    def __init__(
        self,
        app: MatchApp,
        tokens: Tokens,
        move_rate: MoveRate | None = None,
        *,
        create_rate: CreateRate | None = None,
        max_subscriptions: int = 64,
    ) -> None:
        """``move_rate``: counts each move of a ``PlayMatch`` or
        ``PlaySession`` stream (the interceptor counts ``SubmitMove``
        calls); ``create_rate``: each create of a ``PlaySession``;
        ``max_subscriptions``: per ``PlaySession``."""
        self.app = app
        self.tokens = tokens
        self.move_rate = move_rate
        self.create_rate = create_rate
        self.max_subscriptions = max_subscriptions

    def _principal(self, context: Any) -> Principal:
        principal = self.tokens.from_metadata(context.invocation_metadata())
        bind(player=principal.subject)
        return principal

    async def CreateMatch(self, request: Any, context: Any) -> Any:
        principal = self._principal(context)
        bind(game=request.game)
        match_id, version = await self.app.create(
            principal,
            game=request.game,
            players=list(request.players),
            options=check_json("options", request.options_json, MAX_JSON_BYTES),
            match_options=_match_options(request),
            idempotency_key=request.idempotency_key,
        )
        bind(match=match_id)
        return match_pb2.CreateMatchResponse(match_id=match_id, version=version)

    async def SubmitMove(self, request: Any, context: Any) -> Any:
        principal = self._principal(context)
        bind(match=request.match_id)
        result: MoveResult = await self.app.submit(
            principal,
            request.match_id,
            check_json("move", request.move_json, MAX_JSON_BYTES),
            expected_version=request.expected_version
            if request.HasField("expected_version")
            else None,
            idempotency_key=request.idempotency_key,
            seat=request.seat if request.HasField("seat") else None,
        )
        bind(seat=result.seat, version=result.version, outcome=result.status)
        return match_pb2.SubmitMoveResponse(
            version=result.version,
            seat=result.seat,
            events_json=list(result.events),
            status=_STATUS[result.status],
            outcome=outcome_pb(result.outcome),
            clocks=clocks_pb(result.clocks),
        )

    async def GetMatch(self, request: Any, context: Any) -> Any:
        principal = self._principal(context)
        bind(match=request.match_id)
        mv = await self.app.get(principal, request.match_id, include_view=not request.omit_view)
        p = mv.projection
        bind(game=p.meta.game, version=p.version, seat=mv.your_seat)
        reply = match_pb2.GetMatchResponse(
            match_id=p.meta.match_id,
            game=p.meta.game,
            rules_version=p.meta.rules_version,
            version=p.version,
            status=_STATUS[p.status],
            seats=[
                match_pb2.Seat(seat=s, player=pid, bot=is_bot(pid))
                for s, pid in enumerate(p.meta.players)
            ],
            view_json=mv.view,
            awaiting=list(p.awaiting),
            outcome=outcome_pb(p.outcome),
            match_options=match_options_pb(p.meta.match_options),
            created_at=rfc3339(p.meta.created_ms),
            legal_moves_json=list(mv.legal_moves),
            clocks=clocks_pb(p.clocks),
            server_time=rfc3339(now_ms()),
        )
        if mv.your_seat is not None:
            reply.your_seat = mv.your_seat
        return reply

    async def WatchMatch(self, request: Any, context: Any) -> Any:
        principal = self._principal(context)
        bind(match=request.match_id)
        after = request.after_version if request.HasField("after_version") else None
        async for c in self.app.watch(
            principal,
            request.match_id,
            after,
            include_view=request.include_view,
            include_turn=request.include_turn,
        ):
            yield commit_pb(c)

    async def PlayMatch(self, requests: Any, context: Any) -> Any:
        principal = self._principal(context)  # once, for the whole stream
        try:
            first = await anext(requests)
        except StopAsyncIteration:
            raise BadRequest("the first request opens the match", "open_expected") from None
        check_message(first)
        if first.WhichOneof("kind") != "open":
            raise BadRequest("the first request opens the match", "open_expected")
        o = first.open
        bind(match=o.match_id)
        expires_at = self._expires_at(principal)  # the stream ends when a call would be refused
        async for frame in self.app.play(
            principal,
            o.match_id,
            play_moves(requests),
            after_version=o.after_version if o.HasField("after_version") else None,
            include_view=o.include_view,
            include_turn=o.include_turn,
            seat=o.seat if o.HasField("seat") else None,
            expires_at=expires_at,
            move_rate=self.move_rate,
        ):
            yield play_frame_pb(frame)

    async def PlaySession(self, requests: Any, context: Any) -> Any:
        principal = self._principal(context)  # once, for the whole stream
        async for out in self.app.session(
            principal,
            session_requests(requests),
            expires_at=self._expires_at(principal),
            move_rate=self.move_rate,
            create_rate=self.create_rate,
            max_subscriptions=self.max_subscriptions,
        ):
            yield session_frame_pb(out)

    def _expires_at(self, principal: Principal) -> float | None:
        """When a call would be refused for the token's age (Unix seconds)."""
        exp = principal.claims.get("exp")
        return float(exp) + self.tokens.settings.leeway_s if isinstance(exp, int | float) else None

    async def ReplayMatch(self, request: Any, context: Any) -> Any:
        principal = self._principal(context)
        bind(match=request.match_id)
        async for c in self.app.replay(
            principal,
            request.match_id,
            from_version=request.from_version,
            to_version=request.to_version if request.HasField("to_version") else None,
            speed=replay_speed(request.speed),
            include_view=request.include_view,
        ):
            yield commit_pb(c)

    async def EndMatch(self, request: Any, context: Any) -> Any:
        principal = self._principal(context)
        bind(match=request.match_id)
        result = await self.app.end(
            principal,
            request.match_id,
            ranks=list(request.ranks),
            scores=list(request.scores),
            reason=request.reason,
            idempotency_key=request.idempotency_key,
            expected_version=request.expected_version
            if request.HasField("expected_version")
            else None,
        )
        bind(version=result.version, outcome=result.outcome.reason)
        return match_pb2.EndMatchResponse(
            version=result.version, outcome=outcome_pb(result.outcome)
        )

    async def ListMatches(self, request: Any, context: Any) -> Any:
        principal = self._principal(context)
        player = request.player or principal.subject
        summaries = await self.app.list_matches(player, _STATUS_FILTER.get(request.status))
        return match_pb2.ListMatchesResponse(
            matches=[
                match_pb2.MatchSummary(
                    match_id=s.match_id,
                    game=s.game,
                    status=_STATUS[s.status],
                    players=list(s.players),
                    created_at=s.created_at,
                )
                for s in summaries
            ]
        )


class AuthServicer(match_pb2_grpc.AuthServiceServicer):
    def __init__(self, tokens: Tokens) -> None:
        self.tokens = tokens

    async def GuestLogin(self, request: Any, context: Any) -> Any:
        player_id, token, expires = self.tokens.guest(request.name)
        bind(player=player_id)
        return match_pb2.GuestLoginResponse(
            player_id=player_id, token=token, expires_at=rfc3339(expires * 1000)
        )

    async def RefreshToken(self, request: Any, context: Any) -> Any:
        principal, token, expires = self.tokens.refresh(bearer_token(context.invocation_metadata()))
        bind(player=principal.subject)
        return match_pb2.RefreshTokenResponse(
            player_id=principal.subject, token=token, expires_at=rfc3339(expires * 1000)
        )
