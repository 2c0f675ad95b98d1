"""The match service's own data: commits (the truth, in JetStream), the
projection (a cache of the fold, in Redis and in memory) and the rules'
decisions.

One JetStream message per commit, msgpack-encoded ``Commit``. Version 0 is the
creation commit (game, players, options, setup events); version ``k`` is the
``k``-th accepted move. The commit that ends the match carries its outcome.
Each commit keeps, besides the events, the events as every seat (and a
spectator) may see them, computed once by the rules when the move was decided:
watchers, replays and retried submits are answered from the commit without
asking the rules again, and what a seat was shown never changes afterwards.
"""

from __future__ import annotations

import hashlib
import os
import re
import time

import msgspec

from engine_core.types import Outcome

KIND_CREATED = "created"
KIND_MOVE = "move"
KIND_FORFEIT = "forfeit"  # a seat forfeited after too many timeouts: the match ends
KIND_ENDED = "ended"  # a service ended the match from outside (EndMatch): its outcome given

TC_NONE = "none"
TC_PER_MOVE = "per_move"
TC_FISCHER = "fischer"
TC_GAME_DEFAULT = "game_default"  # only in a request: replaced by the game's control

ON_MAX_BOT = "bot"
ON_MAX_FORFEIT = "forfeit"

STATUS_ACTIVE = "active"
STATUS_FINISHED = "finished"


class TimeControl(msgspec.Struct, frozen=True, kw_only=True, omit_defaults=True):
    """A turn clock (see ``services.match.clocks``); times in milliseconds.

    ``per_move``: ``per_move_ms`` for every decision. ``fischer``: a bank per
    seat starting at ``initial_ms``, ``increment_ms`` added after each move of
    its player, the first ``delay_ms`` of each decision free. After
    ``max_timeouts`` timeouts in a row (0: never) the seat is handed to the
    ``bot`` (``on_max_timeouts="bot"``) or forfeits (``"forfeit"``).
    """

    kind: str = TC_NONE
    per_move_ms: int = 0
    initial_ms: int = 0
    increment_ms: int = 0
    delay_ms: int = 0
    max_timeouts: int = 0
    on_max_timeouts: str = ON_MAX_BOT
    bot: str = ""

    @property
    def running(self) -> bool:
        return self.kind in (TC_PER_MOVE, TC_FISCHER)


class Clocks(msgspec.Struct, frozen=True, kw_only=True, omit_defaults=True):
    """The turn clocks as of one commit, one entry per seat.

    ``deadlines[s]``: when seat ``s``'s decision times out (Unix ms; 0 = the
    game does not wait for it). ``remaining[s]`` (chess clocks only): the
    time left on its clock at the commit's time, the delay not counted.
    ``timeouts[s]``: its timeouts in a row. ``taken_over[s]``: a bot plays it.
    """

    deadlines: tuple[int, ...]
    remaining: tuple[int, ...] = ()
    timeouts: tuple[int, ...] = ()
    taken_over: tuple[bool, ...] = ()


class MatchOptions(msgspec.Struct, frozen=True, kw_only=True, omit_defaults=True):
    """Options of the match itself (not the game's)."""

    public_replay: bool = False
    time_control: TimeControl | None = None

    @property
    def clock(self) -> TimeControl | None:
        """The running time control, if any."""
        tc = self.time_control
        return tc if tc is not None and tc.running else None


class Decision(msgspec.Struct, frozen=True, kw_only=True):
    """What the rules answered for a setup or a move.

    ``state`` is the new state in its envelope (opaque to the match service).
    ``events`` are JSON texts; ``redacted[s]`` are the events as seat ``s``
    sees them and ``redacted[-1]`` as a spectator does (``None`` = hidden).
    """

    state: bytes
    events: tuple[str, ...]
    redacted: tuple[tuple[str | None, ...], ...]
    awaiting: tuple[int, ...]
    outcome: Outcome | None
    rules_version: str


class Commit(msgspec.Struct, frozen=True, kw_only=True, omit_defaults=True):
    """One message of a match's stream."""

    version: int
    kind: str
    time_ms: int
    entropy: bytes
    events: tuple[str, ...]
    redacted: tuple[tuple[str | None, ...], ...]
    rules_version: str
    awaiting: tuple[int, ...] = ()
    outcome: Outcome | None = None
    clocks: Clocks | None = None  # the turn clocks after this commit
    # a move
    seat: int | None = None
    player: str = ""
    move: str = ""
    key: str = ""  # the idempotency key's digest (scoped to match and caller)
    timeout: bool = False  # the server moved for ``seat``: its clock ran out
    request: str = ""  # the digest of the request made under that key ("" in older commits)
    # the creation
    game: str = ""
    players: tuple[str, ...] = ()
    options: str = ""
    match_options: MatchOptions | None = None
    creator: str = ""

    def visible_events(self, seat: int | None) -> tuple[str, ...]:
        row = self.redacted[-1 if seat is None else seat]
        if None not in row:  # nothing hidden from this seat: the row as it is
            return row  # type: ignore[return-value]
        return tuple(e for e in row if e is not None)

    @property
    def committed_at(self) -> str:
        return rfc3339(self.time_ms)


