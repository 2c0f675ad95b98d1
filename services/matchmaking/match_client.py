"""The ``MatchCreator`` adapter over ``MatchService.CreateMatch`` (gRPC).

Calls carry a service token (claim ``role: "service"``). Every call has an
idempotency key made by the matchmaker from its claim, and transient failures
(UNAVAILABLE, DEADLINE_EXCEEDED) are retried with the same key, so a retry
never makes a second match. Matches get the turn clock their tickets
asked for, else the ``time_control`` setting.
"""

from __future__ import annotations

import asyncio
from typing import Any

import grpc

from services.common.auth import ServiceToken as _ServiceToken
from services.common.auth import Tokens
from services.common.errors import error_info
from services.common.grpcserver import balanced_channel_options
from services.match.clocks import parse as parse_time_control
from services.match.time_control_pb import time_control_pb
from services.matchmaking.ports import CreatedMatch, MatchCreationFailed
from services.matchmaking.settings import MatchmakingSettings
from tabletop.match.v1 import match_pb2, match_pb2_grpc

SERVICE_SUBJECT = "service:matchmaking"


class ServiceToken(_ServiceToken):
    """The matchmaker's service token (``services.common.auth.ServiceToken``)."""

    def __init__(self, tokens: Tokens, subject: str = SERVICE_SUBJECT, ttl_s: int = 3600) -> None:
        super().__init__(tokens, subject, ttl_s)


_RETRY = (grpc.StatusCode.UNAVAILABLE, grpc.StatusCode.DEADLINE_EXCEEDED)


def _blamed(info: Any, players: list[str]) -> str:
    """The player a refusal names (ErrorInfo ``index`` into the seat order, as
    CreateMatch's ``bad_players`` gives it), or ""."""
    if info is None:
        return ""
    index = info.metadata.get("index", "")
    if index.isdigit() and int(index) < len(players):
        return players[int(index)]
    return ""


class GrpcMatchCreator:
    def __init__(
        self,
        target: str,
        token: ServiceToken,
        *,
        timeout_s: float = 5.0,
        attempts: int = 3,
        time_control: str = "none",
    ) -> None:
        # round_robin: every match pod behind the target gets calls.
        self.channel = grpc.aio.insecure_channel(target, options=balanced_channel_options())
        self.stub = match_pb2_grpc.MatchServiceStub(self.channel)
        self.token = token
        self.timeout_s = timeout_s
        self.attempts = attempts
        # checked once at start-up: a bad setting stops the service, not each match
        self.match_options = match_pb2.MatchOptions(
            time_control=time_control_pb(parse_time_control(time_control))
        )

    @classmethod
    def from_settings(cls, s: MatchmakingSettings) -> GrpcMatchCreator:
        return cls(s.match_addr, ServiceToken(Tokens(s.auth())), time_control=s.time_control)

    async def create_match(
        self,
        game: str,
        players: list[str],
        options_json: str,
        *,
        key: str = "",
        time_control: str = "",
    ) -> CreatedMatch:
        options = self.match_options
        if time_control:  # checked when the ticket was queued
            options = match_pb2.MatchOptions(
                time_control=time_control_pb(parse_time_control(time_control))
            )
        request = match_pb2.CreateMatchRequest(
            game=game,
            players=players,
            options_json=options_json,
            idempotency_key=key,
            match_options=options,
        )
        delay = 0.1
        for attempt in range(1, self.attempts + 1):
            try:
                res = await self.stub.CreateMatch(
                    request,
                    metadata=(("authorization", f"Bearer {self.token()}"),),
                    timeout=self.timeout_s,
                )
                return CreatedMatch(res.match_id, {p: s for s, p in enumerate(players)})
            except grpc.aio.AioRpcError as e:
                if e.code() not in _RETRY or attempt == self.attempts or not key:
                    info = error_info(e)
                    raise MatchCreationFailed(
                        f"{e.code().name}: {e.details()}",
                        transient=e.code() in _RETRY,
                        player=_blamed(info, players),
                    ) from e
            await asyncio.sleep(delay)
            delay *= 2
        raise AssertionError("unreachable")

    async def close(self) -> None:
        await self.channel.close()
