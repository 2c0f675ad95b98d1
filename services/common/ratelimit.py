"""Per-caller abuse limits, shared by every replica through Redis.

A caller is the token's subject, or ``peer:<address>`` for a call without a
valid token (``GuestLogin`` is always counted by peer address). Service tokens
(``role: "service"``) and bot subjects (``bot:...``) are exempt: the bot worker,
matchmaking and the rules client play and create at machine speed on purpose.

A service calling for a client who has no token yet (the gateway's
``GuestLogin`` for a browser) names that client's address in
``tabletop-client-address`` (``CLIENT_ADDRESS_HEADER``) beside its service
token: the call is then counted as ``peer:<that address>``, so every browser
behind one gateway has a budget of its own, not one shared by all. The
header counts only with a valid service token; from anyone else it is
ignored (a client cannot choose the address it is counted under).

* **Rates** (``GuestLogin``, ``CreateMatch``, ``SubmitMove``, ``Enqueue``): a
  GCRA (generic cell rate algorithm) in a Lua script: one key per rule and
  caller holding the theoretical arrival time, so ``N per S seconds`` allows
  a burst of N and then one call every S/N seconds, across replicas (the
  script reads Redis's clock, not the replica's). A replica takes a caller's
  calls from Redis a few at a time, as a lease (``lease_size``: 1/64 of the
  burst, at most 8; 1, so every call asks Redis, for a rule of fewer than
  128 calls): the script grants up to that many at once, as many as the
  caller's budget holds now, and moves the arrival time past all of them;
  the replica lets the caller's next calls through on what is left, without
  asking Redis. A grant is spent the same later as now (the arrival time
  already counts it), so the limit holds across replicas; a caller whose
  calls go to several replicas may be refused up to ``lease_size - 1`` calls
  early per other replica holding a lease of its. A call costs a Redis round
  trip (about 0.1 ms of a replica's CPU) once per lease, not once per call.
* **Open streams** (``WatchMatch``, ``ReplayMatch``, ``PlayMatch``,
  ``PlaySession``, ``WatchTicket``): a sorted
  set per caller of the streams it holds, each with a lease renewed every few
  seconds by the replica serving it; a replica that dies leaks nothing for
  longer than the lease.

The moves of a ``PlayMatch`` or ``PlaySession`` stream are counted by its
handler (``submit_move_rate``), each as one ``SubmitMove`` call under the
same key; a ``PlaySession``'s creates likewise as ``CreateMatch`` calls
(``create_match_rate``).

Over a limit: ``RESOURCE_EXHAUSTED`` with reason ``rate_limited`` (metadata
``rule``, ``limit``) or ``too_many_streams`` (``limit``), and a
``google.rpc.RetryInfo`` saying when a call would pass.

Redis down or slow (over ``redis_timeout_s``): the limiter **fails open**: the
call goes through and a warning is logged (at most every 10 s); for
``skip_after_failure_s`` after a failure it does not even ask Redis. Refusing
play because the limiter's store is down would turn a cache outage into a
game outage.

Settings (``LimitSettings.from_env``), each rule ``N/S`` (N calls per S seconds):

| variable | default | counted per |
|---|---|---|
| ``TABLETOP_LIMITS_ENABLED`` | 1 | |
| ``TABLETOP_LIMIT_GUEST_LOGIN`` | 300/60 | peer address |
| ``TABLETOP_LIMIT_CREATE_MATCH`` | 1200/60 | subject (peer without a token) |
| ``TABLETOP_LIMIT_SUBMIT_MOVE`` | 6000/60 | subject |
| ``TABLETOP_LIMIT_ENQUEUE`` | 120/60 | subject |
| ``TABLETOP_LIMIT_STREAMS`` | 64 | open streams per subject (or peer) |
| ``TABLETOP_LIMIT_EXEMPT_SERVICES`` | 1 | 0: service and bot tokens are limited too |
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import time
import uuid
from collections import OrderedDict
from collections.abc import AsyncIterator, Awaitable, Callable, Mapping
from dataclasses import dataclass, field, fields, replace
from typing import Any

import grpc
import redis.asyncio as redis
import structlog
from prometheus_client import Counter

from services.common.auth import Principal, Tokens, is_bot
from services.common.errors import ResourceExhausted, ServiceError
from services.common.logging import responses, wrap_handler

__all__ = [
    "CLIENT_ADDRESS_HEADER",
    "LimitSettings",
    "MessageRate",
    "Rate",
    "RateLimitInterceptor",
    "RateLimiter",
    "create_match_rate",
    "match_rules",
    "matchmaking_rules",
    "submit_move_rate",
]

log = structlog.get_logger("tabletop.ratelimit")

CLIENT_ADDRESS_HEADER = "tabletop-client-address"
"""Metadata a service sends with its token: the address of the client it
calls for (see the module)."""
MAX_CLIENT_ADDRESS = 64

LIMITED = Counter("tabletop_rate_limited_total", "Calls refused by a per-caller limit", ["rule"])
FAIL_OPEN = Counter(
    "tabletop_rate_limiter_fail_open_total", "Calls let through because Redis did not answer"
)


@dataclass(frozen=True, slots=True)
class Rate:
    """``count`` calls per ``period_s`` seconds (a burst of ``count``)."""

    count: int
    period_s: float

    @classmethod
    def parse(cls, text: str) -> Rate:
        count, _, period = text.partition("/")
        rate = cls(int(count), float(period or 1))
        if rate.count <= 0 or rate.period_s <= 0:
            raise ValueError(text)
        return rate

    def __str__(self) -> str:
        return f"{self.count}/{self.period_s:g}s"


@dataclass(frozen=True, slots=True)
class LimitSettings:
    enabled: bool = True
    guest_login: Rate = Rate(300, 60)
    create_match: Rate = Rate(1200, 60)
    submit_move: Rate = Rate(6000, 60)
    enqueue: Rate = Rate(120, 60)
    streams: int = 64
    exempt_services: bool = True
    stream_lease_s: float = 30.0
    redis_timeout_s: float = 0.25
    skip_after_failure_s: float = 1.0
    prefix: str = "rl"

    @classmethod
    def from_env(cls, env: Mapping[str, str] | None = None) -> LimitSettings:
        env = os.environ if env is None else env
        values: dict[str, Any] = {}
        for f in fields(cls):
            name = (
                "TABLETOP_LIMITS_ENABLED"
                if f.name == "enabled"
                else f"TABLETOP_LIMIT_{f.name.upper()}"
            )
            raw = env.get(name, "").strip()
            if not raw:
                continue
            default = getattr(cls(), f.name)
            try:
                if isinstance(default, bool):
                    values[f.name] = _flag(raw)
                elif isinstance(default, Rate):
                    values[f.name] = Rate.parse(raw)
                else:
                    values[f.name] = type(default)(raw)
            except ValueError:
                raise ValueError(f"{name}={raw!r} is not valid (e.g. 60/60)") from None
        return cls(**values)

    def with_(self, **changes: Any) -> LimitSettings:
        return replace(self, **changes)


def _flag(raw: str) -> bool:
    value = raw.lower()
    if value in ("1", "true", "yes", "on"):
        return True
    if value in ("0", "false", "no", "off"):
        return False
    raise ValueError(raw)


# KEYS[1]: the rule's key for one caller. ARGV: emission interval ms (period /
# count), tolerance ms (period), calls wanted (>= 1). Answers {granted, 0}
# (1 <= granted <= wanted: as many as fit now) or {0, retry after ms}. The
# first call is admitted on the same test as a lone call's GCRA.
_GCRA = """
local t = redis.call('TIME')
local now = t[1] * 1000 + math.floor(t[2] / 1000)
local emission = tonumber(ARGV[1])
local tolerance = tonumber(ARGV[2])
local wanted = tonumber(ARGV[3])
local tat = tonumber(redis.call('GET', KEYS[1]) or now)
if tat < now then tat = now end
local over = tat + emission - now - tolerance
if over > 0 then return {0, math.ceil(over)} end
local granted = math.min(wanted, 1 + math.floor(-over / emission))
local new_tat = tat + granted * emission
redis.call('SET', KEYS[1], new_tat, 'PX', math.ceil(new_tat - now) + 1000)
return {granted, 0}
"""

LEASE_MAX = 8
"""The most calls of one rule and caller a replica takes from Redis at once."""
LEASES_KEPT = 16384
"""The callers whose unspent leases a replica keeps (the least recently
granted beyond are forgotten: their calls ask Redis again)."""


def lease_size(rate: Rate) -> int:
    """How many calls of ``rate`` a replica asks Redis for at once: 1/64 of
    the burst, at most ``LEASE_MAX``, at least 1."""
    return max(1, min(LEASE_MAX, rate.count // 64))


# KEYS[1]: the caller's open streams. ARGV: stream id, max, lease ms.
# Answers {1, 0} or {0, ms until the oldest lease ends}.
_OPEN = """
local t = redis.call('TIME')
local now = t[1] * 1000 + math.floor(t[2] / 1000)
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now)
if redis.call('ZCARD', KEYS[1]) >= tonumber(ARGV[2]) then
  local oldest = redis.call('ZRANGE', KEYS[1], 0, 0, 'WITHSCORES')
  return {0, math.max(1, tonumber(oldest[2]) - now)}
