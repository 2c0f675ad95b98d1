"""The gateway application: each browser-facing operation as one gRPC call
(or stream) to the service that owns it, and its answer as plain JSON data.

No rules and no state live here: the views, legal moves and events a browser
gets are exactly what the match service sends for the caller's token, so the
full state never reaches a browser. Any number of replicas can run.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Callable
from typing import Any, TypeVar

import grpc
from google.protobuf import json_format

from services.common.auth import ServiceToken, Tokens
from services.common.grpcserver import channel_options
from services.common.ratelimit import CLIENT_ADDRESS_HEADER
from services.gateway.errors import GatewayError, bad_request, from_rpc
from services.gateway.settings import GatewaySettings
from tabletop.match.v1 import match_pb2, match_pb2_grpc
from tabletop.matchmaking.v1 import matchmaking_pb2, matchmaking_pb2_grpc
from tabletop.rules.v1 import rules_pb2, rules_pb2_grpc
from tabletop.tournaments.v1 import tournaments_pb2, tournaments_pb2_grpc

T = TypeVar("T")

MAX_ID = 200
MAX_NAME = 64
MAX_KEY = 200
MAX_OPTIONS = 16 * 1024
STATUS = {
    match_pb2.MATCH_STATUS_ACTIVE: "active",
    match_pb2.MATCH_STATUS_FINISHED: "finished",
}
STATUS_FILTER = {
    "": match_pb2.MATCH_STATUS_UNSPECIFIED,
    "active": match_pb2.MATCH_STATUS_ACTIVE,
    "finished": match_pb2.MATCH_STATUS_FINISHED,
}
TICKET_STATE = {
    matchmaking_pb2.TICKET_STATE_SEARCHING: "searching",
    matchmaking_pb2.TICKET_STATE_MATCHED: "matched",
    matchmaking_pb2.TICKET_STATE_CANCELLED: "cancelled",
    matchmaking_pb2.TICKET_STATE_EXPIRED: "expired",
}


def _json(text: str) -> Any:
    return json.loads(text) if text else None


def outcome(o: Any, finished: bool) -> dict[str, Any] | None:
    if not finished:
        return None
    return {"ranks": list(o.ranks), "scores": list(o.scores), "reason": o.reason}


def clocks(items: Any) -> list[dict[str, Any]]:
    """Each awaited seat's deadline (UTC) and, for chess clocks, its time left."""
    return [
        {
            "seat": sc.seat,
            "deadline": sc.deadline or None,
            "remaining_ms": sc.remaining_ms if sc.HasField("remaining_ms") else None,
            "timeouts": sc.timeouts,
            "taken_over": sc.taken_over,
        }
        for sc in items
    ]


def time_control(tc: Any) -> dict[str, Any] | None:
    if tc.kind in (match_pb2.TimeControl.KIND_UNSPECIFIED, match_pb2.TimeControl.KIND_NONE):
        return None
    return json_format.MessageToDict(tc, preserving_proto_field_name=True)


def commit_dict(c: match_pb2.MatchCommit) -> dict[str, Any]:
    finished = c.status == match_pb2.MATCH_STATUS_FINISHED
    return {
        "version": c.version,
        "seat": c.seat if c.HasField("seat") else None,
        "events": [_json(e) for e in c.events_json if e],
        "view": _json(c.view_json),
        "status": STATUS.get(c.status, "active"),
        "outcome": outcome(c.outcome, finished),
        "committed_at": c.committed_at,
        "move": _json(c.move_json),
        "clocks": clocks(c.clocks),
        "timeout": c.timeout,
        "forfeit": c.forfeit,
        "ended_by_service": c.ended_by_service,
    }


def turn_dict(c: match_pb2.MatchCommit) -> dict[str, Any]:
    """The turn ``c`` carries (``include_turn``), as the socket's frame has it."""
    t = c.turn
    return {
        "version": c.version,
        "awaiting": list(t.awaiting),
        "legal_moves": [_json(x) for x in t.legal_moves_json],
        "your_seat": t.your_seat if t.HasField("your_seat") else None,
        "server_time": t.server_time,
    }


