"""Real adapters of the ports: the match service (gRPC), the bot worker's
job stream and matchmaking's ratings (Redis), the matchmaker (gRPC, for
score races that queue their entrants)."""

from __future__ import annotations

import asyncio
import json

import grpc
import redis.asyncio as redis

from services.common.auth import Tokens, is_bot
from services.common.errors import error_info
from services.common.grpcserver import balanced_channel_options
from services.match import model as clock_model
from services.match.time_control_pb import time_control_pb
from services.matchmaking.match_client import ServiceToken
from services.matchmaking.ratings import Ratings
from services.tournaments.errors import Unavailable
from services.tournaments.model import (
    TC_FISCHER,
    TC_GAME_DEFAULT,
    TC_NONE,
    TC_PER_MOVE,
    TimeControl,
)
from services.tournaments.ports import (
    END_DONE,
    END_FINISHED,
    END_MOVED,
    END_UNSUPPORTED,
    MatchEnd,
    MatchNow,
    QueuedElsewhere,
    TicketEnd,
)
from tabletop.match.v1 import match_pb2, match_pb2_grpc
from tabletop.matchmaking.v1 import matchmaking_pb2 as mm_pb2
from tabletop.matchmaking.v1 import matchmaking_pb2_grpc as mm_pb2_grpc

SERVICE_SUBJECT = "service:tournaments"
"""Every replica creates matches as this subject: the match service scopes
idempotency keys to the caller, so all replicas must be the same caller."""

_RETRY = (grpc.StatusCode.UNAVAILABLE, grpc.StatusCode.DEADLINE_EXCEEDED)
BOT_JOBS = "mm:bots"


def match_time_control(tc: TimeControl) -> clock_model.TimeControl | None:
    """The match service's time control for a tournament's (None: no clock).
    A seat that times out ``max_timeouts`` times in a row forfeits."""
    if tc.kind == TC_NONE:
        return None
    ms = {
        TC_PER_MOVE: {"per_move_ms": round(tc.seconds * 1000)},
        TC_FISCHER: {
            "initial_ms": round(tc.seconds * 1000),
            "increment_ms": round(tc.increment * 1000),
            "delay_ms": round(tc.delay * 1000),
        },
        TC_GAME_DEFAULT: {},
    }.get(tc.kind, {})
    return clock_model.TimeControl(
        kind=tc.kind,
        max_timeouts=tc.max_timeouts,
        on_max_timeouts=clock_model.ON_MAX_FORFEIT if tc.max_timeouts else clock_model.ON_MAX_BOT,
        **ms,
    )


def match_options(time_control: TimeControl, public_replay: bool) -> match_pb2.MatchOptions:
    """The ``MatchOptions`` of a tournament match: its clock and replays."""
    opts = match_pb2.MatchOptions(public_replay=public_replay)
    tc = match_time_control(time_control)
    if tc is not None:
        opts.time_control.CopyFrom(time_control_pb(tc))
    return opts


class GrpcMatches:
    def __init__(
        self, target: str, tokens: Tokens, *, timeout_s: float = 10.0, attempts: int = 6
    ) -> None:
        self.channel = grpc.aio.insecure_channel(target, options=balanced_channel_options())
        self.stub = match_pb2_grpc.MatchServiceStub(self.channel)
        self.token = ServiceToken(tokens, SERVICE_SUBJECT)
        self.timeout_s = timeout_s
        self.attempts = attempts

    def _metadata(self) -> tuple[tuple[str, str], ...]:
        return (("authorization", f"Bearer {self.token()}"),)

    async def _call(self, method, request):
        delay = 0.1
        for attempt in range(1, self.attempts + 1):
            try:
                return await method(request, metadata=self._metadata(), timeout=self.timeout_s)
            except grpc.aio.AioRpcError as e:
                if e.code() not in _RETRY:
                    raise
                if attempt == self.attempts:
                    raise Unavailable(
                        "match_service_unavailable", f"{e.code().name}: {e.details()}"
                    ) from None
            await asyncio.sleep(delay)
            delay = min(2.0, delay * 2)
        raise AssertionError("unreachable")

    async def create(
        self,
        game: str,
        players: list[str],
        options_json: str,
        time_control: TimeControl,
        public_replay: bool,
        key: str,
    ) -> str:
        request = match_pb2.CreateMatchRequest(
            game=game,
            players=players,
            options_json=options_json,
            match_options=match_options(time_control, public_replay),
            idempotency_key=key,
        )
        reply = await self._call(self.stub.CreateMatch, request)
        return reply.match_id

    async def result(self, match_id: str) -> MatchEnd | None:
        return (await self.state(match_id))[0]

    async def state(self, match_id: str) -> tuple[MatchEnd | None, tuple[int, ...]]:
        reply = await self._call(self.stub.GetMatch, match_pb2.GetMatchRequest(match_id=match_id))
        if reply.status != match_pb2.MATCH_STATUS_FINISHED:
            return None, tuple(reply.awaiting)
        return MatchEnd(
            players=tuple(s.player for s in reply.seats),
            ranks=tuple(reply.outcome.ranks),
            scores=tuple(reply.outcome.scores),
            reason=reply.outcome.reason,
        ), ()

    async def snapshot(self, match_id: str) -> MatchNow:
        reply = await self._call(self.stub.GetMatch, match_pb2.GetMatchRequest(match_id=match_id))
        players = tuple(s.player for s in reply.seats)
        if reply.status != match_pb2.MATCH_STATUS_FINISHED:
            return MatchNow(None, tuple(reply.awaiting), reply.version, players)
        end = MatchEnd(
            players=players,
            ranks=tuple(reply.outcome.ranks),
            scores=tuple(reply.outcome.scores),
            reason=reply.outcome.reason,
        )
        return MatchNow(end, (), reply.version, players)

    async def end(
        self,
        match_id: str,
        ranks: tuple[int, ...],
        scores: tuple[float, ...],
        reason: str,
        key: str,
        expected_version: int,
    ) -> str:
        request = match_pb2.EndMatchRequest(
            match_id=match_id,
            ranks=list(ranks),
            scores=list(scores),
            reason=reason,
            idempotency_key=key,
            expected_version=expected_version,
        )
        try:
            await self._call(self.stub.EndMatch, request)
        except grpc.aio.AioRpcError as e:
            info = error_info(e)
            why = info.reason if info is not None else ""
            if e.code() == grpc.StatusCode.FAILED_PRECONDITION and why in (
                "game_over",
                "idempotency_key_reused",  # another replica ended it on another version
            ):
                return END_FINISHED
            if e.code() == grpc.StatusCode.ABORTED:
                return END_MOVED
            if e.code() == grpc.StatusCode.UNIMPLEMENTED:
                return END_UNSUPPORTED
            raise
        return END_DONE

    async def close(self) -> None:
        await self.channel.close()