end
redis.call('ZADD', KEYS[1], now + tonumber(ARGV[3]), ARGV[1])
redis.call('PEXPIRE', KEYS[1], ARGV[3])
return {1, 0}
"""

# KEYS: callers' stream sets; ARGV: lease ms, then one stream id per key.
_RENEW = """
local t = redis.call('TIME')
local now = t[1] * 1000 + math.floor(t[2] / 1000)
for i, key in ipairs(KEYS) do
  redis.call('ZADD', key, 'XX', now + tonumber(ARGV[1]), ARGV[i + 1])
  redis.call('PEXPIRE', key, ARGV[1])
end
return #KEYS
"""


class RateLimiter:
    """The limits of one service over one Redis (``client`` should have short
    timeouts: ``RateLimiter.connect`` makes one)."""

    def __init__(self, client: redis.Redis, settings: LimitSettings) -> None:
        self.redis = client
        self.settings = settings
        self._gcra = client.register_script(_GCRA)
        self._open = client.register_script(_OPEN)
        self._renew = client.register_script(_RENEW)
        self._streams: dict[str, str] = {}  # stream id -> its caller's key
        self._leases: OrderedDict[str, int] = OrderedDict()
        """Rate key -> the calls granted by Redis and not spent yet."""
        self._keeper: asyncio.Task[None] | None = None
        self._skip_until = 0.0
        self._warned_at = 0.0
        self._own = False

    @classmethod
    def connect(cls, url: str, settings: LimitSettings) -> RateLimiter:
        t = settings.redis_timeout_s
        limiter = cls(redis.from_url(url, socket_timeout=t, socket_connect_timeout=t), settings)
        limiter._own = True
        return limiter

    async def close(self) -> None:
        if self._keeper is not None:
            self._keeper.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._keeper
        if self._own:
            await self.redis.aclose()

    # ---------------------------------------------------------- fail open
    def _available(self) -> bool:
        return time.monotonic() >= self._skip_until

    def _failed(self, what: str, error: BaseException) -> None:
        FAIL_OPEN.inc()
        now = time.monotonic()
        self._skip_until = now + self.settings.skip_after_failure_s
        if now - self._warned_at >= 10.0:
            self._warned_at = now
            log.warning("rate_limiter_fail_open", what=what, error=repr(error)[:200])

    # -------------------------------------------------------------- rates
    async def check(self, rule: str, rate: Rate, caller: str) -> None:
        """Count one call of ``caller`` under ``rule``; ``ResourceExhausted``
        when it is over ``rate``. A call spends the caller's lease if this
        replica holds one, else asks Redis for a new one (see the module)."""
        key = f"{self.settings.prefix}:{rule}:{caller}"
        leases = self._leases
        left = leases.get(key)
        if left:
            if left == 1:
                del leases[key]
            else:
                leases[key] = left - 1
            return
        if not self._available():
            FAIL_OPEN.inc()
            return
        emission_ms = rate.period_s * 1000 / rate.count
        try:
            granted, retry_ms = await self._gcra(
                keys=[key], args=[emission_ms, rate.period_s * 1000, lease_size(rate)]
            )
        except Exception as e:  # any Redis trouble: let the call through
            self._failed(rule, e)
            return
        granted = int(granted)
        if granted > 1:  # this call takes one; the rest wait for the next calls
            leases[key] = leases.pop(key, 0) + granted - 1
            while len(leases) > LEASES_KEPT:
                leases.popitem(last=False)
        if granted < 1:
            LIMITED.labels(rule).inc()
            raise ResourceExhausted(
                "rate_limited",
                f"too many {rule} calls: at most {rate}; retry later",
                retry_after_s=int(retry_ms) / 1000,
                rule=rule,
                limit=str(rate),
            )

    # ------------------------------------------------------------ streams
    @contextlib.asynccontextmanager
    async def stream(self, caller: str) -> AsyncIterator[None]:
        """Hold one of ``caller``'s stream slots while the body runs."""
        key = f"{self.settings.prefix}:streams:{caller}"
        stream_id = uuid.uuid4().hex
        held = False
        if self._available():
            lease_ms = int(self.settings.stream_lease_s * 1000)
            try:
                ok, retry_ms = await self._open(
                    keys=[key], args=[stream_id, self.settings.streams, lease_ms]
                )
            except Exception as e:
                self._failed("streams", e)
            else:
                if int(ok) != 1:
                    LIMITED.labels("streams").inc()
                    raise ResourceExhausted(
                        "too_many_streams",
                        f"at most {self.settings.streams} open streams per caller",
                        retry_after_s=min(int(retry_ms), 5000) / 1000,
                        limit=str(self.settings.streams),
                    )
                held = True
                self._streams[stream_id] = key
                self._keep()
        else:
            FAIL_OPEN.inc()
        try:
            yield
        finally:
            if held:
                self._streams.pop(stream_id, None)
                with contextlib.suppress(Exception):  # else its lease runs out
                    await self.redis.zrem(key, stream_id)

    def _keep(self) -> None:
        if self._keeper is None or self._keeper.done():
            self._keeper = asyncio.ensure_future(self._keep_leases())

    async def _keep_leases(self) -> None:
        """Renew the lease of every stream this process holds, all in one script."""
        every = self.settings.stream_lease_s / 3
        while self._streams:
            await asyncio.sleep(every)
            held = list(self._streams.items())
            if not held:
                continue
            try:
                await self._renew(
                    keys=[k for _, k in held],
                    args=[int(self.settings.stream_lease_s * 1000), *(s for s, _ in held)],
                )
            except Exception as e:
                self._failed("stream_leases", e)


