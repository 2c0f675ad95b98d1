"""Per-caller limits shared by two replicas through Redis: one flooding client
is throttled (RESOURCE_EXHAUSTED, a reason, RetryInfo) while others play on;
service tokens are exempt; Redis down fails open."""

from __future__ import annotations

import asyncio

import grpc
import httpx
import pytest

from services.common.auth import bearer_metadata
from services.common.errors import error_info, retry_info
from services.common.ratelimit import CLIENT_ADDRESS_HEADER, LimitSettings, Rate
from services.gateway.server import GatewayServer
from services.gateway.settings import GatewaySettings
from tabletop.match.v1 import match_pb2, match_pb2_grpc

from .conftest import stream_commits

LIMITS = LimitSettings(
    guest_login=Rate(3, 60),
    create_match=Rate(4, 60),
    submit_move=Rate(10, 60),
    streams=2,
)


@pytest.fixture
async def replicas(start_service):
    a = await start_service(limits=LIMITS)
    b = await start_service(limits=LIMITS)
    return a, b


def _move(cell: int) -> str:
    return f'{{"type":"place_mark","cell":{cell}}}'


async def _outcome(call) -> tuple[grpc.StatusCode, str]:
    try:
        await call
    except grpc.aio.AioRpcError as e:
        info = error_info(e)
        return e.code(), info.reason if info else ""
    return grpc.StatusCode.OK, ""


async def test_one_flooding_client_is_throttled_while_others_play_on(replicas, settings) -> None:
    a, b = replicas
    mallory_a, mallory_b = a.player("mallory"), b.player("mallory")
    target = await mallory_a.create("tic_tac_toe", ["mallory", "victim"])
    # mallory floods SubmitMove through both replicas: 30 calls, alternating
    flood = [
        _outcome((mallory_a if i % 2 else mallory_b).submit(target, _move(i % 9)))
        for i in range(30)
    ]
    alice_a, bob_b = a.player("alice"), b.player("bob")
    match_id = await alice_a.create("tic_tac_toe", ["alice", "bob"])
    results = await asyncio.gather(*flood)
    throttled = [r for r in results if r[0] == grpc.StatusCode.RESOURCE_EXHAUSTED]
    answered = [r for r in results if r[0] != grpc.StatusCode.RESOURCE_EXHAUSTED]
    # the budget of 10 is shared by the replicas: not 10 each
    assert len(answered) == 10, results
    assert {r[1] for r in throttled} == {"rate_limited"}
    # alice and bob play a whole game, through both replicas
    for player, cell in ((alice_a, 0), (bob_b, 3), (alice_a, 1), (bob_b, 4), (alice_a, 2)):
        reply = await player.submit(match_id, _move(cell))
    assert reply.status == match_pb2.MATCH_STATUS_FINISHED
    # the refusal says when to come back
    with pytest.raises(grpc.aio.AioRpcError) as e:
        await mallory_b.submit(target, _move(5))
    assert e.value.code() == grpc.StatusCode.RESOURCE_EXHAUSTED
    info, retry = error_info(e.value), retry_info(e.value)
    assert info.reason == "rate_limited" and info.metadata["rule"] == "submit_move"
    assert retry is not None and 0 < retry.retry_delay.ToMilliseconds() <= 6000
    # throttled calls were never decided: nothing was appended for them
    commits = await stream_commits(settings.nats_url, target)
    assert len(commits) <= 1 + 10


async def test_service_tokens_are_exempt(replicas) -> None:
    a, b = replicas
    svc_a, svc_b = a.service(), b.service()
    for i in range(10):  # the player limit is 4
        await (svc_a if i % 2 else svc_b).create("tic_tac_toe", ["bot:x-1", "bot:x-2"])
    player = a.player("carol")
    codes = [await _outcome(player.create("tic_tac_toe", ["carol", "dan"])) for _ in range(6)]
    assert [c for c, _ in codes].count(grpc.StatusCode.OK) == 4
    assert codes[-1] == (grpc.StatusCode.RESOURCE_EXHAUSTED, "rate_limited")


async def test_guest_logins_are_limited_per_address(replicas) -> None:
    a, b = replicas
    stubs = [match_pb2_grpc.AuthServiceStub(r.channel) for r in (a, b)]
    codes = [
        await _outcome(stubs[i % 2].GuestLogin(match_pb2.GuestLoginRequest())) for i in range(5)
    ]
    assert [c for c, _ in codes] == [grpc.StatusCode.OK] * 3 + [
        grpc.StatusCode.RESOURCE_EXHAUSTED
    ] * 2


