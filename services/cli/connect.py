"""How the CLI reaches a running stack: addresses from the environment
(``TABLETOP_MATCH_ADDR``, ``TABLETOP_MATCHMAKING_ADDR``, ``TABLETOP_RULES_ADDR``;
the defaults are those of ``make run``) and the saved guest identity
(``services.cli.identity``), renewed when it nears expiry."""

from __future__ import annotations

import os
from dataclasses import dataclass

import grpc

from services.cli.identity import Credentials, Identity
from services.common.errors import error_info
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

    def __init__(
        self, addresses: Addresses | None = None, credentials: Credentials | None = None
    ) -> None:
        self.addr = addresses or Addresses.from_env()
        self.credentials = credentials or Credentials()
        self.notes: list[str] = []  # what login did, for the user
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

    def _unreachable(self, e: grpc.aio.AioRpcError) -> None:
        if e.code() in (grpc.StatusCode.UNAVAILABLE, grpc.StatusCode.DEADLINE_EXCEEDED):
            raise NotRunning(
                f"cannot reach the match service at {self.addr.match}: "
                "is the stack running? Start it with `make run`."
            ) from None

    async def login(self, name: str = "", *, save: bool = True) -> str:
        """Sign in as the saved player (renewing its token when it nears
        expiry), or as a new guest that is saved for the next commands.
        ``save=False``: a throwaway guest, nothing read or written."""
        saved = self.credentials.get(self.addr.match) if save else None
        if saved is not None and saved.needs_refresh():
            saved = await self._refresh(saved)
        if saved is None:
            try:
                reply = await self.auth.GuestLogin(
                    match_pb2.GuestLoginRequest(name=name), timeout=5
                )
            except grpc.aio.AioRpcError as e:
                self._unreachable(e)
                raise
            saved = Identity(player_id=reply.player_id, token=reply.token, name=name)
            if save:
                self.credentials.put(self.addr.match, saved)
                self.notes.append(
                    f"signed in as a new guest {saved.player_id} (saved in {self.credentials.path})"
                )
        self.player_id, self.token = saved.player_id, saved.token
        return self.player_id

    async def _refresh(self, saved: Identity) -> Identity | None:
        """A renewed identity, or None when the server will not renew it."""
        try:
            reply = await self.auth.RefreshToken(
                match_pb2.RefreshTokenRequest(),
                metadata=(("authorization", f"Bearer {saved.token}"),),
                timeout=5,
            )
        except grpc.aio.AioRpcError as e:
            self._unreachable(e)
            if e.code() != grpc.StatusCode.UNAUTHENTICATED:
                raise
            info = error_info(e)
            self.notes.append(
                f"the saved token of {saved.player_id} could not be renewed "
                f"({info.reason if info else e.details()}): signing in as a new guest"
            )
            self.credentials.remove(self.addr.match)
            return None
        fresh = Identity(player_id=reply.player_id, token=reply.token, name=saved.name)
        self.credentials.put(self.addr.match, fresh)
        return fresh

    @property
    def metadata(self) -> tuple[tuple[str, str], ...]:
        return (("authorization", f"Bearer {self.token}"),)

    async def close(self) -> None:
        for ch in self._channels:
            await ch.close()