# ------------------------------------------------------------- interceptor
@dataclass(frozen=True, slots=True)
class _Rule:
    name: str
    rate: Rate | None = None  # None: a stream slot
    by_peer: bool = False


def match_rules(s: LimitSettings) -> dict[str, _Rule]:
    return {
        "/tabletop.match.v1.AuthService/GuestLogin": _Rule("guest_login", s.guest_login, True),
        "/tabletop.match.v1.MatchService/CreateMatch": _Rule("create_match", s.create_match),
        "/tabletop.match.v1.MatchService/SubmitMove": _Rule("submit_move", s.submit_move),
        "/tabletop.match.v1.MatchService/WatchMatch": _Rule("streams"),
        "/tabletop.match.v1.MatchService/ReplayMatch": _Rule("streams"),
        "/tabletop.match.v1.MatchService/PlayMatch": _Rule("streams"),
        "/tabletop.match.v1.MatchService/PlaySession": _Rule("streams"),
    }


@dataclass(frozen=True, slots=True)
class MessageRate:
    """A rate the handler of a stream counts itself, once per message (a
    ``PlayMatch`` move counts as one ``SubmitMove`` call of the same caller,
    on the same key): ``await check(principal)`` raises ``ResourceExhausted``
    over the rate; exempt callers as for the interceptor."""

    limiter: RateLimiter
    rule: str
    rate: Rate

    async def check(self, principal: Principal) -> None:
        settings = self.limiter.settings
        if not settings.enabled:
            return
        if settings.exempt_services and (principal.is_service or is_bot(principal.subject)):
            return
        await self.limiter.check(self.rule, self.rate, f"sub:{principal.subject}")


