"""Only a seat's own player moves it; bad tokens move nothing."""

from __future__ import annotations

import asyncio
import json
from dataclasses import replace

import grpc
import pytest

from services.common.auth import AuthSettings, Tokens
from services.common.errors import error_info
from tabletop.match.v1 import match_pb2, match_pb2_grpc
from tests.services.match.conftest import Player, stream_commits

MOVE = json.dumps({"type": "place_mark", "cell": 4})


async def refused(call) -> grpc.aio.AioRpcError:
    with pytest.raises(grpc.aio.AioRpcError) as e:
        await call
    return e.value


@pytest.fixture
async def match(service):
    match_id = await service.player("guest:a").create("tic_tac_toe", ["guest:a", "guest:b"])
    return match_id


def forged(service) -> Player:
    other = Tokens(AuthSettings(secret="not-the-secret-" * 3))
    return Player(service.channel, other.issue("guest:a"), "guest:a")


def expired(service) -> Player:
    return Player(service.channel, service.tokens.issue("guest:a", ttl_s=-60), "guest:a")


@pytest.mark.parametrize(
    ("who", "code", "reason"),
    [
        (lambda s: s.player("guest:b"), grpc.StatusCode.FAILED_PRECONDITION, "not_your_turn"),
        (lambda s: s.player("guest:c"), grpc.StatusCode.PERMISSION_DENIED, "not_seated"),
        (lambda s: s.service("bots"), grpc.StatusCode.PERMISSION_DENIED, "not_seated"),
        (forged, grpc.StatusCode.UNAUTHENTICATED, "invalid_token"),
        (expired, grpc.StatusCode.UNAUTHENTICATED, "token_expired"),
        (lambda s: s.anonymous(), grpc.StatusCode.UNAUTHENTICATED, "missing_token"),
    ],
    ids=["other-seat", "not-seated", "service-for-a-human", "forged", "expired", "no-token"],
)
async def test_a_move_with_the_wrong_token_is_refused_and_appends_nothing(
    service, settings, match, who, code, reason
) -> None:
    e = await refused(who(service).submit(match, MOVE))
    assert e.code() == code
    assert error_info(e).reason == reason
    assert len(await stream_commits(settings.nats_url, match)) == 1


async def test_a_player_cannot_claim_another_seat(service, settings, match) -> None:
    e = await refused(service.player("guest:b").submit(match, MOVE, seat=0))
    assert e.code() == grpc.StatusCode.PERMISSION_DENIED
    assert len(await stream_commits(settings.nats_url, match)) == 1


async def test_reads_need_a_token_and_strangers_see_the_public_view(service, match) -> None:
    e = await refused(service.anonymous().get(match))
    assert e.code() == grpc.StatusCode.UNAUTHENTICATED
    info = await service.player("guest:z").get(match)
    assert not info.HasField("your_seat") and info.version == 0
    assert [s.player for s in info.seats] == ["guest:a", "guest:b"]


async def test_only_services_create_when_players_may_not(start_service) -> None:
    service = await start_service(players_may_create=False)
    e = await refused(service.player("guest:a").create("tic_tac_toe", ["guest:a", "guest:b"]))
    assert e.code() == grpc.StatusCode.PERMISSION_DENIED
    match_id = await service.service().create("tic_tac_toe", ["guest:a", "guest:b"])
    assert match_id


async def test_bad_create_requests_are_invalid_or_not_found(service) -> None:
    p = service.player("guest:a")
    e = await refused(p.create("no_such_game", ["guest:a", "guest:b"]))
    assert e.code() == grpc.StatusCode.NOT_FOUND
    e = await refused(p.create("tic_tac_toe", ["guest:a"]))
    assert e.code() == grpc.StatusCode.INVALID_ARGUMENT
    assert error_info(e).reason == "bad_player_count"
    e = await refused(p.create("tic_tac_toe", ["guest:a", "guest:b"], options_json="[1"))
    assert e.code() == grpc.StatusCode.INVALID_ARGUMENT


async def test_bad_moves_get_typed_rejections(service, match) -> None:
    a = service.player("guest:a")
    e = await refused(a.submit(match, "{not json"))
    assert e.code() == grpc.StatusCode.INVALID_ARGUMENT
    assert error_info(e).reason == "malformed_move"
    e = await refused(a.submit(match, json.dumps({"type": "place_mark", "cell": 99})))
    assert e.code() == grpc.StatusCode.FAILED_PRECONDITION
    assert error_info(e).reason == "no_such_cell"
    e = await refused(a.submit("nope", MOVE))
    assert e.code() == grpc.StatusCode.NOT_FOUND
    e = await refused(a.submit("bad id!", MOVE))
    assert e.code() == grpc.StatusCode.INVALID_ARGUMENT