class RedisBotJobs:
    """One entry per match with bot seats on ``mm:bots`` (the format the
    matchmaker writes), read by the bot worker's consumer group."""

    def __init__(self, client: redis.Redis) -> None:
        self.redis = client

    async def enqueue(self, match_id: str, game: str, bots: dict[str, int]) -> None:
        await self.redis.xadd(
            BOT_JOBS,
            {"match_id": match_id, "game": game, "bots": json.dumps(bots)},
            maxlen=100_000,
            approximate=True,
        )


class RedisSeeding:
    def __init__(self, client: redis.Redis) -> None:
        self.ratings_ = Ratings(client)

    async def ratings(self, game: str, players: list[str]) -> list[float]:
        rated = await self.ratings_.get_many(game, players)
        return [0.0 if is_bot(p) else r.ordinal for p, r in zip(players, rated, strict=True)]


_TICKET_ENDS = {
    mm_pb2.TICKET_STATE_MATCHED: "matched",
    mm_pb2.TICKET_STATE_CANCELLED: "cancelled",
    mm_pb2.TICKET_STATE_EXPIRED: "expired",
}


class GrpcMatchmaking:
    """The matchmaker, for a score race that queues its entrants: tickets in
    the race's pool, enqueued and watched as ``service:tournaments`` (a
    service token may queue any player)."""

    def __init__(self, target: str, tokens: Tokens, *, timeout_s: float = 10.0) -> None:
        self.channel = grpc.aio.insecure_channel(target, options=balanced_channel_options())
        self.stub = mm_pb2_grpc.MatchmakingServiceStub(self.channel)
        self.token = ServiceToken(tokens, SERVICE_SUBJECT)
        self.timeout_s = timeout_s

    def _metadata(self) -> tuple[tuple[str, str], ...]:
        return (("authorization", f"Bearer {self.token()}"),)

    async def enqueue(
        self,
        game: str,
        player: str,
        counts: list[int],
        time_control: str,
        allow_bots: bool,
        pool: str,
        key: str = "",
    ) -> str:
        request = mm_pb2.EnqueueRequest(
            game=game,
            player_counts=counts,
            party=[player],
            allow_bots=allow_bots,
            time_control=time_control,
            pool=pool,
            idempotency_key=key,
        )
        try:
            reply = await self.stub.Enqueue(
                request, metadata=self._metadata(), timeout=self.timeout_s
            )
        except grpc.aio.AioRpcError as e:
            info = error_info(e)
            if e.code() == grpc.StatusCode.ALREADY_EXISTS and info:
                # a ticket not made under this key (a retry after a crash is
                # answered by the key itself): not the race's to adopt
                raise QueuedElsewhere(info.metadata.get("ticket_id", "")) from None
            if e.code() in _RETRY:
                raise Unavailable(
                    "matchmaking_unavailable", f"{e.code().name}: {e.details()}"
                ) from None
            raise
        return reply.ticket_id

    async def cancel(self, ticket_id: str) -> None:
        try:
            await self.stub.CancelTicket(
                mm_pb2.CancelTicketRequest(ticket_id=ticket_id),
                metadata=self._metadata(),
                timeout=self.timeout_s,
            )
        except grpc.aio.AioRpcError as e:
            if e.code() not in (grpc.StatusCode.FAILED_PRECONDITION, grpc.StatusCode.NOT_FOUND):
                raise

    async def watch(self, ticket_id: str) -> TicketEnd:
        call = self.stub.WatchTicket(
            mm_pb2.WatchTicketRequest(ticket_id=ticket_id), metadata=self._metadata()
        )
        async for u in call:
            state = _TICKET_ENDS.get(u.state)
            if state is not None:
                return TicketEnd(state, u.matched.match_id if state == "matched" else "", u.reason)
        return TicketEnd("expired", "", "watch_ended")

    async def close(self) -> None:
        await self.channel.close()
