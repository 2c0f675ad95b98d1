"""The gRPC face of the match application: proto in, one call, proto out.

Every call authenticates its bearer token first (``GuestLogin`` excepted;
``RefreshToken`` also takes a recently expired one).
Errors are raised as they are: the server's ``ErrorInterceptor`` turns them
into statuses with ``ErrorInfo`` details, and ``LoggingInterceptor`` writes
one line per call with the fields bound here (player, game, match, seat,
version, outcome).
"""

from __future__ import annotations

import math
from typing import Any

from engine_core.types import Outcome
from services.common.auth import Principal, Tokens, bearer_token, is_bot
from services.common.codecs import check_json
from services.common.errors import InvalidArgument
from services.common.logging import bind
from services.match.app import CommitView, MatchApp, MoveResult
from services.match.model import STATUS_ACTIVE, STATUS_FINISHED, MatchOptions, rfc3339
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


class MatchServicer(match_pb2_grpc.MatchServiceServicer):
    def __init__(self, app: MatchApp, tokens: Tokens) -> None:
        self.app = app
        self.tokens = tokens

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
            match_options=MatchOptions(public_replay=request.match_options.public_replay),
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
        )

    async def GetMatch(self, request: Any, context: Any) -> Any:
        principal = self._principal(context)
        bind(match=request.match_id)
        mv = await self.app.get(principal, request.match_id)
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
            match_options=match_pb2.MatchOptions(public_replay=p.meta.match_options.public_replay),
            created_at=rfc3339(p.meta.created_ms),
            legal_moves_json=list(mv.legal_moves),
        )
        if mv.your_seat is not None:
            reply.your_seat = mv.your_seat
        return reply

    async def WatchMatch(self, request: Any, context: Any) -> Any:
        principal = self._principal(context)
        bind(match=request.match_id)
        after = request.after_version if request.HasField("after_version") else None
        async for c in self.app.watch(
            principal, request.match_id, after, include_view=request.include_view
        ):
            yield commit_pb(c)

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