async def test_open_streams_are_limited_across_replicas(replicas) -> None:
    a, b = replicas
    owner = a.player("erin")
    match_id = await owner.create("tic_tac_toe", ["erin", "frank"])
    first, second = a.player("erin").watch(match_id), b.player("erin").watch(match_id)
    assert (await first.read()).version == 0
    assert (await second.read()).version == 0
    third = a.player("erin").watch(match_id)
    with pytest.raises(grpc.aio.AioRpcError) as e:
        await third.read()
    assert e.value.code() == grpc.StatusCode.RESOURCE_EXHAUSTED
    assert error_info(e.value).reason == "too_many_streams"
    assert retry_info(e.value) is not None
    # another player is not affected
    other = b.player("frank").watch(match_id)
    assert (await other.read()).version == 0
    first.cancel()

    async def reopened() -> bool:
        stream = b.player("erin").replay(match_id)
        try:
            return (await stream.read()).version == 0
        except grpc.aio.AioRpcError as e:
            assert e.code() == grpc.StatusCode.RESOURCE_EXHAUSTED
            return False
        finally:
            stream.cancel()

    for _ in range(100):  # the slot is given back once the stream has ended
        if await reopened():
            break
        await asyncio.sleep(0.05)
    else:
        raise AssertionError("the slot of a closed stream was not given back")
    second.cancel()
    other.cancel()


async def test_redis_down_fails_open(start_service, valkey_server) -> None:
    service = await start_service(limits=LIMITS)
    stub = match_pb2_grpc.AuthServiceStub(service.channel)
    for _ in range(3):
        await stub.GuestLogin(match_pb2.GuestLoginRequest())
    assert (await _outcome(stub.GuestLogin(match_pb2.GuestLoginRequest())))[0] == (
        grpc.StatusCode.RESOURCE_EXHAUSTED
    )
    valkey_server.stop()
    try:
        for _ in range(5):  # no limiter: logins go through (and a warning is logged)
            reply = await asyncio.wait_for(stub.GuestLogin(match_pb2.GuestLoginRequest()), 5)
            assert reply.player_id.startswith("guest:")
    finally:
        valkey_server.start()


async def test_a_services_client_address_is_counted_as_that_client(replicas) -> None:
    """``tabletop-client-address`` beside a service token: the login is counted
    against that address (the gateway's browsers each have a budget); from
    anyone else the header changes nothing."""
    a, _b = replicas
    stub = match_pb2_grpc.AuthServiceStub(a.channel)
    service = bearer_metadata(a.tokens.issue("service:gateway", role="service"))
    player = bearer_metadata(a.tokens.issue("mallory"))

    def login(metadata):  # type: ignore[no-untyped-def]
        return _outcome(stub.GuestLogin(match_pb2.GuestLoginRequest(), metadata=metadata))

    def address(ip: str):  # type: ignore[no-untyped-def]
        return ((CLIENT_ADDRESS_HEADER, ip),)

    ok, limited = grpc.StatusCode.OK, grpc.StatusCode.RESOURCE_EXHAUSTED
    # the budget of 3 of one browser, through the gateway
    assert [(await login(service + address("203.0.113.1")))[0] for _ in range(4)] == [ok] * 3 + [
        limited
    ]
    # another browser behind the same gateway is not held back
    assert (await login(service + address("203.0.113.2")))[0] == ok
    # this connection's own budget, used up without a header
    assert [(await login(None))[0] for _ in range(4)] == [ok] * 3 + [limited]
    # the header without a service token is ignored: still this connection's budget
    assert (await login(address("198.51.100.7")))[0] == limited
    assert (await login(player + address("198.51.100.8")))[0] == limited
    assert (await login(service + address("198.51.100.9")))[0] == ok


async def test_browsers_behind_the_gateway_each_have_their_login_budget(replicas) -> None:
    """The whole path: the gateway (uvicorn, trusting 127.0.0.1 as a proxy)
    reads the browser from X-Forwarded-For and the match service counts
    each browser's guest logins on their own."""
    a, _b = replicas
    gateway = await GatewayServer(
        GatewaySettings(
            port=0, match_addr=a.server.address, auth=a.server.settings.auth, timeout_s=5.0
        )
    ).start()
    try:
        async with httpx.AsyncClient(base_url=gateway.url, timeout=10) as http:

            async def login(browser: str) -> int:
                r = await http.post(
                    "/api/v1/auth/guest", json={}, headers={"x-forwarded-for": browser}
                )
                return r.status_code

            assert [await login("203.0.113.10") for _ in range(4)] == [200, 200, 200, 429]
            assert [await login("203.0.113.11") for _ in range(3)] == [200] * 3
            # an entry the client wrote itself first, the one the proxy appended
            # last: the last counts
            assert await login("203.0.113.11, 203.0.113.12") == 200
    finally:
        await gateway.stop()
