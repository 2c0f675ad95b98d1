"""The ``ProjectionCache`` on Redis (or Valkey): one hash per match.

``match:<id>`` holds ``v`` (the version, for the compare-and-set), ``p`` (the
projection: version, sequence, state, awaiting seats, outcome, the last
commit's time and clocks), ``meta`` and
one field ``k:<digest>`` per applied idempotency key. Writes are forward only,
by a Lua script:

* a full write (after a rebuild from the stream, which knows every key)
  applies when the stored version is older or missing;
* an incremental write (after moves) applies only on top of exactly the
  version it was made from (the previous one, or an older one when several
  moves are written at once, with all their keys), so an entry rebuilt from
  nothing never lacks a key.

``put_many`` sends several writes (of any matches) in one call of a script
that makes each of them: one command and one round trip however many (the
keys of one call may live anywhere only on a single Redis, not a cluster).

Redis may lose everything at any time; a missing or stale entry is rebuilt
from the stream by the application.
"""

from __future__ import annotations

import msgspec
import redis.asyncio as redis
from redis.exceptions import NoScriptError, RedisError

from engine_core.types import Outcome
from services.match.model import Clocks, MatchMeta, Projection

_PUT_ONE = """
local cur = redis.call('HGET', key, 'v')
local v = tonumber(ARGV[o + 2])
local ok
if ARGV[o + 1] == 'full' then
  ok = (not cur) or tonumber(cur) < v
else
  ok = cur and tonumber(cur) == tonumber(ARGV[o + 6])
end
if ok then
  redis.call('HSET', key, 'v', ARGV[o + 2], 'p', ARGV[o + 3])
  if ARGV[o + 4] ~= '' then redis.call('HSET', key, 'meta', ARGV[o + 4]) end
  for i = o + 7, o + n, 2 do redis.call('HSET', key, ARGV[i], ARGV[i + 1]) end
end
if cur or ok then
  local ttl = tonumber(ARGV[o + 5])
  if ttl > 0 then redis.call('EXPIRE', key, ttl) end
end
"""
"""One write: of ``key``, arguments ``ARGV[o + 1]`` to ``ARGV[o + n]`` (mode,
version, projection, meta, ttl, base version, then key and value pairs)."""

_PUT = (
    """
local key, o, n = KEYS[1], 0, #ARGV
"""
    + _PUT_ONE
    + """
if ok then return 1 else return 0 end
"""
)

_PUT_MANY = (
    """
local out, at = {}, 1
for k = 1, #KEYS do
  local key, o, n = KEYS[k], at, tonumber(ARGV[at])
  at = at + n + 1
  local ok = false
  do
"""
    + _PUT_ONE.replace("local ok\n", "")
    + """
  end
  out[k] = ok and 1 or 0
end
return out
"""
)
"""Several writes in one call: ARGV holds, per key, its count of arguments
and then those arguments; the answer is one 1 or 0 per key."""


class _Stored(msgspec.Struct, array_like=True, frozen=True):
    version: int
    seq: int
    state: bytes
    awaiting: tuple[int, ...]
    outcome: Outcome | None
    time_ms: int = 0
    clocks: Clocks | None = None


_enc = msgspec.msgpack.Encoder()
_stored = msgspec.msgpack.Decoder(_Stored)
_meta = msgspec.msgpack.Decoder(MatchMeta)


class RedisProjectionCache:
    def __init__(self, client: redis.Redis, *, prefix: str = "match:", ttl_s: int = 86400) -> None:
        self.client = client
        self.prefix = prefix
        self.ttl_s = ttl_s
        self._put = client.register_script(_PUT)
        self._many_sha = client.register_script(_PUT_MANY).sha
        self._loaded = False

    def key(self, match_id: str) -> str:
        return f"{self.prefix}{match_id}"

    async def get(self, match_id: str) -> Projection | None:
        """The cached projection, or ``None`` (also when Redis is down)."""
        try:
            fields = await self.client.hgetall(self.key(match_id))
        except RedisError:
            return None
        if not fields or b"p" not in fields or b"meta" not in fields:
            return None
        try:
            stored = _stored.decode(fields[b"p"])
            meta = _meta.decode(fields[b"meta"])
        except msgspec.DecodeError:
            return None
        keys = {k[2:].decode(): int(v) for k, v in fields.items() if k.startswith(b"k:")}
        return Projection(
            meta=meta,
            version=stored.version,
            seq=stored.seq,
            state=stored.state,
            awaiting=stored.awaiting,
            outcome=stored.outcome,
            keys=keys,
            time_ms=stored.time_ms,
            clocks=stored.clocks,
        )

    async def put(
        self,
        projection: Projection,
        new_keys: dict[str, int] | None = None,
        *,
        base: int | None = None,
    ) -> bool:
        """Store forward only. ``new_keys=None``: a full write with every key
        of the projection; else an increment from version ``base`` (default:
        the previous one) adding those keys."""
        try:
            return bool(await self._put(**self._write(projection, new_keys, base)))
        except RedisError:
            return False

    async def put_many(
        self, writes: list[tuple[Projection, dict[str, int] | None, int | None]]
    ) -> list[bool] | None:
        """Several ``put(projection, new_keys, base=base)`` in one script
        call (one command, one round trip however many): whether each
        applied, or ``None`` when Redis did not answer."""
        # EVALSHA straight away: redis-py's script objects would first ask
        # SCRIPT EXISTS in a round trip of its own, every call. The script
        # is loaded once (and again after NOSCRIPT: a restarted or flushed
        # Redis); the writes only move forward, so running them twice is
        # harmless.
        keys: list[str] = []
        args: list[bytes | str | int] = []
        for projection, new_keys, base in writes:
            w = self._write(projection, new_keys, base)
            keys += w["keys"]
            args.append(len(w["args"]))
            args += w["args"]
        try:
            for attempt in (0, 1):
                if not self._loaded:
                    await self.client.script_load(_PUT_MANY)
                    self._loaded = True
                try:
                    applied = await self.client.evalsha(self._many_sha, len(keys), *keys, *args)
                    return [bool(r) for r in applied]
                except NoScriptError:
                    self._loaded = False
                    if attempt:
                        raise
        except RedisError:
            return None
        return None  # not reached

    def _write(
        self, projection: Projection, new_keys: dict[str, int] | None, base: int | None
    ) -> dict[str, list[bytes | str | int]]:
        full = new_keys is None
        keys = projection.keys if full else new_keys
        stored = _Stored(
            projection.version,
            projection.seq,
            projection.state,
            projection.awaiting,
            projection.outcome,
            projection.time_ms,
            projection.clocks,
        )
        args: list[bytes | str | int] = [
            "full" if full else "inc",
            projection.version,
            _enc.encode(stored),
            _enc.encode(projection.meta) if full else b"",
            self.ttl_s,
            projection.version - 1 if base is None else base,
        ]
        for k, v in (keys or {}).items():
            args += [f"k:{k}", v]
        return {"keys": [self.key(projection.meta.match_id)], "args": args}
