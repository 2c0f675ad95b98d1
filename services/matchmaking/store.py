"""Tickets in Redis: enqueue, read, cancel, claim, finalise, release, sweep.

Every state change is one Lua script (``lua.py``), so several matchmaker
replicas can work on the same queues: a ticket is claimed by exactly one of
them, and a claimed ticket lands in at most one match.
"""

from __future__ import annotations

import hashlib
import json
import time
import uuid
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

import redis.asyncio as redis

from services.matchmaking import lua
from services.matchmaking.settings import MatchmakingSettings

EVENTS_CHANNEL = "mm:events"
BOT_JOBS_STREAM = "mm:bots"
QUEUES_KEY = "mm:queues"
WATCH_KEY = "mm:watch"

SEARCHING = "searching"
CLAIMED = "claimed"
MATCHED = "matched"
CANCELLED = "cancelled"
EXPIRED = "expired"
FINAL_STATES = frozenset({MATCHED, CANCELLED, EXPIRED})


class PartyTokenUsed(Exception):
    """A party token of the new ticket was already presented once."""

    def __init__(self, jti: str) -> None:
        self.jti = jti
        super().__init__(f"party token {jti} was already used")


class IdempotencyKeyReused(Exception):
    """The idempotency key made a ticket for another request."""

    def __init__(self, ticket_id: str) -> None:
        self.ticket_id = ticket_id
        super().__init__(f"the idempotency key made ticket {ticket_id} for another request")


class PlayerAlreadyQueued(Exception):
    """A player of the new ticket is already searching with another ticket."""

    def __init__(self, player: str, ticket_id: str) -> None:
        self.player = player
        self.ticket_id = ticket_id
        super().__init__(f"player {player!r} is already queued with ticket {ticket_id}")


def now_ms() -> int:
    return int(time.time() * 1000)


def ticket_key(ticket_id: str) -> str:
    return f"mm:t:{ticket_id}"


def options_key(options_json: str) -> str:
    """A short stable hash of a game's options (canonical JSON)."""
    canonical = json.dumps(json.loads(options_json or "{}"), sort_keys=True, separators=(",", ":"))
    return hashlib.sha1(canonical.encode()).hexdigest()[:12]


def clock_options_key(options_json: str, time_control: str, pool: str = "") -> str:
    """The options hash, with the turn clock folded in when it is not the
    matchmaker's default (tickets with other clocks never meet), and the pool
    when there is one (tickets of other pools never meet)."""
    okey = options_key(options_json)
    if time_control:
        okey = hashlib.sha1(f"{okey}|{time_control}".encode()).hexdigest()[:12]
    if pool:
        okey = hashlib.sha1(f"{okey}|pool|{pool}".encode()).hexdigest()[:12]
    return okey


def idempotency_key(caller: str, key: str) -> str:
    """The Redis key of a caller's idempotency key (a digest: any characters,
    bounded length, and no caller's key can be another's)."""
    digest = hashlib.sha256(f"{caller}\0{key}".encode()).hexdigest()[:40]
    return f"mm:idem:{digest}"


def request_digest(t: NewTicket) -> str:
    """What a retry under the same key must repeat: everything the caller
    asked for (not the rating, which is the matchmaker's)."""
    canonical = json.dumps(
        [
            t.game,
            list(t.players),
            sorted(set(t.player_counts)),
            options_key(t.options_json),  # "" and "{}" are the same request
            t.allow_bots,
            t.time_control,
            t.bot_level,
            t.pool,
        ],
        separators=(",", ":"),
    )
    return hashlib.sha256(canonical.encode()).hexdigest()[:32]


def queue_key(game: str, opts_key: str, players: int) -> str:
    return f"mm:q:{game}:{opts_key}:{players}"


def parse_queue_key(key: str) -> tuple[str, str, int]:
    _, _, game, okey, n = key.split(":")
    return game, okey, int(n)


