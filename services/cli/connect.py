"""How the CLI reaches a running stack: addresses from the environment
(``TABLETOP_MATCH_ADDR``, ``TABLETOP_MATCHMAKING_ADDR``, ``TABLETOP_RULES_ADDR``;
the defaults are those of ``make run``) and a guest token per session."""

from __future__ import annotations

import os
from dataclasses import dataclass

import grpc

from tabletop.match.v1 import match_pb2, match_pb2_grpc
from tabletop.matchmaking.v1 import matchmaking_pb2_grpc
from tabletop.rules.v1 import rules_pb2_grpc


class NotRunning(RuntimeError):
    """The stack does not answer."""


@dataclass(frozen=True)
class Addresses:
    match: str = "127.0.0.1:50052"
    matchmaking: str = "127.0.0.1:50053"
    rules: str = "127.0.0.1:50051"

    @classmethod
    def from_env(cls) -> Addresses:
        d = cls()
        return cls(
            match=os.environ.get("TABLETOP_MATCH_ADDR") or d.match,
            matchmaking=os.environ.get("TABLETOP_MATCHMAKING_ADDR") or d.matchmaking,
            rules=os.environ.get("TABLETOP_RULES_ADDR") or d.rules,
        )


class Session:
    """Channels and stubs for one CLI command, with a guest identity."""

    def __init__(self, addresses: Addresses | None = None) -> None:
        self.addr = addresses or Addresses.from_env()
        self._channels: list[grpc.aio.Channel] = []
        self.match = match_pb2_grpc.MatchServiceStub(self._channel(self.addr.match))
        self.auth = match_pb2_grpc.AuthServiceStub(self._channel(self.addr.match))
        self.matchmaking = matchmaking_pb2_grpc.MatchmakingServiceStub(
            self._channel(self.addr.matchmaking)
        )
        self.rules = rules_pb2_grpc.RulesServiceStub(self._channel(self.addr.rules))
        self.player_id = ""
        self.token = ""

    def _channel(self, target: str) -> grpc.aio.Channel:
        ch = grpc.aio.insecure_channel(target)
        self._channels.append(ch)
        return ch

    async def login(self, name: str = "") -> str:
        try:
            reply = await self.auth.GuestLogin(match_pb2.GuestLoginRequest(name=name), timeout=5)
        except grpc.aio.AioRpcError as e:
            if e.code() in (grpc.StatusCode.UNAVAILABLE, grpc.StatusCode.DEADLINE_EXCEEDED):
                raise NotRunning(
                    f"cannot reach the match service at {self.addr.match}: "
                    "is the stack running? Start it with `make run`."
                ) from None
            raise
        self.player_id, self.token = reply.player_id, reply.token
        return self.player_id

    @property
    def metadata(self) -> tuple[tuple[str, str], ...]:
        return (("authorization", f"Bearer {self.token}"),)

    async def close(self) -> None:
        for ch in self._channels:
            await ch.close()