def submit_move_rate(limiter: RateLimiter) -> MessageRate:
    """The ``SubmitMove`` rule, for the moves of a ``PlayMatch`` or
    ``PlaySession`` stream."""
    return MessageRate(limiter, "submit_move", limiter.settings.submit_move)


def create_match_rate(limiter: RateLimiter) -> MessageRate:
    """The ``CreateMatch`` rule, for the creates of a ``PlaySession`` stream."""
    return MessageRate(limiter, "create_match", limiter.settings.create_match)


def matchmaking_rules(s: LimitSettings) -> dict[str, _Rule]:
    return {
        "/tabletop.matchmaking.v1.MatchmakingService/Enqueue": _Rule("enqueue", s.enqueue),
        "/tabletop.matchmaking.v1.MatchmakingService/WatchTicket": _Rule("streams"),
    }


def _client_address(metadata: Any) -> str | None:
    """The ``tabletop-client-address`` of a call's metadata (clipped), if any."""
    for key, value in metadata or ():
        if key == CLIENT_ADDRESS_HEADER:
            text = value if isinstance(value, str) else value.decode("utf-8", "replace")
            return text.strip()[:MAX_CLIENT_ADDRESS] or None
    return None


def _peer_host(peer: str) -> str:
    """``ipv4:1.2.3.4:5678`` -> ``1.2.3.4``; ``ipv6:[::1]:5678`` -> ``[::1]``."""
    _, _, rest = peer.partition(":")
    host, _, _port = rest.rpartition(":")
    return host or peer or "unknown"


