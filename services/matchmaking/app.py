"""The matchmaking application: what the servicer calls, one method per RPC.

No proto here: plain values in, plain values out, ``errors`` for rejections.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
from collections.abc import AsyncIterator, Iterator, Sequence
from dataclasses import dataclass

import redis.asyncio as redis
import structlog

from engine_core.bots import LEVELS
from engine_core.errors import EngineError
from engine_core.registry import Registry, UnknownGame
from services.common.auth import MAX_PLAYER_ID_CHARS, Tokens, valid_player_id
from services.common.codecs import check_json, decode_options
from services.match.clocks import format_spec
from services.match.clocks import parse as parse_time_control
from services.matchmaking import metrics
from services.matchmaking.errors import AlreadyQueued, BadRequest, Conflict, Forbidden, NotFound
from services.matchmaking.ratings import PlayerRating, Ratings
from services.matchmaking.settings import MatchmakingSettings
from services.matchmaking.store import (
    CANCELLED,
    CLAIMED,
    EVENTS_CHANNEL,
    EXPIRED,
    FINAL_STATES,
    SEARCHING,
    Enqueued,
    IdempotencyKeyReused,
    NewTicket,
    PartyTokenUsed,
    PlayerAlreadyQueued,
    TicketRecord,
    TicketStore,
    now_ms,
)
from services.matchmaking.store import idempotency_key as _idempotency_key

log = structlog.get_logger("matchmaking.app")

BOT_PREFIX = "bot:"
MAX_LEADERBOARD = 100
MAX_OPTIONS_BYTES = 64 * 1024
MAX_POOL_CHARS = 200
MAX_KEY_CHARS = 200  # an idempotency key, as the match service bounds its own


@dataclass(frozen=True, slots=True)
class Caller:
    """Who calls: a player id, or a service."""

    player_id: str
    is_service: bool = False


@dataclass(frozen=True, slots=True)
class TicketUpdate:
    ticket_id: str
    state: str  # searching / matched / cancelled / expired
    reason: str = ""
    rating: float = 0.0
    rating_window: float = 0.0
    waited_s: float = 0.0
    match_id: str = ""
    seat: int = 0
    seats: dict[str, int] | None = None
    player_count: int = 0
    bots: int = 0
    bot_level: str = ""  # the level of those bots ("" when none)


class TicketEvents:
    """One Redis subscription per process; wakes the watchers of a ticket
    when it ends (whichever replica ended it)."""

    def __init__(self, client: redis.Redis) -> None:
        self.redis = client
        self._waiters: dict[str, set[asyncio.Event]] = {}
        self._task: asyncio.Task[None] | None = None
        self._ready = asyncio.Event()

    async def start(self) -> None:
        self._task = asyncio.create_task(self._run(), name="ticket-events")
        await self._ready.wait()

    async def stop(self) -> None:
        if self._task:
            self._task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._task

    async def _run(self) -> None:
        while True:
            try:
                async with self.redis.pubsub(ignore_subscribe_messages=True) as ps:
                    await ps.subscribe(EVENTS_CHANNEL)
                    self._ready.set()
                    self._wake_all()  # after a reconnect: everybody re-reads
                    while True:
                        msg = await ps.get_message(timeout=5.0)
                        if msg and msg["type"] == "message":
                            data = msg["data"]
                            text = data.decode() if isinstance(data, bytes) else str(data)
                            for tid in text.split():
                                for ev in self._waiters.get(tid, ()):
                                    ev.set()
            except asyncio.CancelledError:
                raise
            except Exception as e:
                log.warning("ticket_events_reconnect", error=str(e))
                self._ready.set()
                await asyncio.sleep(0.5)

    def _wake_all(self) -> None:
        for evs in self._waiters.values():
            for ev in evs:
                ev.set()

    @contextlib.contextmanager
    def listen(self, ticket_id: str) -> Iterator[asyncio.Event]:
        ev = asyncio.Event()
        self._waiters.setdefault(ticket_id, set()).add(ev)
        try:
            yield ev
        finally:
            evs = self._waiters.get(ticket_id)
            if evs is not None:
                evs.discard(ev)
                if not evs:
                    del self._waiters[ticket_id]


class Matchmaking:
    def __init__(
        self,
        store: TicketStore,
        ratings: Ratings,
        events: TicketEvents,
        registry: Registry,
        settings: MatchmakingSettings,
        tokens: Tokens | None = None,
    ) -> None:
        self.tokens = tokens or Tokens(settings.auth())
        self.store = store
        self.ratings = ratings
        self.events = events
        self.registry = registry
        self.settings = settings

    # ------------------------------------------------------------- enqueue
    async def enqueue(
        self,
        caller: Caller,
        game: str,
        player_counts: Sequence[int],
        options_json: str,
        party: Sequence[str],
        allow_bots: bool,
        party_tokens: Sequence[str] = (),
        *,
        time_control: str = "",
        bot_level: str = "",
        pool: str = "",
        idempotency_key: str = "",
    ) -> Enqueued:
        """A new ticket (its id and state). With ``idempotency_key``, the
        same caller and key get the ticket the first call made (``replayed``),
        and the same key with another request is ``idempotency_key_reused``."""
        g = self._game(game)
        if len(idempotency_key) > MAX_KEY_CHARS or not idempotency_key.isprintable():
            raise BadRequest(
                "bad_key", f"idempotency_key is at most {MAX_KEY_CHARS} printable characters"
            )
        if pool and not caller.is_service:
            raise Forbidden("pool_service_only", "only a service queues tickets in a pool")
        if len(pool) > MAX_POOL_CHARS or not pool.isprintable():
            raise BadRequest("bad_pool", f"a pool is at most {MAX_POOL_CHARS} printable characters")
        consents: list[str] = []
        # canonical text form, so equal clocks share a queue
        clock = format_spec(parse_time_control(time_control)) if time_control.strip() else ""
        level = self._bot_level(bot_level)
        if caller.is_service:
            players = list(party)
            if not players:
                raise BadRequest("no_players", "a service must name the ticket's players in party")
        else:
            members, consents = self._party(caller, game, party, party_tokens)
            players = [caller.player_id, *members]
        for i, p in enumerate(players):
            if not valid_player_id(p) or p.startswith(BOT_PREFIX):
                raise BadRequest(
                    "bad_player",
                    f"player ids are 1..{MAX_PLAYER_ID_CHARS} printable characters, not bots",
                    index=str(i),
                )
        if len(set(players)) != len(players):
            raise BadRequest("duplicate_player", "a player appears twice in the party")
        if len(players) > self.settings.max_party:
            raise BadRequest(
                "party_too_big", f"at most {self.settings.max_party} players per ticket"
            )
        counts = sorted(set(player_counts)) or list(range(g.min_players, g.max_players + 1))
        bad = [n for n in counts if not g.min_players <= n <= g.max_players]
        if bad:
            raise BadRequest(
                "player_count",
                f"{game} plays with {g.min_players}-{g.max_players} players, not {bad[:8]}",
            )
        counts = [n for n in counts if n >= len(players)]
        if not counts:
            raise BadRequest("party_too_big", f"a party of {len(players)} fits no count asked for")
        options = self._options(g, options_json)
        rated = await self.ratings.get_many(game, players)
        rating = sum(r.mu for r in rated) / len(rated)
        try:
            made = await self.store.enqueue_once(
                NewTicket(
                    game,
                    tuple(players),
                    tuple(counts),
                    options,
                    allow_bots,
                    rating,
                    clock,
                    level,
                    pool=pool,
                ),
                consents=consents,
                consent_ttl_ms=int((self.settings.party_token_ttl_s + 60) * 1000),
                key=_idempotency_key(caller.player_id, idempotency_key) if idempotency_key else "",
            )
        except IdempotencyKeyReused as e:
            raise Conflict(
                "idempotency_key_reused",
                "this idempotency key queued another request (game, players, counts, options, "
                "clock, bots or pool): use a new key for a new request",
                ticket_id=e.ticket_id,
            ) from None
        except PlayerAlreadyQueued as e:
            raise AlreadyQueued(
                "already_queued", str(e), player=e.player, ticket_id=e.ticket_id
            ) from None
        except PartyTokenUsed:
            raise Conflict(
                "party_token_used", "a party token was already used: ask the member for a new one"
            ) from None
        if made.replayed:
            metrics.ENQUEUE_REPLAYED.labels(game).inc()
            # claimed is the matchmaker's own step: to a client it still searches
            state = SEARCHING if made.state == CLAIMED else made.state
            return Enqueued(made.ticket_id, state, replayed=True)
        metrics.TICKETS_ENQUEUED.labels(game).inc()
        return made

    def _party(
        self, caller: Caller, game: str, party: Sequence[str], party_tokens: Sequence[str]
    ) -> tuple[list[str], list[str]]:
        """The consenting members (in token order) and their tokens' ids. Each
        token must be for this leader and game; a member named in ``party``
        without a token has not consented."""
        if len(party_tokens) > self.settings.max_party:
            raise BadRequest("party_too_big", f"at most {self.settings.max_party} party tokens")
        members: list[str] = []
        jtis: list[str] = []
        for i, token in enumerate(party_tokens):
            claims = self.tokens.verify_party_token(token)
            if claims["leader"] != caller.player_id or claims["game"] != game:
                raise Forbidden(
                    "bad_party_token",
                    "a party token is for another leader or game",
                    index=str(i),
                )
            if claims["sub"] not in members:
                members.append(claims["sub"])
                jtis.append(claims["jti"])
        if party:
            for p in party:
                if p not in members:
                    raise Forbidden(
                        "party_consent_missing",
                        "a member of the party has not consented (no party token of theirs)",
                        player=p,
                    )
            if len(set(party)) != len(members):
                raise BadRequest("party_mismatch", "party names fewer players than party_tokens")
        return members, jtis

    async def join_party(self, caller: Caller, leader: str, game: str) -> tuple[str, int]:
        """The caller's consent to be queued in ``leader``'s party for ``game``."""
        self._game(game)
        if caller.is_service:
            raise Forbidden("players_only", "a service queues players directly, without tokens")
        if not valid_player_id(leader) or leader.startswith(BOT_PREFIX):
            raise BadRequest("bad_player", "leader must be a player id")
        if leader == caller.player_id:
            raise BadRequest("own_party", "the leader needs no party token of its own")
        return self.tokens.party_token(
            caller.player_id, leader, game, ttl_s=int(self.settings.party_token_ttl_s)
        )

    def _bot_level(self, bot_level: str) -> str:
        """The level of the bots a ticket accepts: one of ``LEVELS``, or the
        setting when the ticket names none (recorded on the ticket, so a
        change of the setting does not move tickets already queued)."""
        level = bot_level.strip()
        if not level:
            return self.settings.bot_level
        if level not in LEVELS:
            raise BadRequest(
                "bad_bot_level",
                f"bot_level {level[:32]!r} is not a bot level; use one of {', '.join(LEVELS)}",
            )
        return level

    def _game(self, game: str):
        try:
            return self.registry.get(game)
        except UnknownGame as e:
            raise NotFound("unknown_game", str(e), game=game) from None

    @staticmethod
    def _options(g, options_json: str) -> str:
        """Validated options as canonical JSON ("" for the defaults)."""
        if not options_json.strip():
            return ""
        try:
            decode_options(g, check_json("options", options_json, MAX_OPTIONS_BYTES))
            return json.dumps(json.loads(options_json), sort_keys=True, separators=(",", ":"))
        except (EngineError, ValueError) as e:
            raise BadRequest("malformed_options", str(e)) from None

    # ------------------------------------------------------------- tickets
    async def _ticket(self, caller: Caller, ticket_id: str) -> TicketRecord:
        rec = await self.store.get(ticket_id) if ticket_id else None
        if rec is None:
            raise NotFound("unknown_ticket", f"no ticket {ticket_id!r}", ticket_id=ticket_id)
        if not caller.is_service and caller.player_id not in rec.players:
            raise Forbidden("not_your_ticket", "the caller is not a player of this ticket")
        return rec

    async def cancel(self, caller: Caller, ticket_id: str) -> str:
        await self._ticket(caller, ticket_id)
        done, state = await self.store.end(ticket_id, CANCELLED, "cancelled")
        if not done:
            raise Conflict(
                "ticket_not_searching", f"the ticket is {state}", ticket_id=ticket_id, state=state
            )
        return state

    async def watch(self, caller: Caller, ticket_id: str) -> AsyncIterator[TicketUpdate]:
        rec = await self._ticket(caller, ticket_id)
        s = self.settings
        with self.events.listen(ticket_id) as woken:
            try:
                while True:
                    if rec is None:  # gone from Redis: it ended long ago
                        yield TicketUpdate(ticket_id, EXPIRED, "expired")
                        return
                    if rec.state in FINAL_STATES:
                        yield self._final(caller, rec)
                        return
                    now = now_ms()
                    await self.store.touch_watch(ticket_id, now + int(s.watch_grace_s * 1000))
                    waited = max(0.0, (now - rec.created_ms) / 1000.0)
                    yield TicketUpdate(
                        ticket_id,
                        "searching",
                        rating=rec.rating,
                        rating_window=s.window(waited),
                        waited_s=waited,
                    )
                    with contextlib.suppress(TimeoutError):
                        await asyncio.wait_for(woken.wait(), s.watch_update_s)
                    woken.clear()
                    rec = await self.store.get(ticket_id)
            finally:
                # The watcher leaves (or the stream ended): the grace period starts now.
                if rec is not None and rec.state not in FINAL_STATES:
                    with contextlib.suppress(Exception):
                        await self.store.touch_watch(
                            ticket_id, now_ms() + int(s.watch_grace_s * 1000)
                        )

    def _final(self, caller: Caller, rec: TicketRecord) -> TicketUpdate:
        if rec.state != "matched":
            return TicketUpdate(rec.ticket_id, rec.state, rec.reason or rec.state)
        seat = rec.seats.get(caller.player_id, rec.seats.get(rec.players[0], 0))
        return TicketUpdate(
            rec.ticket_id,
            rec.state,
            match_id=rec.match_id,
            seat=seat,
            seats=dict(rec.seats),
            player_count=rec.player_count,
            bots=rec.bots,
            # tickets queued before levels name none: they got the setting's
            bot_level=(rec.bot_level or self.settings.bot_level) if rec.bots else "",
            rating=rec.rating,
        )

    # ------------------------------------------------------------- ratings
    async def rating(self, game: str, player: str) -> PlayerRating:
        self._game(game)
        if not player:
            raise BadRequest("no_player", "player_id is required")
        return await self.ratings.get(game, player)

    async def leaderboard(self, game: str, limit: int) -> list[PlayerRating]:
        self._game(game)
        limit = 10 if limit <= 0 else min(limit, MAX_LEADERBOARD)
        return await self.ratings.leaderboard(game, limit)
