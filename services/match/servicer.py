"""The gRPC face of the match application: proto in, one call, proto out.

Every call authenticates its bearer token first (``GuestLogin`` excepted);
errors become statuses with ``ErrorInfo`` details (``services.match.status``);
one log line per call.
"""

from __future__ import annotations

import functools
import time
from collections.abc import AsyncIterator, Callable
from typing import Any

import grpc
import structlog

from engine_core.types import Outcome
from services.common.auth import Principal, Tokens, is_bot
from services.match.app import CommitView, MatchApp, MoveResult
from services.match.model import STATUS_ACTIVE, STATUS_FINISHED, MatchOptions, rfc3339
from services.match.status import rich_status, status_of
from tabletop.common.v1 import common_pb2
from tabletop.match.v1 import match_pb2, match_pb2_grpc

log = structlog.get_logger("tabletop.match.rpc")

_STATUS = {
    STATUS_ACTIVE: match_pb2.MATCH_STATUS_ACTIVE,
    STATUS_FINISHED: match_pb2.MATCH_STATUS_FINISHED,
}
_STATUS_FILTER = {
    match_pb2.MATCH_STATUS_UNSPECIFIED: None,
    match_pb2.MATCH_STATUS_ACTIVE: STATUS_ACTIVE,
    match_pb2.MATCH_STATUS_FINISHED: STATUS_FINISHED,
}


def outcome_pb(outcome: Outcome | None) -> common_pb2.Outcome | None:
    if outcome is None:
        return None
    return common_pb2.Outcome(
        ranks=list(outcome.ranks), scores=list(outcome.scores), reason=outcome.reason
    )


def commit_pb(c: CommitView) -> match_pb2.MatchCommit:
    msg = match_pb2.MatchCommit(
        version=c.version,
        events_json=list(c.events),
        view_json=c.view,
        status=_STATUS[c.status],
        outcome=outcome_pb(c.outcome),
        committed_at=c.committed_at,
        move_json=c.move,
    )
    if c.seat is not None:
        msg.seat = c.seat
    return msg


async def _fail(
    context: grpc.aio.ServicerContext, error: BaseException, fields: dict[str, Any]
) -> None:
    known = status_of(error)
    if known is None:
        log.exception("rpc_failed", **fields)
        await context.abort(grpc.StatusCode.INTERNAL, "internal error")
    code, reason, message, metadata = known
    fields["status"] = code.name
    fields["reason"] = reason
    await context.abort_with_status(rich_status(code, reason, message, metadata))


def unary(method: Callable[..., Any]) -> Callable[..., Any]:
    """Log one line per call; map errors to statuses."""

    @functools.wraps(method)
    async def wrapper(self: Any, request: Any, context: grpc.aio.ServicerContext) -> Any:
        fields: dict[str, Any] = {"method": method.__name__}
        started = time.perf_counter()
        try:
            reply = await method(self, request, context, fields)
            fields["status"] = "OK"
            return reply
        except grpc.aio.AbortError:
            raise
        except Exception as e:
            await _fail(context, e, fields)
        finally:
            fields["duration_ms"] = round((time.perf_counter() - started) * 1000, 2)
            log.info("rpc", **fields)

    return wrapper


def streaming(method: Callable[..., Any]) -> Callable[..., Any]:
    @functools.wraps(method)
    async def wrapper(
        self: Any, request: Any, context: grpc.aio.ServicerContext
    ) -> AsyncIterator[Any]:
        fields: dict[str, Any] = {"method": method.__name__}
        started = time.perf_counter()
        sent = 0
        try:
            async for item in method(self, request, context, fields):
                yield item
                sent += 1
            fields["status"] = "OK"
        except grpc.aio.AbortError:
            raise
        except Exception as e:
            await _fail(context, e, fields)
        finally:
            fields["sent"] = sent
            fields["duration_ms"] = round((time.perf_counter() - started) * 1000, 2)
            log.info("rpc", **fields)

    return wrapper


class MatchServicer(match_pb2_grpc.MatchServiceServicer):
    def __init__(self, app: MatchApp, tokens: Tokens) -> None:
        self.app = app
        self.tokens = tokens

    def _principal(self, context: grpc.aio.ServicerContext, fields: dict[str, Any]) -> Principal:
        principal = self.tokens.from_metadata(context.invocation_metadata())
        fields["player"] = principal.subject
        return principal

    @unary
    async def CreateMatch(self, request: Any, context: Any, fields: dict[str, Any]) -> Any:
        principal = self._principal(context, fields)
        fields["game"] = request.game
        match_id, version = await self.app.create(
            principal,
            game=request.game,
            players=list(request.players),
            options=request.options_json,
            match_options=MatchOptions(public_replay=request.match_options.public_replay),
            idempotency_key=request.idempotency_key,
        )
        fields["match"] = match_id
        return match_pb2.CreateMatchResponse(match_id=match_id, version=version)

    @unary
    async def SubmitMove(self, request: Any, context: Any, fields: dict[str, Any]) -> Any:
        principal = self._principal(context, fields)
        fields["match"] = request.match_id
        result: MoveResult = await self.app.submit(
            principal,
            request.match_id,
            request.move_json,
            expected_version=request.expected_version
            if request.HasField("expected_version")
            else None,
            idempotency_key=request.idempotency_key,
            seat=request.seat if request.HasField("seat") else None,
        )
        fields.update(seat=result.seat, version=result.version, outcome=result.status)
        return match_pb2.SubmitMoveResponse(
            version=result.version,
            seat=result.seat,
            events_json=list(result.events),
            status=_STATUS[result.status],
            outcome=outcome_pb(result.outcome),
        )

    @unary
    async def GetMatch(self, request: Any, context: Any, fields: dict[str, Any]) -> Any:
        principal = self._principal(context, fields)
        fields["match"] = request.match_id
        mv = await self.app.get(principal, request.match_id)
        p = mv.projection
        fields.update(game=p.meta.game, version=p.version, seat=mv.your_seat)
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
            match_options=match_pb2.MatchOptions(public_replay=p.meta.match_options.public_replay),
            created_at=rfc3339(p.meta.created_ms),
        )
        if mv.your_seat is not None:
            reply.your_seat = mv.your_seat
        return reply

    @streaming
    async def WatchMatch(self, request: Any, context: Any, fields: dict[str, Any]) -> Any:
        principal = self._principal(context, fields)
        fields["match"] = request.match_id
        after = request.after_version if request.HasField("after_version") else None
        async for c in self.app.watch(
            principal, request.match_id, after, include_view=request.include_view
        ):
            yield commit_pb(c)

    @streaming
    async def ReplayMatch(self, request: Any, context: Any, fields: dict[str, Any]) -> Any:
        principal = self._principal(context, fields)
        fields["match"] = request.match_id
        async for c in self.app.replay(
            principal,
            request.match_id,
            from_version=request.from_version,
            to_version=request.to_version if request.HasField("to_version") else None,
            speed=request.speed,
            include_view=request.include_view,
        ):
            yield commit_pb(c)

    @unary
    async def ListMatches(self, request: Any, context: Any, fields: dict[str, Any]) -> Any:
        principal = self._principal(context, fields)
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

    @unary
    async def GuestLogin(self, request: Any, context: Any, fields: dict[str, Any]) -> Any:
        player_id, token, expires = self.tokens.guest(request.name)
        fields["player"] = player_id
        return match_pb2.GuestLoginResponse(
            player_id=player_id, token=token, expires_at=rfc3339(expires * 1000)
        )