@dataclass(frozen=True, slots=True)
class NewTicket:
    game: str
    players: tuple[str, ...]
    player_counts: tuple[int, ...]
    options_json: str
    allow_bots: bool
    rating: float
    time_control: str = ""  # the text form ("" = the matchmaker's setting)
    bot_level: str = ""  # the level of the bots it accepts ("" = the matchmaker's setting)
    pool: str = ""  # a closed pool ("" = the public queues)


@dataclass(frozen=True, slots=True)
class Enqueued:
    """The answer to an enqueue: the ticket, its state, and whether an
    earlier enqueue with the same idempotency key made it (``replayed``)."""

    ticket_id: str
    state: str = SEARCHING
    replayed: bool = False


@dataclass(frozen=True, slots=True)
class TicketRecord:
    ticket_id: str
    game: str
    players: tuple[str, ...]
    player_counts: tuple[int, ...]
    options_json: str
    allow_bots: bool
    rating: float
    created_ms: int
    expires_ms: int
    state: str
    reason: str = ""
    match_id: str = ""
    seats: dict[str, int] = field(default_factory=dict)
    player_count: int = 0
    bots: int = 0
    ended_ms: int = 0  # Redis server time when the ticket ended
    time_control: str = ""
    bot_level: str = ""

    @classmethod
    def from_hash(cls, h: dict[str, str]) -> TicketRecord:
        return cls(
            ticket_id=h["id"],
            game=h["game"],
            players=tuple(json.loads(h["players"])),
            player_counts=tuple(int(n) for n in h["counts"].split(",")),
            options_json=h.get("opts", ""),
            allow_bots=h.get("bots") == "1",
            rating=float(h["rating"]),
            created_ms=int(h["created_ms"]),
            expires_ms=int(h["expires_ms"]),
            state=h["state"],
            reason=h.get("reason", ""),
            match_id=h.get("match_id", ""),
            seats=json.loads(h["seats"]) if h.get("seats") else {},
            player_count=int(h.get("player_count") or 0),
            bots=int(h.get("nbots") or 0),
            ended_ms=int(h.get("ended_ms") or 0),
            time_control=h.get("tc", ""),
            bot_level=h.get("blevel", ""),
        )


@dataclass(frozen=True, slots=True)
class QueueEntry:
    """One member of a queue: what pairing needs, straight from the member string.

    The last part of the member is ``0`` (no bots), or the level of the bots
    the ticket accepts (``1`` from tickets queued before levels: the
    matchmaker's setting)."""

    member: str
    ticket_id: str
    size: int
    created_ms: int
    allow_bots: bool
    rating: float
    bot_level: str = ""  # "" = the matchmaker's setting

    @classmethod
    def parse(cls, member: str, score: float) -> QueueEntry:
        tid, size, created, bots = member.split("|")
        level = "" if bots in ("0", "1") else bots
        return cls(member, tid, int(size), int(created), bots != "0", score, level)


@dataclass(frozen=True, slots=True)
class ClaimedTicket:
    ticket_id: str
    players: tuple[str, ...]
    options_json: str
    time_control: str = ""


@dataclass(frozen=True, slots=True)
class Claimed:
    """Which groups were claimed, and the claimed tickets' players and options."""

    won: list[bool]
    tickets: dict[str, ClaimedTicket]


@dataclass(frozen=True, slots=True)
class MatchResult:
    """A created match, to be written to the tickets that make it."""

    tickets: tuple[str, ...]
    match_id: str
    game: str
    player_count: int
    seats: dict[str, dict[str, int]]  # ticket id -> {player: seat}
    bot_players: dict[str, int]  # bot player id -> seat


