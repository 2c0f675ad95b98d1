"""A seeded generator of bad (and some good) inputs for every field of every
request: garbage and deep JSON, huge strings, unicode, wrong types inside
JSON, out-of-range numbers, random tokens, real and made-up ids.

``Inputs(seed, pools).request(descriptor)`` builds one request message of
any type from its proto descriptor, choosing a value per field by the field's
type and name, so a new RPC or field is fuzzed without a line here.
"""

from __future__ import annotations

import json
import math
import random
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import jwt
from google.protobuf.descriptor import Descriptor, FieldDescriptor
from google.protobuf.message import Message

from services.common.auth import Tokens

_UNICODE = [
    "é",
    "日本語",
    "\u202eevil",
    "🎲🐉",
    "\u0000nul",
    "\ufeffbom",
    "a\u0301",
    "\U0001f600" * 50,
    "\u200b",
    "Ω≈ç√",
]
_SPECIAL = [
    "",
    " ",
    ".",
    "*",
    ">",
    "a.b",
    "a b",
    "../../etc/passwd",
    "$KV.x.>",
    "match.*",
    "{}",
    "null",
    "'; DROP TABLE x; --",
    "%s%n",
    "\n\r\t",
    "bot:greedy-1",
    "guest:",
    "service:match",
    "mm:p:x",
]
_INTS = [0, 1, 2, 3, 4, 5, 8, 9, 16, 255, 256, 2**31 - 1, 2**31, 2**32 - 1]
_BIG_INTS = [2**53, 2**63 - 1, 2**63, 2**64 - 1, 2**64, -1, -(2**63), 10**30]
_DOUBLES = [0.0, 1.0, 2.0, 0.5, -1.0, 1e-300, 1e300, math.inf, -math.inf, math.nan, 0.1, 1000.0]


@dataclass
class Pools:
    """Real values the generator mixes in, so calls get past the first checks."""

    games: list[str]
    match_ids: list[str] = field(default_factory=list)
    ticket_ids: list[str] = field(default_factory=list)
    players: list[str] = field(default_factory=list)
    states: list[bytes] = field(default_factory=list)
    moves: list[str] = field(default_factory=list)
    events: list[str] = field(default_factory=list)