@dataclass
class RateLimitInterceptor(grpc.aio.ServerInterceptor):
    """Applies ``rules`` (full method name -> rule) with ``limiter``. A guard
    of the server's ``RpcInterceptor`` (``guards=``), whose error mapping makes
    a refusal a rich status; as an interceptor of its own it goes after an
    ``RpcInterceptor`` in the server's list, for the same reason."""

    limiter: RateLimiter
    tokens: Tokens
    rules: dict[str, _Rule] = field(default_factory=dict)
    _wrapped: dict[str, tuple[Any, Any]] = field(default_factory=dict, init=False, repr=False)

    def _caller(self, rule: _Rule, metadata: Any, context: Any) -> str | None:
        """The key a call is counted under, or None if it is exempt."""
        client = _client_address(metadata)
        if not rule.by_peer or client is not None:
            try:
                principal = self.tokens.from_metadata(metadata)
            except ServiceError:
                principal = None  # counted by address; the handler refuses it
            if principal is not None and principal.is_service and client is not None:
                return f"peer:{client}"  # the client a service calls for
            if principal is not None and not rule.by_peer:
                exempt = principal.is_service or is_bot(principal.subject)
                if exempt and self.limiter.settings.exempt_services:
                    return None
                return f"sub:{principal.subject}"
        return f"peer:{_peer_host(context.peer() or '')}"

    def _rule(self, method: str) -> _Rule | None:
        rule = self.rules.get(method)
        return rule if rule is not None and self.limiter.settings.enabled else None

    def unary_check(self, method: str) -> Callable[[Any, Any], Awaitable[None]] | None:
        """The check before a unary call of ``method`` (None: not limited)."""
        rule = self._rule(method)
        if rule is None or rule.rate is None:
            return None
        limiter, caller_of, rate = self.limiter, self._caller, rule.rate

        async def check(request: Any, context: Any) -> None:
            caller = caller_of(rule, context.invocation_metadata(), context)
            if caller is not None:
                await limiter.check(rule.name, rate, caller)

        return check

    def stream_wrapper(
        self, method: str
    ) -> Callable[[Callable[..., Any]], Callable[..., Any]] | None:
        """The wrapper of a response stream of ``method`` (None: not limited)."""
        rule = self._rule(method)
        if rule is None:
            return None
        limiter, caller_of = self.limiter, self._caller

        def wrap(behavior: Callable[..., Any]) -> Callable[..., Any]:
            async def stream(request: Any, context: Any) -> AsyncIterator[Any]:
                caller = caller_of(rule, context.invocation_metadata(), context)
                if caller is None:
                    async for item in responses(behavior(request, context)):
                        yield item
                    return
                if rule.rate is not None:
                    await limiter.check(rule.name, rule.rate, caller)
                    async for item in responses(behavior(request, context)):
                        yield item
                    return
                async with limiter.stream(caller):
                    async for item in responses(behavior(request, context)):
                        yield item

            return stream

        return wrap

    async def intercept_service(
        self,
        continuation: Callable[[grpc.HandlerCallDetails], Awaitable[grpc.RpcMethodHandler]],
        handler_call_details: grpc.HandlerCallDetails,
    ) -> grpc.RpcMethodHandler:
        handler = await continuation(handler_call_details)
        method = handler_call_details.method
        if handler is None or self._rule(method) is None:
            return handler
        cached = self._wrapped.get(method)
        if cached is not None and cached[0] is handler:
            return cached[1]  # wrapped once per method (the caller is read per call)
        check, wrap = self.unary_check(method), self.stream_wrapper(method)

        def wrapper(behavior: Callable[..., Any], streaming: bool) -> Callable[..., Any]:
            if streaming:
                assert wrap is not None
                return wrap(behavior)
            if check is None:
                return behavior

            async def unary(request: Any, context: Any) -> Any:
                await check(request, context)
                return await behavior(request, context)

            return unary

        wrapped = wrap_handler(handler, wrapper)
        self._wrapped[method] = (handler, wrapped)
        return wrapped