class TicketStore:
    def __init__(self, client: redis.Redis, settings: MatchmakingSettings) -> None:
        self.redis = client
        self.settings = settings
        self._enqueue = client.register_script(lua.ENQUEUE)
        self._end = client.register_script(lua.END)
        self._sweep = client.register_script(lua.SWEEP)
        self._claim = client.register_script(lua.CLAIM)
        self._read_queues = client.register_script(lua.READ_QUEUES)
        self._finalize = client.register_script(lua.FINALIZE)
        self._release = client.register_script(lua.RELEASE)

    # ------------------------------------------------------------ tickets
    async def enqueue(
        self,
        t: NewTicket,
        *,
        at_ms: int | None = None,
        consents: Sequence[str] = (),
        consent_ttl_ms: int = 600_000,
    ) -> str:
        """A new searching ticket; ``consents`` are the ids of the party tokens
        presented, each usable once (``PartyTokenUsed``)."""
        made = await self.enqueue_once(
            t, at_ms=at_ms, consents=consents, consent_ttl_ms=consent_ttl_ms
        )
        return made.ticket_id

    async def enqueue_once(
        self,
        t: NewTicket,
        *,
        at_ms: int | None = None,
        consents: Sequence[str] = (),
        consent_ttl_ms: int = 600_000,
        key: str = "",
    ) -> Enqueued:
        """``enqueue`` under an idempotency key (``idempotency_key(caller,
        key)``, "" for none): the first call with the key makes the ticket;
        every later one with the same request answers that ticket and its
        state (``replayed``), with another request ``IdempotencyKeyReused``.
        Atomic in one script: two replicas racing on a key make one ticket."""
        s = self.settings
        ticket_id = uuid.uuid4().hex
        created = now_ms() if at_ms is None else at_ms
        expires = created + int(s.ticket_ttl_s * 1000)
        hash_ttl = int((s.ticket_ttl_s + s.claim_timeout_s + s.result_ttl_s) * 1000)
        okey = clock_options_key(t.options_json, t.time_control, t.pool)
        queues = [queue_key(t.game, okey, n) for n in sorted(set(t.player_counts))]
        bots = (t.bot_level or "1") if t.allow_bots else "0"
        member = f"{ticket_id}|{len(t.players)}|{created}|{bots}"
        fields = {
            "id": ticket_id,
            "game": t.game,
            "players": json.dumps(list(t.players)),
            "counts": ",".join(str(n) for n in sorted(set(t.player_counts))),
            "opts": t.options_json,
            "tc": t.time_control,
            "blevel": t.bot_level,
            "pool": t.pool,
            "bots": "1" if t.allow_bots else "0",
            "rating": repr(float(t.rating)),
            "created_ms": str(created),
            "expires_ms": str(expires),
            "state": SEARCHING,
            "member": member,
            "queues": json.dumps(queues),
        }
        digest = request_digest(t) if key else ""
        if key:
            fields["idem"] = key
        flat: list[str] = [x for kv in fields.items() for x in kv]
        res = await self._enqueue(
            keys=[],
            args=[
                ticket_id,
                hash_ttl,
                expires,
                repr(float(t.rating)),
                member,
                json.dumps(list(t.players)),
                json.dumps(queues),
                json.dumps(flat),
                json.dumps(list(consents)),
                consent_ttl_ms,
                key,
                digest,
            ],
        )
        code = int(res[0])
        if code == 0:
            raise PlayerAlreadyQueued(_s(res[1]), _s(res[2]))
        if code == 2:
            raise PartyTokenUsed(_s(res[1]))
        if code == 3:
            return Enqueued(_s(res[1]), _s(res[2]), replayed=True)
        if code == 4:
            raise IdempotencyKeyReused(_s(res[1]))
        return Enqueued(ticket_id)

    async def get(self, ticket_id: str) -> TicketRecord | None:
        h = await self.redis.hgetall(ticket_key(ticket_id))
        if not h:
            return None
        return TicketRecord.from_hash({_s(k): _s(v) for k, v in h.items()})

    async def get_many(self, ticket_ids: Sequence[str]) -> list[TicketRecord | None]:
        """Several tickets in one round trip."""
        async with self.redis.pipeline(transaction=False) as pipe:
            for t in ticket_ids:
                pipe.hgetall(ticket_key(t))
            rows = await pipe.execute()
        return [
            TicketRecord.from_hash({_s(k): _s(v) for k, v in h.items()}) if h else None
            for h in rows
        ]

    async def end(self, ticket_id: str, state: str, reason: str) -> tuple[bool, str]:
        """End a searching ticket: ``(True, state)``, or ``(False, the state it is
        in)`` if it was not searching (``missing`` if unknown)."""
        done, after = await self._end(
            keys=[], args=[ticket_id, state, reason, int(self.settings.result_ttl_s * 1000)]
        )
        return int(done) == 1, _s(after)

    async def touch_watch(self, ticket_id: str, deadline_ms: int) -> None:
        """A watcher is (or just was) there: cancel the ticket only after ``deadline_ms``."""
        await self.redis.zadd(WATCH_KEY, {ticket_id: deadline_ms})

    # -------------------------------------------------------- matchmaking
    async def sweep(self, at_ms: int | None = None, limit: int = 1000) -> int:
        s = self.settings
        return int(
            await self._sweep(
                keys=[],
                args=[
                    now_ms() if at_ms is None else at_ms,
                    int(s.claim_timeout_s * 1000),
                    int(s.result_ttl_s * 1000),
                    limit,
                ],
            )
        )

    async def queues(self) -> list[str]:
        return sorted(_s(q) for q in await self.redis.smembers(QUEUES_KEY))

    async def read_queues(self, keys: Sequence[str]) -> dict[str, list[QueueEntry]]:
        """Every queue's entries, in one round trip."""
        if not keys:
            return {}
        blobs = await self._read_queues(keys=list(keys), args=[])
        out: dict[str, list[QueueEntry]] = {}
        for k, blob in zip(keys, blobs, strict=True):
            text = _s(blob)
            entries = []
            if text:
                for line in text.split("\n"):
                    member, score = line.split("\t")
                    entries.append(QueueEntry.parse(member, float(score)))
            out[k] = entries
        return out

    async def claim(
        self, queue: str, groups: Sequence[Sequence[str]], token: str, at_ms: int | None = None
    ) -> Claimed:
        """Claim groups of members of ``queue``, each whole or not at all."""
        if not groups:
            return Claimed([], {})
        res = json.loads(
            await self._claim(
                keys=[queue],
                args=[
                    now_ms() if at_ms is None else at_ms,
                    token,
                    json.dumps([list(g) for g in groups]),
                ],
            )
        )
        tickets = {
            tid: ClaimedTicket(
                tid, tuple(json.loads(fields[0])), fields[1], fields[2] if len(fields) > 2 else ""
            )
            for tid, fields in res["tickets"].items()
            if tid != "_"  # cjson encodes an empty table as {}: the script adds "_"
        }
        return Claimed([int(x) == 1 for x in res["ok"]], tickets)

    async def finalize(self, token: str, matches: Iterable[MatchResult]) -> int:
        payload = [
            {
                "tickets": list(m.tickets),
                "match_id": m.match_id,
                "game": m.game,
                "players": m.player_count,
                "bots": len(m.bot_players),
                "seats": m.seats,
                "bot_players": m.bot_players,
            }
            for m in matches
        ]
        if not payload:
            return 0
        return int(
            await self._finalize(
                keys=[],
                args=[token, int(self.settings.result_ttl_s * 1000), json.dumps(payload)],
            )
        )

    async def release(
        self, token: str, ticket_ids: Sequence[str], *, count: bool = True, at_once: bool = False
    ) -> int:
        """Put claimed tickets back; ``count`` a failure against each (ending
        those that reached ``max_create_failures``; ``at_once``: ending them
        now, the refusal named them)."""
        if not ticket_ids:
            return 0
        s = self.settings
        return int(
            await self._release(
                keys=[],
                args=[
                    token,
                    json.dumps(list(ticket_ids)),
                    (1 if at_once else s.max_create_failures) if count else 0,
                    int(s.result_ttl_s * 1000),
                ],
            )
        )


def _s(v: Any) -> str:
    return v.decode() if isinstance(v, bytes) else str(v)