def match_dict(m: match_pb2.GetMatchResponse) -> dict[str, Any]:
    finished = m.status == match_pb2.MATCH_STATUS_FINISHED
    return {
        "match_id": m.match_id,
        "game": m.game,
        "rules_version": m.rules_version,
        "version": m.version,
        "status": STATUS.get(m.status, "active"),
        "seats": [{"seat": s.seat, "player": s.player, "bot": s.bot} for s in m.seats],
        "your_seat": m.your_seat if m.HasField("your_seat") else None,
        "view": _json(m.view_json),
        "awaiting": list(m.awaiting),
        "legal_moves": [_json(x) for x in m.legal_moves_json],
        "outcome": outcome(m.outcome, finished),
        "public_replay": m.match_options.public_replay,
        "time_control": time_control(m.match_options.time_control),
        "clocks": clocks(m.clocks),
        "server_time": m.server_time,
        "created_at": m.created_at,
    }


def enqueue_key(in_body: Any, in_header: str | None) -> str:
    """An Enqueue's idempotency key, from the body's ``idempotency_key`` or
    the ``Idempotency-Key`` header (the same key if both are sent)."""
    if in_body is not None and (not isinstance(in_body, str) or len(in_body) > MAX_KEY):
        raise bad_request("bad_key", f"idempotency_key must be at most {MAX_KEY} characters")
    if in_header is not None and len(in_header) > MAX_KEY:
        raise bad_request("bad_key", f"Idempotency-Key must be at most {MAX_KEY} characters")
    if in_body is not None and in_header is not None and in_body != in_header:
        raise bad_request("bad_key", "the Idempotency-Key header and idempotency_key differ")
    return in_body if in_body is not None else (in_header or "")


def ticket_dict(u: matchmaking_pb2.TicketUpdate) -> dict[str, Any]:
    d: dict[str, Any] = {
        "ticket_id": u.ticket_id,
        "state": TICKET_STATE.get(u.state, "searching"),
        "reason": u.reason,
    }
    kind = u.WhichOneof("detail")
    if kind == "searching":
        q = u.searching
        d["searching"] = {
            "rating_window": q.rating_window,
            "waited_seconds": q.waited_seconds,
            "rating": q.rating,
        }
    elif kind == "matched":
        m = u.matched
        d["matched"] = {
            "match_id": m.match_id,
            "seat": m.seat,
            "player_count": m.player_count,
            "bots": m.bots,
            "bot_level": m.bot_level,
        }
    return d


def move_fields(body: dict[str, Any]) -> tuple[str, str, int | None, int | None]:
    """A move request's ``move`` (as compact JSON), ``idempotency_key``,
    ``expected_version`` and ``seat``, checked (``bad_move``, ``bad_key``,
    ``bad_expected_version``, ``bad_seat``)."""
    move = body.get("move")
    if not isinstance(move, dict):
        raise bad_request("bad_move", 'move must be a JSON object such as {"type": ...}')
    key = body.get("idempotency_key", "")
    if not isinstance(key, str) or len(key) > MAX_KEY:
        raise bad_request("bad_key", f"idempotency_key must be at most {MAX_KEY} characters")
    numbers: list[int | None] = []
    for name in ("expected_version", "seat"):
        value = body.get(name)
        if value is not None and (
            isinstance(value, bool) or not isinstance(value, int) or not 0 <= value < 2**32
        ):
            raise bad_request(f"bad_{name}", f"{name} must be a non-negative integer")
        numbers.append(value)
    return json.dumps(move, separators=(",", ":")), key, numbers[0], numbers[1]


class Play:
    """One ``PlayMatch`` stream of the gateway's, for one socket subscription:
    its frames, and the page's moves sent on it."""

    def __init__(self, call: Any) -> None:
        self.call = call

    async def frames(self) -> AsyncIterator[match_pb2.PlayFrame]:
        try:
            async for frame in self.call:
                yield frame
        except grpc.aio.AioRpcError as e:
            raise from_rpc(e) from None

    async def move(
        self, ref: str, move_json: str, key: str, expected_version: int | None, seat: int | None
    ) -> None:
        m = match_pb2.PlayMove(ref=ref, move_json=move_json, idempotency_key=key)
        if expected_version is not None:
            m.expected_version = expected_version
        if seat is not None:
            m.seat = seat
        try:
            await self.call.write(match_pb2.PlayRequest(move=m))
        except (grpc.aio.AioRpcError, grpc.aio.UsageError) as e:
            raise GatewayError(
                "UNAVAILABLE", "stream_resuming", f"the match stream is resuming: {e}"
            ) from None

    def cancel(self) -> None:
        self.call.cancel()


