"""The Redis projection is written forward only."""

from __future__ import annotations

import redis.asyncio as redis

from services.match.cache import RedisProjectionCache
from services.match.model import MatchMeta, MatchOptions, Projection


def projection(version: int, keys: dict[str, int] | None = None) -> Projection:
    meta = MatchMeta(
        match_id="m1",
        game="tic_tac_toe",
        players=("a", "b"),
        options="",
        match_options=MatchOptions(),
        rules_version="1",
        created_ms=0,
    )
    return Projection(
        meta=meta,
        version=version,
        seq=version + 10,
        state=f"state{version}".encode(),
        awaiting=(version % 2,),
        outcome=None,
        keys=keys or {},
    )


async def test_writes_go_forward_only(valkey_server) -> None:
    client = redis.from_url(valkey_server.url)
    cache = RedisProjectionCache(client)
    try:
        assert await cache.get("m1") is None
        # an increment on nothing is refused: a rebuilt entry must know every key
        assert not await cache.put(projection(1), {"k1": 11})
        assert await cache.put(projection(1, {"k1": 11}))
        assert not await cache.put(projection(1, {"k1": 11}))  # same version
        assert await cache.put(projection(2), {"k2": 12})
        assert not await cache.put(projection(4), {"k4": 14})  # a gap
        assert not await cache.put(projection(1))  # older, full
        got = await cache.get("m1")
        assert got == projection(2, {"k1": 11, "k2": 12})
        assert await cache.put(projection(5, {"k1": 11, "k2": 12, "k5": 15}))
        assert (await cache.get("m1")).version == 5
    finally:
        await client.aclose()


async def test_a_cache_that_is_down_is_a_miss(valkey_server) -> None:
    client = redis.from_url(valkey_server.url, socket_timeout=0.5, socket_connect_timeout=0.5)
    cache = RedisProjectionCache(client)
    valkey_server.stop()
    try:
        assert await cache.get("m1") is None
        assert not await cache.put(projection(1, {}))
    finally:
        await client.aclose()