async def test_guest_login_gives_a_token_that_plays(service) -> None:
    auth = match_pb2_grpc.AuthServiceStub(service.channel)
    reply = await auth.GuestLogin(match_pb2.GuestLoginRequest(name="Ann"))
    assert reply.player_id.startswith("guest:")
    p = Player(service.channel, reply.token, reply.player_id)
    match_id = await p.create("tic_tac_toe", [reply.player_id, "guest:b"])
    assert (await p.submit(match_id, MOVE)).version == 1


async def test_list_matches_by_player_and_status(service) -> None:
    a = service.player("guest:a")
    first = await a.create("tic_tac_toe", ["guest:a", "guest:b"])
    await asyncio.sleep(0.01)  # creation times order the list (millisecond resolution)
    second = await a.create("tic_tac_toe", ["guest:c", "guest:a"])
    for cell, p in ((0, a), (3, service.player("guest:b"))):
        await p.submit(first, json.dumps({"type": "place_mark", "cell": cell}))

    async def listed(player: str = "", status: int = 0) -> list[str]:
        reply = await a.stub.ListMatches(
            match_pb2.ListMatchesRequest(player=player, status=status), metadata=a.metadata
        )
        return [m.match_id for m in reply.matches]

    assert await listed() == [second, first]  # newest first
    assert await listed("guest:b") == [first]
    assert await listed("guest:nobody") == []
    assert await listed(status=match_pb2.MATCH_STATUS_FINISHED) == []
    assert await listed(status=match_pb2.MATCH_STATUS_ACTIVE) == [second, first]


async def refresh(service, token: str | None) -> match_pb2.RefreshTokenResponse:
    auth = match_pb2_grpc.AuthServiceStub(service.channel)
    metadata = (("authorization", f"Bearer {token}"),) if token is not None else ()
    return await auth.RefreshToken(match_pb2.RefreshTokenRequest(), metadata=metadata)


async def test_refresh_gives_the_same_player_a_fresh_token_that_plays(service, match) -> None:
    old = service.tokens.issue("guest:a", ttl_s=60, extra={"name": "Ann"})
    reply = await refresh(service, old)
    assert reply.player_id == "guest:a"
    assert reply.token != old
    claims = service.tokens.verify(reply.token).claims
    assert claims["role"] == "player" and claims["name"] == "Ann"
    assert claims["exp"] - claims["iat"] == service.tokens.settings.guest_ttl_s
    assert (await Player(service.channel, reply.token).submit(match, MOVE)).version == 1


async def test_refresh_keeps_a_service_role(service) -> None:
    reply = await refresh(service, service.tokens.issue("svc:mm", role="service", ttl_s=30))
    assert service.tokens.verify(reply.token).role == "service"


async def test_a_token_expired_within_the_grace_period_is_renewed(service, match) -> None:
    stale = service.tokens.issue("guest:a", ttl_s=-3 * 24 * 3600)
    e = await refused(Player(service.channel, stale).submit(match, MOVE))
    assert error_info(e).reason == "token_expired"
    reply = await refresh(service, stale)
    assert (await Player(service.channel, reply.token).submit(match, MOVE)).version == 1


@pytest.mark.parametrize(
    ("token", "reason"),
    [
        (lambda s: s.tokens.issue("guest:a", ttl_s=-31 * 24 * 3600), "refresh_window_passed"),
        (lambda s: forged(s).token, "invalid_token"),
        (lambda s: "not-a-jwt", "invalid_token"),
        (lambda s: s.tokens.party_token("guest:a", "guest:b", "tic_tac_toe")[0], "invalid_token"),
        (lambda s: None, "missing_token"),
    ],
    ids=["past-the-grace-period", "forged", "garbage", "party-token", "no-token"],
)
async def test_refresh_refuses_what_it_cannot_trust(service, token, reason) -> None:
    e = await refused(refresh(service, token(service)))
    assert e.code() == grpc.StatusCode.UNAUTHENTICATED
    assert error_info(e).reason == reason
    assert e.details()


async def test_the_grace_period_is_a_setting(start_service, settings) -> None:
    short = await start_service(auth=replace(settings.auth, refresh_grace_s=60))
    e = await refused(refresh(short, short.tokens.issue("guest:a", ttl_s=-120)))
    assert error_info(e).reason == "refresh_window_passed"
    assert (await refresh(short, short.tokens.issue("guest:a", ttl_s=-30))).player_id == "guest:a"
