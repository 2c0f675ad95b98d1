"""The Redis projection is written forward only."""

from __future__ import annotations

import asyncio

import msgspec
import redis.asyncio as redis

from services.match.cache import RedisProjectionCache
from services.match.model import MatchMeta, MatchOptions, Projection
from services.match.writebehind import WriteBehind


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


async def test_several_writes_go_in_one_pipeline_and_an_increment_may_span_versions(
    valkey_server,
) -> None:
    client = redis.from_url(valkey_server.url)
    cache = RedisProjectionCache(client)
    try:
        assert await cache.put_many([(projection(1, {"k1": 11}), None, None)]) == [True]
        # moves 2 and 3 written at once: an increment on version 1 with both keys
        got = await cache.put_many(
            [(projection(3), {"k2": 12, "k3": 13}, 1), (projection(5), {"k5": 15}, 3)]
        )
        assert got == [True, True]  # in order: the second lands on the first
        everything = {"k1": 11, "k2": 12, "k3": 13, "k5": 15}
        assert await cache.get("m1") == projection(5, everything)
        assert await cache.put_many([(projection(6), {"k6": 16}, 4)]) == [False]  # not at 4
        assert await cache.get("m1") == projection(5, everything)
    finally:
        await client.aclose()


async def test_a_pipeline_of_writes_is_one_round_trip_and_survives_a_script_flush(
    valkey_server,
) -> None:
    """The pipelined writes go as EVALSHA with no SCRIPT EXISTS first; a
    Redis that lost its scripts (restarted, flushed) gets the script again."""
    client = redis.from_url(valkey_server.url)
    cache = RedisProjectionCache(client)
    try:
        assert await cache.put_many([(projection(1, {"k1": 11}), None, None)]) == [True]
        before = (await client.info("commandstats")).get("cmdstat_script|exists")
        assert await cache.put_many([(projection(2), {"k2": 12}, 1)]) == [True]
        assert (await client.info("commandstats")).get("cmdstat_script|exists") == before
        await client.script_flush()
        assert await cache.put_many([(projection(3), {"k3": 13}, 2)]) == [True]
        assert await cache.get("m1") == projection(3, {"k1": 11, "k2": 12, "k3": 13})
    finally:
        await client.aclose()


async def test_the_write_behind_coalesces_a_hot_match_and_ends_current(valkey_server) -> None:
    client = redis.from_url(valkey_server.url)
    cache = RedisProjectionCache(client)
    hot: dict[str, Projection] = {}
    writer = WriteBehind(cache, hot.get, interval_s=0.05)
    calls = []
    put_many = cache.put_many

    async def counted(writes):
        calls.append(len(writes))
        return await put_many(writes)

    cache.put_many = counted  # count the round trips (the writes are real)
    try:
        hot["m1"] = projection(0)
        writer.full(hot["m1"])
        keys: dict[str, int] = {}
        for v in range(1, 6):
            keys[f"k{v}"] = 10 + v
            hot["m1"] = projection(v, dict(keys))
            writer.forward(hot["m1"], {f"k{v}": 10 + v})
        await writer.flush()
        assert calls == [1]  # six versions, one write
        assert await cache.get("m1") == projection(5, keys)

        # Redis loses the entry: the next increment is refused, the whole
        # latest projection is written instead
        await client.flushall()
        keys["k6"] = 16
        hot["m1"] = projection(6, dict(keys))
        writer.forward(hot["m1"], {"k6": 16})
        await writer.flush()
        assert await cache.get("m1") == projection(6, keys)
    finally:
        await writer.close()
        await client.aclose()


async def test_the_write_behind_writes_a_full_batch_before_its_window_ends(valkey_server) -> None:
    client = redis.from_url(valkey_server.url)
    cache = RedisProjectionCache(client)
    hot: dict[str, Projection] = {}
    writer = WriteBehind(cache, hot.get, interval_s=60.0, max_batch=3)
    try:
        ids = [f"batch{i}" for i in range(3)]
        for match_id in ids[:2]:
            writer.full(renamed(projection(1), match_id))
        await asyncio.sleep(0)  # the writer waits for its window
        assert len(writer) == 2
        writer.full(renamed(projection(1), ids[2]))  # the batch is full: written now
        deadline = asyncio.get_running_loop().time() + 5
        while [await cache.get(i) for i in ids].count(None):
            assert asyncio.get_running_loop().time() < deadline, "not written"
            await asyncio.sleep(0.01)
        assert len(writer) == 0
    finally:
        await writer.close()
        await client.aclose()


def renamed(p: Projection, match_id: str) -> Projection:
    return msgspec.structs.replace(p, meta=msgspec.structs.replace(p.meta, match_id=match_id))


async def test_one_call_writes_several_matches_each_forward_only(valkey_server) -> None:
    client = redis.from_url(valkey_server.url)
    cache = RedisProjectionCache(client)
    try:
        many = {f"key{i}": i for i in range(5000)}  # a long match: 10,000 arguments
        a, b, c = (renamed(projection(3, many), "pa"), renamed(projection(1), "pb"), "pc")
        assert await cache.put_many([(a, None, None), (b, None, None)]) == [True, True]
        writes = [
            (renamed(projection(4), "pa"), {"k4": 4}, 3),  # on top of 3: applies
            (renamed(projection(5), "pb"), {"k5": 5}, 4),  # pb is at 1, not 4: refused
            (renamed(projection(2), c), None, None),  # a new entry
            (renamed(projection(0), "pb"), None, None),  # older than pb's: refused
        ]
        assert await cache.put_many(writes) == [True, False, True, False]
        assert await cache.get("pa") == renamed(projection(4, {**many, "k4": 4}), "pa")
        assert await cache.get("pb") == b
        assert (await cache.get(c)).version == 2
    finally:
        await client.aclose()
