"""The gRPC face: proto in, one call to the application, proto out."""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable
from typing import Any

import grpc
import jwt
from google.protobuf import any_pb2
from google.rpc import error_details_pb2, status_pb2
from grpc_status import rpc_status

from services.matchmaking.app import Caller, Matchmaking, TicketUpdate
from services.matchmaking.errors import MatchmakingError, NotAuthenticated
from services.matchmaking.ratings import PlayerRating
from tabletop.matchmaking.v1 import matchmaking_pb2 as pb
from tabletop.matchmaking.v1 import matchmaking_pb2_grpc as pb_grpc

SERVICE_NAME = pb.DESCRIPTOR.services_by_name["MatchmakingService"].full_name
DOMAIN = "tabletop"

_STATES = {
    "searching": pb.TICKET_STATE_SEARCHING,
    "matched": pb.TICKET_STATE_MATCHED,
    "cancelled": pb.TICKET_STATE_CANCELLED,
    "expired": pb.TICKET_STATE_EXPIRED,
}


class TokenVerifier:
    """The caller of a request, from ``authorization: Bearer <jwt>`` metadata."""

    def __init__(self, secret: str, algorithm: str = "HS256") -> None:
        self.secret = secret
        self.algorithm = algorithm

    def caller(self, metadata: Any) -> Caller:
        token = ""
        for key, value in metadata or ():
            if key.lower() == "authorization":
                scheme, _, token = str(value).partition(" ")
                if scheme.lower() != "bearer":
                    token = ""
        if not token:
            raise NotAuthenticated("missing_token", "authorization: Bearer <token> is required")
        try:
            claims = jwt.decode(
                token.strip(),
                self.secret,
                algorithms=[self.algorithm],
                options={"verify_aud": False},
            )
        except jwt.InvalidTokenError as e:
            raise NotAuthenticated("invalid_token", f"invalid token: {e}") from None
        sub = claims.get("sub")
        if not isinstance(sub, str) or not sub:
            raise NotAuthenticated("invalid_token", "the token has no subject")
        return Caller(sub, claims.get("role") == "service")


def rich_status(exc: MatchmakingError) -> grpc.Status:
    info = error_details_pb2.ErrorInfo(reason=exc.reason, domain=DOMAIN, metadata=exc.metadata)
    detail = any_pb2.Any()
    detail.Pack(info)
    return rpc_status.to_status(
        status_pb2.Status(code=exc.status.value[0], message=exc.message, details=[detail])
    )


def _rating(r: PlayerRating) -> pb.Rating:
    return pb.Rating(
        player_id=r.player_id,
        game=r.game,
        mu=r.mu,
        sigma=r.sigma,
        ordinal=r.ordinal,
        matches=r.matches,
    )


def ticket_update(u: TicketUpdate) -> pb.TicketUpdate:
    msg = pb.TicketUpdate(ticket_id=u.ticket_id, state=_STATES[u.state], reason=u.reason)
    if u.state == "searching":
        msg.searching.CopyFrom(
            pb.Searching(rating_window=u.rating_window, waited_seconds=u.waited_s, rating=u.rating)
        )
    elif u.state == "matched":
        msg.matched.CopyFrom(
            pb.Matched(
                match_id=u.match_id,
                seat=u.seat,
                seats=u.seats or {},
                player_count=u.player_count,
                bots=u.bots,
            )
        )
    return msg


class MatchmakingServicer(pb_grpc.MatchmakingServiceServicer):
    def __init__(self, app: Matchmaking, verifier: TokenVerifier) -> None:
        self.app = app
        self.verifier = verifier

    async def _call(self, context: grpc.aio.ServicerContext, fn: Callable[[Caller], Any]) -> Any:
        try:
            return await fn(self.verifier.caller(context.invocation_metadata()))
        except MatchmakingError as e:
            await context.abort_with_status(rich_status(e))

    async def Enqueue(self, request: pb.EnqueueRequest, context) -> pb.EnqueueResponse:
        tid = await self._call(
            context,
            lambda c: self.app.enqueue(
                c,
                request.game,
                list(request.player_counts),
                request.options_json,
                list(request.party),
                request.allow_bots,
            ),
        )
        return pb.EnqueueResponse(ticket_id=tid)

    async def CancelTicket(
        self, request: pb.CancelTicketRequest, context
    ) -> pb.CancelTicketResponse:
        state = await self._call(context, lambda c: self.app.cancel(c, request.ticket_id))
        return pb.CancelTicketResponse(state=_STATES[state])

    async def WatchTicket(
        self, request: pb.WatchTicketRequest, context
    ) -> AsyncIterator[pb.TicketUpdate]:
        try:
            caller = self.verifier.caller(context.invocation_metadata())
            async for update in self.app.watch(caller, request.ticket_id):
                yield ticket_update(update)
        except MatchmakingError as e:
            await context.abort_with_status(rich_status(e))

    async def GetRating(self, request: pb.GetRatingRequest, context) -> pb.Rating:
        async def call(_c: Caller) -> PlayerRating:
            return await self.app.rating(request.game, request.player_id)

        return _rating(await self._call(context, call))

    async def Leaderboard(self, request: pb.LeaderboardRequest, context) -> pb.LeaderboardResponse:
        async def call(_c: Caller) -> list[PlayerRating]:
            return await self.app.leaderboard(request.game, request.limit)

        rows = await self._call(context, call)
        return pb.LeaderboardResponse(
            entries=[pb.LeaderboardEntry(rank=i + 1, rating=_rating(r)) for i, r in enumerate(rows)]
        )