class MatchMeta(msgspec.Struct, frozen=True, kw_only=True, omit_defaults=True):
    """What the creation commit fixed, plus the status."""

    match_id: str
    game: str
    players: tuple[str, ...]
    options: str
    match_options: MatchOptions
    rules_version: str
    created_ms: int
    creator: str = ""

    @classmethod
    def from_creation(cls, match_id: str, commit: Commit) -> MatchMeta:
        return cls(
            match_id=match_id,
            game=commit.game,
            players=commit.players,
            options=commit.options,
            match_options=commit.match_options or MatchOptions(),
            rules_version=commit.rules_version,
            created_ms=commit.time_ms,
            creator=commit.creator,
        )


class Projection(msgspec.Struct, frozen=True, kw_only=True):
    """A match folded up to ``version`` (stream sequence ``seq``).

    ``keys`` maps every idempotency key digest applied so far to the stream
    sequence of its commit, so a retried submit is answered from that commit
    without deciding again.
    """

    meta: MatchMeta
    version: int
    seq: int
    state: bytes
    awaiting: tuple[int, ...]
    outcome: Outcome | None
    keys: dict[str, int]
    time_ms: int = 0  # the last commit's time
    clocks: Clocks | None = None  # the last commit's clocks

    @property
    def status(self) -> str:
        return STATUS_FINISHED if self.outcome is not None else STATUS_ACTIVE


commit_encoder = msgspec.msgpack.Encoder()
commit_decoder = msgspec.msgpack.Decoder(Commit)


def encode_commit(commit: Commit) -> bytes:
    return commit_encoder.encode(commit)


def decode_commit(data: bytes) -> Commit:
    return commit_decoder.decode(data)


def now_ms() -> int:
    return time.time_ns() // 1_000_000


_second: tuple[int, str] = (-1, "")
"""The whole second formatted last, and its text (a move's times fall in
the same second, mostly; any other instant simply replaces it)."""


def rfc3339(ms: int) -> str:
    """The instant as RFC 3339 UTC, milliseconds: ``2026-12-04T20:31:05.123Z``
    (integer arithmetic, so exact; the date and time of day formatted once
    per second)."""
    global _second
    s, frac = divmod(ms, 1000)
    second = _second
    if second[0] != s:
        second = _second = (s, time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(s)))
    return f"{second[1]}.{frac:03d}Z"


_CROCKFORD = "0123456789abcdefghjkmnpqrstvwxyz"


def new_match_id(seed: bytes | None = None) -> str:
    """A ULID-like id: 48 bits of milliseconds then 80 random bits, in 26
    characters of Crockford base32 (so ids sort by creation time). With
    ``seed`` (an idempotency key), all 128 bits come from its digest, so the
    same seed always names the same match."""
    if seed is not None:
        n = int.from_bytes(hashlib.sha256(seed).digest()[:16], "big")
    else:
        n = (now_ms() << 80) | int.from_bytes(os.urandom(10), "big")
    out = []
    for _ in range(26):
        out.append(_CROCKFORD[n & 31])
        n >>= 5
    return "".join(reversed(out))


def key_digest(match_id: str, player: str, key: str) -> str:
    """The idempotency key as stored: scoped to the match and the caller."""
    return hashlib.sha256(f"{match_id}\0{player}\0{key}".encode()).hexdigest()[:32]


REQUEST_DIGEST_VERSION = "1"
"""Bumped whenever what ``request_digest`` covers changes: digests of two
versions are not compared (replicas of both run side by side during a rolling
upgrade, and a retry may reach either)."""


def request_digest(*fields: object) -> str:
    """The digest of a request's payload, kept with its idempotency key: a
    later request under the same key must carry the same payload."""
    text = "\0".join("" if f is None else str(f) for f in fields)
    return f"{REQUEST_DIGEST_VERSION}:{hashlib.sha256(text.encode()).hexdigest()[:32]}"


def same_request(stored: str, request: str) -> bool:
    """Whether ``request`` may be the request ``stored`` was made for: true
    when they are equal, and when they cannot be compared (no digest in an
    older commit, digests of different versions)."""
    if not stored or not request:
        return True
    if stored.split(":", 1)[0] != request.split(":", 1)[0]:
        return True
    return stored == request


_MATCH_ID = re.compile(r"[A-Za-z0-9_-]{1,64}")


def valid_match_id(match_id: str) -> bool:
    """1 to 64 ASCII letters, digits, ``-`` and ``_``: one token of a NATS
    subject, whatever the client sent."""
    return _MATCH_ID.fullmatch(match_id) is not None
