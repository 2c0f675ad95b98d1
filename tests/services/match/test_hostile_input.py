"""Hostile input at the match service's edge: every answer is a clear status
with a reason (never INTERNAL, UNKNOWN or RESOURCE_EXHAUSTED from a trailer
too big), and nothing is appended."""

from __future__ import annotations

import asyncio

import grpc
import pytest
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import rsa

from services.common.auth import AuthSettings
from services.common.errors import error_info
from tabletop.match.v1 import match_pb2, match_pb2_grpc

from .conftest import stream_commits

DEEP = "[" * 1000 + "]" * 1000
DEEP_OBJECT = '{"a":' * 1000 + "1" + "}" * 1000


async def _refused(call, code=grpc.StatusCode.INVALID_ARGUMENT, reason=None):
    with pytest.raises(grpc.aio.AioRpcError) as e:
        await call
    assert e.value.code() == code, (e.value.code(), e.value.details())
    info = error_info(e.value)
    assert info is not None and info.domain == "tabletop"
    if reason is not None:
        assert info.reason == reason, (info.reason, e.value.details())
    assert len(e.value.details() or "") <= 512
    assert all(len(v) <= 128 for v in info.metadata.values())
    return info


async def test_deeply_nested_move_is_invalid_argument_and_appends_nothing(service, settings):
    alice, bob = service.player("alice"), service.player("bob")
    match_id = await alice.create("tic_tac_toe", ["alice", "bob"])
    for move in (DEEP, DEEP_OBJECT, '{"type":"place_mark","cell":' + DEEP + "}"):
        info = await _refused(alice.submit(match_id, move), reason="json_too_deep")
        assert info.metadata["field"] == "move"
    await _refused(bob.submit(match_id, DEEP), reason="json_too_deep")
    assert len(await stream_commits(settings.nats_url, match_id)) == 1
    # and the match plays on
    reply = await alice.submit(match_id, '{"type":"place_mark","cell":4}')
    assert reply.version == 1


async def test_deeply_nested_options_are_invalid_argument(service):
    alice = service.player("alice")
    for options in (DEEP, DEEP_OBJECT):
        await _refused(
            alice.create("tic_tac_toe", ["alice", "bob"], options_json=options),
            reason="json_too_deep",
        )


async def test_a_huge_player_id_in_list_matches_is_invalid_argument(service):
    alice = service.player("alice")
    huge = "p" * (512 * 1024)
    info = await _refused(
        alice.stub.ListMatches(match_pb2.ListMatchesRequest(player=huge), metadata=alice.metadata),
        reason="field_too_long",
    )
    assert info.metadata["field"] == "player"


async def test_long_ids_are_refused_without_echoing_them(service):
    alice = service.player("alice")
    for size in (300, 100_000):
        await _long_ids_refused(alice, "m" * size, size)


async def _long_ids_refused(alice, long_id, size):
    for call in (
        alice.get(long_id),
        alice.submit(long_id, '{"type":"place_mark","cell":4}'),
        alice.submit("x", '{"type":"place_mark","cell":4}', idempotency_key=long_id),
        alice.create("g" * size, ["alice", "bob"]),
        alice.create("tic_tac_toe", ["alice", long_id]),
    ):
        await _refused(call, reason="field_too_long")
    stream = alice.watch(long_id)
    await _refused(stream.read(), reason="field_too_long")


async def test_unknown_long_game_name_is_not_echoed_whole(service):
    alice = service.player("alice")
    info = await _refused(alice.create("g" * 250, ["alice", "bob"]), code=grpc.StatusCode.NOT_FOUND)
    assert info.reason == "unknown_game"


async def test_too_many_players_is_invalid_argument(service):
    alice = service.player("alice")
    await _refused(
        alice.create("tic_tac_toe", [f"p{i}" for i in range(1000)]), reason="too_many_values"
    )


async def test_replay_speed_out_of_range_is_refused(service):
    alice = service.player("alice")
    match_id = await alice.create("tic_tac_toe", ["alice", "bob"])
    await alice.submit(match_id, '{"type":"place_mark","cell":4}')
    for speed in (1e-300, 0.01, -1.0, float("inf"), float("nan"), 1e300):
        stream = alice.replay(match_id, speed=speed)
        await asyncio.wait_for(_refused(stream.read(), reason="bad_speed"), 5)


async def test_replay_at_the_slowest_speed_still_streams(service):
    alice = service.player("alice")
    match_id = await alice.create("tic_tac_toe", ["alice", "bob"])
    stream = alice.replay(match_id, speed=0.1)
    first = await asyncio.wait_for(stream.read(), 5)
    assert first.version == 0


def _rsa_pems() -> tuple[str, str]:
    key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    private = key.private_bytes(
        serialization.Encoding.PEM,
        serialization.PrivateFormat.PKCS8,
        serialization.NoEncryption(),
    ).decode()
    public = (
        key.public_key()
        .public_bytes(serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo)
        .decode()
    )
    return private, public


async def test_guest_login_on_a_verify_only_replica_is_failed_precondition(start_service):
    _private, public = _rsa_pems()
    svc = await start_service(auth=AuthSettings(algorithm="RS256", public_key=public))
    stub = match_pb2_grpc.AuthServiceStub(svc.channel)
    info = await _refused(
        stub.GuestLogin(match_pb2.GuestLoginRequest(name="x")),
        code=grpc.StatusCode.FAILED_PRECONDITION,
        reason="signing_unavailable",
    )
    assert info.domain == "tabletop"


async def test_guest_login_with_a_private_key_signs_rs256(start_service):
    private, public = _rsa_pems()
    svc = await start_service(
        auth=AuthSettings(algorithm="RS256", public_key=public, private_key=private)
    )
    stub = match_pb2_grpc.AuthServiceStub(svc.channel)
    reply = await stub.GuestLogin(match_pb2.GuestLoginRequest(name="n" * 200))
    assert reply.player_id.startswith("guest:")


async def test_unicode_ids_are_not_echoed_past_the_trailer_limits(service):
    alice = service.player("alice")
    wide = "🎲" * 250  # within the 256 characters, 1,000 bytes
    for call in (
        alice.get(wide),
        alice.submit(wide, '{"type":"place_mark","cell":4}'),
        alice.create("🐉" * 250, ["alice", "bob"]),
    ):
        with pytest.raises(grpc.aio.AioRpcError) as e:
            await call
        assert e.value.code() in (grpc.StatusCode.NOT_FOUND, grpc.StatusCode.INVALID_ARGUMENT)
        assert len((e.value.details() or "").encode()) <= 512
        info = error_info(e.value)
        assert all(len(v.encode()) <= 128 for v in info.metadata.values())


async def test_a_match_id_outside_ascii_letters_digits_dash_underscore_is_bad_match_id(service):
    """One token of a NATS subject, ASCII only: no wildcard, no dot, no
    letter of another script, no trailing newline."""
    alice = service.player("alice")
    for bad in ("café", "٣٤", "m.x", "m*", "m>", "m\n", "m x"):
        await _refused(alice.get(bad), reason="bad_match_id")
        await _refused(alice.submit(bad, '{"type":"place_mark","cell":4}'), reason="bad_match_id")
