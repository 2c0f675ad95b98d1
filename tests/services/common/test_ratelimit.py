"""The limiter's scripts against a real valkey: GCRA rates, leased stream
slots, failing open; and its settings."""

from __future__ import annotations

import pytest

from services.common.errors import ResourceExhausted
from services.common.ratelimit import LimitSettings, Rate, RateLimiter, lease_size
from services.common.servers import free_port


@pytest.fixture
async def limiter(valkey_server):
    rl = RateLimiter.connect(valkey_server.url, LimitSettings(streams=2, stream_lease_s=0.6))
    yield rl
    await rl.close()


async def test_a_rate_allows_its_burst_then_says_when_to_retry(limiter) -> None:
    rate = Rate(5, 10)  # 5 per 10 s: one every 2 s after the burst
    for _ in range(5):
        await limiter.check("r", rate, "alice")
    with pytest.raises(ResourceExhausted) as e:
        await limiter.check("r", rate, "alice")
    assert e.value.reason == "rate_limited"
    assert 0 < e.value.retry_after_s <= 2.0
    assert e.value.metadata["rule"] == "r" and e.value.metadata["limit"] == "5/10s"
    await limiter.check("r", rate, "bob")  # another caller has its own budget
    await limiter.check("other", rate, "alice")  # and another rule


def test_a_lease_is_a_64th_of_the_burst_at_most_8_calls() -> None:
    assert lease_size(Rate(5, 10)) == 1
    assert lease_size(Rate(127, 60)) == 1  # every call of a small rule asks Redis
    assert lease_size(Rate(128, 60)) == 2
    assert lease_size(Rate(1200, 60)) == 8
    assert lease_size(Rate(6000, 60)) == 8


async def _scripts_run(limiter: RateLimiter) -> int:
    """The Lua scripts Redis has run by their digest (the rate checks' GCRA)."""
    stats = await limiter.redis.info("commandstats")
    return int(stats.get("cmdstat_evalsha", {}).get("calls", 0))


async def test_a_large_rate_asks_redis_once_a_lease(limiter) -> None:
    rate = Rate(6400, 60)  # leases of 8
    await limiter.check("r", Rate(1, 60), "warm-up")  # the script loaded
    before = await _scripts_run(limiter)
    for _ in range(80):
        await limiter.check("r", rate, "frank")
    assert await _scripts_run(limiter) - before == 10
    for _ in range(3):  # another caller's calls spend no lease of frank's
        await limiter.check("r", rate, "gina")
    assert await _scripts_run(limiter) - before == 11


async def test_two_replicas_with_leases_admit_the_burst_and_no_more(valkey_server) -> None:
    rate = Rate(1003, 600)  # leases of 8; the last grant is the 3 calls left
    replicas = [RateLimiter.connect(valkey_server.url, LimitSettings()) for _ in range(2)]
    try:
        await replicas[0].check("r", Rate(1, 60), "warm-up")  # the script loaded
        before = await _scripts_run(replicas[0])
        admitted = 0
        refused = [False, False]
        turn = 0
        while not all(refused):  # each replica's calls until it is refused
            if not refused[turn]:
                try:
                    await replicas[turn].check("r", rate, "hal")
                    admitted += 1
                except ResourceExhausted as e:
                    assert e.reason == "rate_limited"
                    refused[turn] = True
            turn = 1 - turn
        assert admitted == 1003  # every grant spent, none beyond the burst
        # 125 grants of 8, one of 3, and each replica's refusal
        assert await _scripts_run(replicas[0]) - before <= 1003 // 8 + 3
    finally:
        for r in replicas:
            await r.close()


async def test_stream_slots_are_held_and_given_back(limiter) -> None:
    async with limiter.stream("carol"), limiter.stream("carol"):
        with pytest.raises(ResourceExhausted) as e:
            async with limiter.stream("carol"):
                pass
        assert e.value.reason == "too_many_streams"
    async with limiter.stream("carol"), limiter.stream("carol"):
        pass


async def test_leases_are_renewed_while_a_stream_is_open(limiter) -> None:
    import asyncio

    async with limiter.stream("dave"), limiter.stream("dave"):
        await asyncio.sleep(1.5)  # longer than the lease: the keeper renewed it
        with pytest.raises(ResourceExhausted):
            async with limiter.stream("dave"):
                pass


async def test_an_unreachable_redis_fails_open() -> None:
    dead = RateLimiter.connect(f"redis://127.0.0.1:{free_port()}/0", LimitSettings(streams=1))
    try:
        for _ in range(10):
            await dead.check("r", Rate(1, 60), "erin")
        async with dead.stream("erin"), dead.stream("erin"):
            pass
    finally:
        await dead.close()


def test_settings_from_the_environment() -> None:
    s = LimitSettings.from_env(
        {
            "TABLETOP_LIMIT_SUBMIT_MOVE": "20/1",
            "TABLETOP_LIMIT_STREAMS": "8",
            "TABLETOP_LIMITS_ENABLED": "0",
            "TABLETOP_LIMIT_EXEMPT_SERVICES": "no",
        }
    )
    assert s.submit_move == Rate(20, 1) and s.streams == 8
    assert not s.enabled and not s.exempt_services
    assert LimitSettings.from_env({}) == LimitSettings()
    for bad in ("fast", "0/60", "10/0", "-1/5"):
        with pytest.raises(ValueError, match="TABLETOP_LIMIT_ENQUEUE"):
            LimitSettings.from_env({"TABLETOP_LIMIT_ENQUEUE": bad})