class Inputs:
    def __init__(self, seed: int, pools: Pools, tokens: Tokens) -> None:
        self.rng = random.Random(seed)
        self.pools = pools
        self.tokens = tokens
        self._by_name: dict[str, Callable[[], Any]] = {
            "game": self.game,
            "match_id": self.match_id,
            "ticket_id": self.ticket_id,
            "player": self.player,
            "players": self.player,
            "party": self.player,
            "player_id": self.player,
            "leader": self.player,
            "move_json": self.move,
            "move": self.move,
            "options_json": self.json,
            "options": self.json,
            "events": self.event,
            "state": self.state,
            "entropy": self.blob,
            "idempotency_key": self.text,
            "party_tokens": self.party_token,
            "name": self.text,
        }

    # ------------------------------------------------------------- scalars
    def chance(self, p: float) -> bool:
        return self.rng.random() < p

    def pick(self, items: list[Any]) -> Any:
        return items[self.rng.randrange(len(items))]

    def text(self) -> str:
        r = self.rng.random()
        if r < 0.25:
            return self.pick(_SPECIAL)
        if r < 0.45:
            return self.pick(_UNICODE)
        if r < 0.55:
            return "x" * self.pick([201, 257, 1000, 100_000, 600_000])
        if r < 0.75:
            n = self.rng.randrange(1, 40)
            return "".join(chr(self.rng.randrange(32, 127)) for _ in range(n))
        n = self.rng.randrange(1, 20)
        return "".join(self._char() for _ in range(n))

    def _char(self) -> str:
        while True:
            c = self.rng.randrange(1, 0x10FFFF)
            if not 0xD800 <= c <= 0xDFFF:  # lone surrogates cannot be UTF-8
                return chr(c)

    def integer(self, field: FieldDescriptor) -> int:
        value = self.pick(_INTS) if self.chance(0.7) else self.pick(_BIG_INTS)
        bits = 64 if field.type in _64BIT else 32
        unsigned = field.type in _UNSIGNED
        lo, hi = (0, 2**bits - 1) if unsigned else (-(2 ** (bits - 1)), 2 ** (bits - 1) - 1)
        return min(max(value, lo), hi)

    def double(self) -> float:
        return self.pick(_DOUBLES) if self.chance(0.8) else self.rng.uniform(-1e6, 1e6)

    def blob(self) -> bytes:
        r = self.rng.random()
        if r < 0.3:
            return b""
        if r < 0.5:
            return bytes(self.rng.randrange(256) for _ in range(self.rng.randrange(1, 64)))
        if r < 0.6:
            return b"\x00" * self.pick([2000, 70_000])
        return self.rng.randbytes(self.rng.randrange(1, 2048))

    # ------------------------------------------------------------- domain
    def game(self) -> str:
        return self.pick(self.pools.games) if self.chance(0.7) else self.text()

    def match_id(self) -> str:
        if self.pools.match_ids and self.chance(0.7):
            return self.pick(self.pools.match_ids)
        return self.text()

    def ticket_id(self) -> str:
        if self.pools.ticket_ids and self.chance(0.6):
            return self.pick(self.pools.ticket_ids)
        return self.text()

    def player(self) -> str:
        if self.pools.players and self.chance(0.6):
            return self.pick(self.pools.players)
        return self.text()

    def state(self) -> bytes:
        if not self.pools.states or self.chance(0.3):
            return self.blob()
        state = bytearray(self.pick(self.pools.states))
        if self.chance(0.6):  # flip, cut or grow a real state
            for _ in range(self.rng.randrange(1, 6)):
                i = self.rng.randrange(len(state))
                state[i] = self.rng.randrange(256)
        if self.chance(0.2):
            state = state[: self.rng.randrange(len(state) + 1)]
        return bytes(state)

    def json(self) -> str:
        r = self.rng.random()
        if r < 0.15:
            depth = self.pick([33, 100, 1000, 5000])
            opener = self.pick(["[", '{"a":'])
            closer = "]" if opener == "[" else "}"
            return opener * depth + ("1" if opener != "[" else "") + closer * depth
        if r < 0.3:
            return self.text()
        if r < 0.4:
            return self.pick(["", "{}", "[]", "null", "{", '{"type":', "1e999", "NaN", '"\\ud800"'])
        return json.dumps(self._value(0))

    def _value(self, depth: int) -> Any:
        r = self.rng.random()
        if depth > 4 or r < 0.4:
            return self.pick(
                [
                    None,
                    True,
                    False,
                    0,
                    -1,
                    2**64,
                    1.5,
                    1e308,
                    "",
                    self.text()[:50],
                    self.pick(self.pools.games),
                ]
            )
        if r < 0.7:
            return [self._value(depth + 1) for _ in range(self.rng.randrange(0, 5))]
        return {self.text()[:20]: self._value(depth + 1) for _ in range(self.rng.randrange(0, 5))}

    def move(self) -> str:
        """A real move, or one with fields swapped for wrong types and values."""
        if not self.pools.moves or self.chance(0.4):
            return self.json()
        move = json.loads(self.pick(self.pools.moves))
        if self.chance(0.3):
            return json.dumps(move)
        keys = [k for k in move if k != "type"] or ["type"]
        key = self.pick(keys)
        move[key] = self._value(2) if self.chance(0.8) else self.pick(_BIG_INTS)
        if self.chance(0.2):
            move["type"] = self.text()[:30]
        if self.chance(0.2):
            move[self.text()[:20]] = self._value(1)
        return json.dumps(move)

    def event(self) -> str:
        if self.pools.events and self.chance(0.5):
            return self.pick(self.pools.events)
        return self.move()

    def party_token(self) -> str:
        return self.token()

    def token(self) -> str:
        """A bearer token: valid, for a service, expired, forged, garbage."""
        r = self.rng.random()
        sub = self.player() if self.chance(0.3) else self.pick(self.pools.players or ["p"])
        if r < 0.45:
            return self.tokens.issue(sub[:200] or "p")
        if r < 0.5:
            return self.tokens.issue("service:fuzz", role="service")
        now = int(time.time())
        if r < 0.6:
            claims = {"sub": sub, "iss": "tabletop", "iat": now - 100, "exp": now - 60}
            return jwt.encode(claims, self.tokens.settings.secret, algorithm="HS256")
        if r < 0.7:
            claims = {"sub": sub, "iss": "tabletop", "iat": now, "exp": now + 60}
            return jwt.encode(claims, "a-different-secret-0123456789-abcdef", algorithm="HS256")
        if r < 0.75:
            claims = {"sub": sub, "iss": "tabletop", "iat": now, "exp": now + 60, "role": "admin"}
            return jwt.encode(claims, self.tokens.settings.secret, algorithm="HS256")
        if r < 0.8:
            party, _ = self.tokens.party_token(sub or "p", "lead", self.pick(self.pools.games))
            return party
        if r < 0.85:
            return jwt.encode({"sub": sub}, None, algorithm="none")  # type: ignore[arg-type]
        return self.text()

    def metadata(self) -> tuple[tuple[str, str], ...]:
        r = self.rng.random()
        if r < 0.08:
            return ()
        token = self.token()
        if r < 0.12:
            value = token  # no scheme
        elif r < 0.16:
            value = f"bearer {token}"
        elif r < 0.2:
            value = f"Basic {token}"
        else:
            value = f"Bearer {token}"
        if not all(32 <= ord(c) < 127 for c in value):  # gRPC sends printable ASCII only
            value = f"Bearer {self.tokens.issue('p')}"
        return (("authorization", value),)

    # ------------------------------------------------------------ requests
    def request(self, descriptor: Descriptor, cls: type[Message], depth: int = 0) -> Message:
        msg = cls()
        for f in descriptor.fields:
            if self.chance(0.25):
                continue  # left unset
            repeated = _is_repeated(f)
            count = self.pick([0, 1, 1, 2, 3, 8, 100]) if repeated else 1
            values = [self._field(f, msg, depth) for _ in range(count)]
            if count > 3:  # many values: keep each small (the request stays sendable)
                values = [v[:300] if isinstance(v, str | bytes) else v for v in values]
            if f.type == FieldDescriptor.TYPE_MESSAGE:
                if f.message_type.GetOptions().map_entry:
                    continue
                target = getattr(msg, f.name)
                for v in values:
                    if repeated:
                        target.add().CopyFrom(v)
                    else:
                        target.CopyFrom(v)
            elif repeated:
                getattr(msg, f.name).extend(values)
            else:
                setattr(msg, f.name, values[0])
        return msg

    def _field(self, f: FieldDescriptor, msg: Message, depth: int) -> Any:
        t = f.type
        if t == FieldDescriptor.TYPE_MESSAGE:
            sub_cls = type(getattr(msg, f.name)) if not _is_repeated(f) else None
            if sub_cls is None:
                sub_cls = type(getattr(msg, f.name).add())
                del getattr(msg, f.name)[-1]
            return self.request(f.message_type, sub_cls, depth + 1)
        if t == FieldDescriptor.TYPE_STRING:
            return self._by_name.get(f.name, self.text)()
        if t == FieldDescriptor.TYPE_BYTES:
            return self._by_name.get(f.name, self.blob)()
        if t == FieldDescriptor.TYPE_BOOL:
            return self.chance(0.5)
        if t in (FieldDescriptor.TYPE_DOUBLE, FieldDescriptor.TYPE_FLOAT):
            return self.double()
        if t == FieldDescriptor.TYPE_ENUM:
            values = [v.number for v in f.enum_type.values]
            return self.pick(values) if self.chance(0.8) else self.rng.randrange(0, 2**20)
        return self.integer(f)


_64BIT = {
    FieldDescriptor.TYPE_INT64,
    FieldDescriptor.TYPE_UINT64,
    FieldDescriptor.TYPE_SINT64,
    FieldDescriptor.TYPE_FIXED64,
    FieldDescriptor.TYPE_SFIXED64,
}
_UNSIGNED = {
    FieldDescriptor.TYPE_UINT32,
    FieldDescriptor.TYPE_UINT64,
    FieldDescriptor.TYPE_FIXED32,
    FieldDescriptor.TYPE_FIXED64,
}


def _is_repeated(field: FieldDescriptor) -> bool:
    is_repeated = getattr(field, "is_repeated", None)
    if is_repeated is not None:
        return bool(is_repeated)
    return field.label == FieldDescriptor.LABEL_REPEATED  # type: ignore[attr-defined]