def check_id(value: Any, what: str) -> str:
    if not isinstance(value, str) or not 0 < len(value) <= MAX_ID:
        raise bad_request(f"bad_{what}", f"{what} must be a string of 1..{MAX_ID} characters")
    return value


class GatewayApp:
    """Stubs of the services behind the gateway, and one method per operation."""

    def __init__(self, settings: GatewaySettings) -> None:
        self.settings = settings
        options = channel_options()
        self._channels = [
            grpc.aio.insecure_channel(settings.match_addr, options=options),
            grpc.aio.insecure_channel(settings.matchmaking_addr, options=options),
            grpc.aio.insecure_channel(settings.rules_addr, options=options),
            grpc.aio.insecure_channel(settings.tournaments_addr, options=options),
        ]
        match_ch, mm_ch, rules_ch, tournaments_ch = self._channels
        self.tournaments = tournaments_pb2_grpc.TournamentServiceStub(tournaments_ch)
        self.match = match_pb2_grpc.MatchServiceStub(match_ch)
        self.auth = match_pb2_grpc.AuthServiceStub(match_ch)
        self.matchmaking = matchmaking_pb2_grpc.MatchmakingServiceStub(mm_ch)
        self.rules = rules_pb2_grpc.RulesServiceStub(rules_ch)
        self._games: list[dict[str, Any]] | None = None
        # The gateway's own service token, when it can sign: the rules service
        # may require one (it is internal; the gateway asks it only for the
        # list of games), and with it a guest login is counted against the
        # browser's address, not the gateway's (services.common.ratelimit).
        self._service_token = (
            ServiceToken(Tokens(settings.auth), "service:gateway")
            if settings.auth.can_sign
            else None
        )

    async def close(self) -> None:
        for ch in self._channels:
            await ch.close()

    async def _call(
        self,
        fn: Callable[..., Any],
        request: Any,
        token: str | None,
        extra: tuple[tuple[str, str], ...] = (),
    ) -> Any:
        metadata = ((("authorization", f"Bearer {token}"),) if token else ()) + extra or None
        try:
            return await fn(request, metadata=metadata, timeout=self.settings.timeout_s)
        except grpc.aio.AioRpcError as e:
            raise from_rpc(e) from None

    async def _stream(self, fn: Callable[..., Any], request: Any, token: str) -> AsyncIterator[Any]:
        call = fn(request, metadata=(("authorization", f"Bearer {token}"),))
        try:
            async for item in call:
                yield item
        except grpc.aio.AioRpcError as e:
            raise from_rpc(e) from None
        finally:
            call.cancel()

    # ------------------------------------------------------------ identity
    async def guest_login(self, name: Any, client: str | None = None) -> dict[str, Any]:
        """``client``: the browser's address, which the login is counted
        against (with the gateway's service token; without one, the
        gateway's own address is)."""
        if not isinstance(name, str) or len(name) > MAX_NAME:
            raise bad_request("bad_name", f"name must be a string of at most {MAX_NAME} characters")
        token, extra = None, ()
        if client and self._service_token is not None:
            token, extra = self._service_token(), ((CLIENT_ADDRESS_HEADER, client),)
        r = await self._call(
            self.auth.GuestLogin, match_pb2.GuestLoginRequest(name=name), token, extra
        )
        return {"player_id": r.player_id, "token": r.token, "expires_at": r.expires_at}

    async def refresh(self, token: str) -> dict[str, Any]:
        refresh = getattr(self.auth, "RefreshToken", None)
        request_type = getattr(match_pb2, "RefreshTokenRequest", None)
        if refresh is None or request_type is None:
            raise GatewayError("UNIMPLEMENTED", "no_refresh", "token renewal is not offered")
        r = await self._call(refresh, request_type(), token)
        return {"player_id": r.player_id, "token": r.token, "expires_at": r.expires_at}

    # --------------------------------------------------------------- games
    async def games(self) -> list[dict[str, Any]]:
        if self._games is None:  # the games of a deployment do not change while it runs
            token = self._service_token() if self._service_token is not None else None
            r = await self._call(self.rules.ListGames, rules_pb2.ListGamesRequest(), token)
            self._games = [
                {
                    "id": g.info.id,
                    "title": g.info.title,
                    "min_players": g.info.min_players,
                    "max_players": g.info.max_players,
                    "rules_version": g.info.rules_version,
                    "options_schema": _json(g.schemas.options),
                }
                for g in r.games
            ]
        return self._games

    # ------------------------------------------------------------- matches
    async def get_match(self, token: str, match_id: Any, *, view: bool = True) -> dict[str, Any]:
        """``view=False``: without the caller's view (``"view": None``; the
        match service asks the rules for none), as the socket's turns need."""
        req = match_pb2.GetMatchRequest(match_id=check_id(match_id, "match_id"), omit_view=not view)
        return match_dict(await self._call(self.match.GetMatch, req, token))

    async def list_matches(self, token: str, status: str) -> list[dict[str, Any]]:
        if status not in STATUS_FILTER:
            raise bad_request("bad_status", "status must be active or finished")
        req = match_pb2.ListMatchesRequest(status=STATUS_FILTER[status])
        r = await self._call(self.match.ListMatches, req, token)
        return [
            {
                "match_id": m.match_id,
                "game": m.game,
                "status": STATUS.get(m.status, "active"),
                "players": list(m.players),
                "created_at": m.created_at,
            }
            for m in r.matches
        ]

    async def submit(self, token: str, match_id: Any, body: dict[str, Any]) -> dict[str, Any]:
        move_json, key, expected_version, seat = move_fields(body)
        req = match_pb2.SubmitMoveRequest(
            match_id=check_id(match_id, "match_id"), move_json=move_json, idempotency_key=key
        )
        if expected_version is not None:
            req.expected_version = expected_version
        if seat is not None:
            req.seat = seat
        r = await self._call(self.match.SubmitMove, req, token)
        finished = r.status == match_pb2.MATCH_STATUS_FINISHED
        return {
            "version": r.version,
            "seat": r.seat,
            "events": [_json(e) for e in r.events_json if e],
            "status": STATUS.get(r.status, "active"),
            "outcome": outcome(r.outcome, finished),
        }

    async def replay(self, token: str, match_id: Any) -> list[dict[str, Any]]:
        req = match_pb2.ReplayMatchRequest(
            match_id=check_id(match_id, "match_id"), include_view=True
        )
        return [commit_dict(c) async for c in self._stream(self.match.ReplayMatch, req, token)]

    async def play(self, token: str, match_id: str, after_version: int | None) -> Play:
        """A ``PlayMatch`` stream opened on the match with the caller's views
        and turns (resuming after ``after_version``)."""
        call = self.match.PlayMatch(metadata=(("authorization", f"Bearer {token}"),))
        opening = match_pb2.PlayOpen(match_id=match_id, include_view=True, include_turn=True)
        if after_version is not None:
            opening.after_version = after_version
        try:
            await call.write(match_pb2.PlayRequest(open=opening))
        except grpc.aio.AioRpcError as e:
            call.cancel()
            raise from_rpc(e) from None
        return Play(call)

    # --------------------------------------------------------- matchmaking
    async def enqueue(
        self, token: str, body: dict[str, Any], idempotency_key: str | None = None
    ) -> dict[str, Any]:
        """``idempotency_key``: the ``Idempotency-Key`` header, if sent (the
        body's ``idempotency_key`` says the same; both must agree)."""
        game = check_id(body.get("game"), "game")
        counts = body.get("player_counts", [])
        if (
            not isinstance(counts, list)
            or len(counts) > 8
            or not all(
                isinstance(n, int) and not isinstance(n, bool) and 0 < n < 64 for n in counts
            )
        ):
            raise bad_request("bad_player_counts", "player_counts must be a list of small integers")
        options = body.get("options")
        options_json = "" if options in (None, {}) else json.dumps(options)
        if len(options_json) > MAX_OPTIONS:
            raise bad_request("options_too_large", "options are too large")
        allow_bots = body.get("allow_bots", False)
        if not isinstance(allow_bots, bool):
            raise bad_request("bad_allow_bots", "allow_bots must be true or false")
        clock = body.get("time_control", "")
        if not isinstance(clock, str) or len(clock) > 64:
            raise bad_request("bad_time_control", 'time_control is a text such as "30s" or "5m+3s"')
        # the level itself is matchmaking's to check (one list of levels)
        bot_level = body.get("bot_level", "")
        if not isinstance(bot_level, str) or len(bot_level) > 32:
            raise bad_request("bad_bot_level", 'bot_level is "random", "greedy" or "search"')
        req = matchmaking_pb2.EnqueueRequest(
            game=game,
            player_counts=counts,
            options_json=options_json,
            allow_bots=allow_bots,
            time_control=clock,
            bot_level=bot_level,
            idempotency_key=enqueue_key(body.get("idempotency_key"), idempotency_key),
        )
        r = await self._call(self.matchmaking.Enqueue, req, token)
        return {
            "ticket_id": r.ticket_id,
            "state": TICKET_STATE.get(r.state, "searching"),
            "replayed": r.replayed,
        }

    async def cancel_ticket(self, token: str, ticket_id: Any) -> dict[str, Any]:
        req = matchmaking_pb2.CancelTicketRequest(ticket_id=check_id(ticket_id, "ticket_id"))
        await self._call(self.matchmaking.CancelTicket, req, token)
        return {"ticket_id": ticket_id, "state": "cancelled"}

    def watch_ticket(self, token: str, ticket_id: str) -> AsyncIterator[Any]:
        req = matchmaking_pb2.WatchTicketRequest(ticket_id=ticket_id)
        return self._stream(self.matchmaking.WatchTicket, req, token)

    async def leaderboard(self, game: Any, limit: int) -> list[dict[str, Any]]:
        req = matchmaking_pb2.LeaderboardRequest(game=check_id(game, "game"), limit=limit)
        r = await self._call(self.matchmaking.Leaderboard, req, None)
        return [
            {
                "rank": e.rank,
                "player_id": e.rating.player_id,
                "ordinal": e.rating.ordinal,
                "matches": e.rating.matches,
            }
            for e in r.entries
        ]

    # --------------------------------------------------------- tournaments
    async def tournaments_list(self, token: str, status: str, game: str) -> list[dict[str, Any]]:
        statuses = {
            "": tournaments_pb2.STATUS_UNSPECIFIED,
            "registering": tournaments_pb2.STATUS_REGISTERING,
            "running": tournaments_pb2.STATUS_RUNNING,
            "finished": tournaments_pb2.STATUS_FINISHED,
        }
        if status not in statuses:
            raise bad_request("bad_status", "status must be registering, running or finished")
        if len(game) > MAX_ID:
            raise bad_request("bad_game", "game is too long")
        req = tournaments_pb2.ListTournamentsRequest(status=statuses[status], game=game)
        r = await self._call(self.tournaments.ListTournaments, req, token)
        return [_message(t) for t in r.tournaments]

    async def tournament(self, token: str, tournament_id: Any) -> dict[str, Any]:
        req = tournaments_pb2.GetTournamentRequest(
            tournament_id=check_id(tournament_id, "tournament_id")
        )
        return _message(await self._call(self.tournaments.GetTournament, req, token or None))

    async def register(self, token: str, tournament_id: Any, withdraw: bool = False) -> Any:
        tid = check_id(tournament_id, "tournament_id")
        if withdraw:
            req: Any = tournaments_pb2.WithdrawRequest(tournament_id=tid)
            return _message(await self._call(self.tournaments.Withdraw, req, token))
        req = tournaments_pb2.RegisterRequest(tournament_id=tid)
        return _message(await self._call(self.tournaments.Register, req, token))

    def watch_tournament(
        self, token: str, tournament_id: str, after_seq: int
    ) -> AsyncIterator[Any]:
        req = tournaments_pb2.WatchTournamentRequest(
            tournament_id=tournament_id, after_seq=after_seq
        )
        return self._stream(self.tournaments.WatchTournament, req, token)


def _message(m: Any) -> dict[str, Any]:
    """A proto message as JSON data with the proto's own field names and
    enums by name; its one 64-bit field (``seq``) as a number."""
    d = json_format.MessageToDict(
        m, preserving_proto_field_name=True, always_print_fields_with_no_presence=True
    )
    if isinstance(d.get("seq"), str):
        d["seq"] = int(d["seq"])
    return d
