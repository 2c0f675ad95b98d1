"""The gRPC face: proto in, one call to the application, proto out."""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator, Iterator

from redis.exceptions import ConnectionError as RedisConnectionError
from redis.exceptions import TimeoutError as RedisTimeoutError

from services.common.auth import Tokens
from services.common.errors import Unavailable
from services.common.logging import bind
from services.matchmaking.app import Caller, Matchmaking, TicketUpdate
from services.matchmaking.ratings import PlayerRating
from tabletop.matchmaking.v1 import matchmaking_pb2 as pb
from tabletop.matchmaking.v1 import matchmaking_pb2_grpc as pb_grpc

SERVICE_NAME = pb.DESCRIPTOR.services_by_name["MatchmakingService"].full_name

_STATES = {
    "searching": pb.TICKET_STATE_SEARCHING,
    "matched": pb.TICKET_STATE_MATCHED,
    "cancelled": pb.TICKET_STATE_CANCELLED,
    "expired": pb.TICKET_STATE_EXPIRED,
}


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
                bot_level=u.bot_level,
            )
        )
    return msg


@contextlib.contextmanager
def _redis_answers() -> Iterator[None]:
    """Redis unreachable or too slow -> UNAVAILABLE (the client may retry)."""
    try:
        yield
    except (RedisConnectionError, RedisTimeoutError) as e:
        raise Unavailable("redis_unavailable", f"ticket store unavailable: {e}") from None


class MatchmakingServicer(pb_grpc.MatchmakingServiceServicer):
    """Errors are raised as ``services.common.errors`` exceptions; the server's
    ``RpcInterceptor`` turns them into statuses."""

    def __init__(self, app: Matchmaking, tokens: Tokens) -> None:
        self.app = app
        self.tokens = tokens  # the one verifier of every service (services.common.auth)

    def _caller(self, context) -> Caller:
        principal = self.tokens.from_metadata(context.invocation_metadata())
        bind(player=principal.subject)
        return Caller(principal.subject, principal.is_service)

    async def Enqueue(self, request: pb.EnqueueRequest, context) -> pb.EnqueueResponse:
        bind(game=request.game)
        caller = self._caller(context)
        with _redis_answers():
            made = await self.app.enqueue(
                caller,
                request.game,
                list(request.player_counts),
                request.options_json,
                list(request.party),
                request.allow_bots,
                list(request.party_tokens),
                time_control=request.time_control,
                bot_level=request.bot_level,
                pool=request.pool,
                idempotency_key=request.idempotency_key,
            )
        bind(ticket=made.ticket_id)
        return pb.EnqueueResponse(
            ticket_id=made.ticket_id, state=_STATES[made.state], replayed=made.replayed
        )

    async def JoinParty(self, request: pb.JoinPartyRequest, context) -> pb.JoinPartyResponse:
        bind(game=request.game)
        caller = self._caller(context)
        token, expires = await self.app.join_party(caller, request.leader, request.game)
        return pb.JoinPartyResponse(party_token=token, expires_at=expires)

    async def CancelTicket(
        self, request: pb.CancelTicketRequest, context
    ) -> pb.CancelTicketResponse:
        bind(ticket=request.ticket_id)
        caller = self._caller(context)
        with _redis_answers():
            state = await self.app.cancel(caller, request.ticket_id)
        return pb.CancelTicketResponse(state=_STATES[state])

    async def WatchTicket(
        self, request: pb.WatchTicketRequest, context
    ) -> AsyncIterator[pb.TicketUpdate]:
        bind(ticket=request.ticket_id)
        caller = self._caller(context)
        with _redis_answers():
            async for update in self.app.watch(caller, request.ticket_id):
                if update.match_id:
                    bind(match=update.match_id, seat=update.seat)
                yield ticket_update(update)

    async def GetRating(self, request: pb.GetRatingRequest, context) -> pb.Rating:
        self._caller(context)
        bind(game=request.game)
        with _redis_answers():
            return _rating(await self.app.rating(request.game, request.player_id))

    async def Leaderboard(self, request: pb.LeaderboardRequest, context) -> pb.LeaderboardResponse:
        self._caller(context)
        bind(game=request.game)
        with _redis_answers():
            rows = await self.app.leaderboard(request.game, request.limit)
        return pb.LeaderboardResponse(
            entries=[pb.LeaderboardEntry(rank=i + 1, rating=_rating(r)) for i, r in enumerate(rows)]
        )
