"""Parties need the consent of each member (a party token from JoinParty),
and every field of Enqueue is bounded."""

from __future__ import annotations

import grpc
import pytest

from services.common.errors import error_info
from tabletop.matchmaking.v1 import matchmaking_pb2 as pb

from .conftest import TOKENS, auth
from .test_api import TTT, enqueue, party_token


async def _refused(call, code, reason):
    with pytest.raises(grpc.aio.AioRpcError) as e:
        await call
    assert e.value.code() == code, (e.value.code(), e.value.details())
    info = error_info(e.value)
    assert info is not None and info.reason == reason, (info, e.value.details())
    assert len(e.value.details()) <= 512
    return info


def _enqueue(api, player, **kw):
    kw.setdefault("game", TTT)
    return api.stub.Enqueue(pb.EnqueueRequest(**kw), metadata=auth(player))


async def test_a_stranger_cannot_be_queued_without_consent(api) -> None:
    info = await _refused(
        _enqueue(api, "mallory", party=["victim"]),
        grpc.StatusCode.PERMISSION_DENIED,
        "party_consent_missing",
    )
    assert info.metadata["player"] == "victim"
    # the victim is not held in any queue: its own Enqueue works
    ticket = await enqueue(api, "victim")
    assert (await api.app.store.get(ticket)).players == ("victim",)


async def test_a_member_who_consented_is_queued_with_the_leader(api) -> None:
    token = await party_token(api, "mate", "lead")
    ticket = await enqueue(api, "lead", party_tokens=[token])  # party may be left out
    assert (await api.app.store.get(ticket)).players == ("lead", "mate")


async def test_a_party_token_is_single_use(api) -> None:
    token = await party_token(api, "mate", "lead")
    first = await enqueue(api, "lead", party=["mate"], party_tokens=[token])
    await api.stub.CancelTicket(pb.CancelTicketRequest(ticket_id=first), metadata=auth("lead"))
    await _refused(
        _enqueue(api, "lead", party=["mate"], party_tokens=[token]),
        grpc.StatusCode.FAILED_PRECONDITION,
        "party_token_used",
    )


async def test_a_token_for_another_leader_or_game_is_refused(api) -> None:
    for_bob = await party_token(api, "mate", "bob")
    await _refused(
        _enqueue(api, "mallory", party=["mate"], party_tokens=[for_bob]),
        grpc.StatusCode.PERMISSION_DENIED,
        "bad_party_token",
    )
    for_dice = await party_token(api, "mate", "lead", "dice_forge")
    await _refused(
        _enqueue(api, "lead", party=["mate"], party_tokens=[for_dice]),
        grpc.StatusCode.PERMISSION_DENIED,
        "bad_party_token",
    )
    forged = TOKENS.issue("mate")  # a bearer token is not a party token
    await _refused(
        _enqueue(api, "lead", party_tokens=[forged]),
        grpc.StatusCode.PERMISSION_DENIED,
        "bad_party_token",
    )
    await _refused(
        _enqueue(api, "lead", party_tokens=["garbage"]),
        grpc.StatusCode.PERMISSION_DENIED,
        "bad_party_token",
    )


async def test_a_party_token_is_not_a_bearer_token(api) -> None:
    token = await party_token(api, "mate", "lead")
    with pytest.raises(grpc.aio.AioRpcError) as e:
        await api.stub.Enqueue(
            pb.EnqueueRequest(game=TTT), metadata=(("authorization", f"Bearer {token}"),)
        )
    assert e.value.code() == grpc.StatusCode.UNAUTHENTICATED


async def test_a_party_named_without_one_token_is_refused(api) -> None:
    token = await party_token(api, "mate", "lead", "dice_forge")
    await _refused(
        _enqueue(api, "lead", game="dice_forge", party=["mate", "other"], party_tokens=[token]),
        grpc.StatusCode.PERMISSION_DENIED,
        "party_consent_missing",
    )


async def test_join_party_checks_its_fields(api) -> None:
    await _refused(
        api.stub.JoinParty(pb.JoinPartyRequest(leader="lead", game="chess"), metadata=auth("m")),
        grpc.StatusCode.NOT_FOUND,
        "unknown_game",
    )
    await _refused(
        api.stub.JoinParty(pb.JoinPartyRequest(leader="m", game=TTT), metadata=auth("m")),
        grpc.StatusCode.INVALID_ARGUMENT,
        "own_party",
    )
    await _refused(
        api.stub.JoinParty(pb.JoinPartyRequest(leader="bot:x", game=TTT), metadata=auth("m")),
        grpc.StatusCode.INVALID_ARGUMENT,
        "bad_player",
    )


@pytest.mark.parametrize(
    ("request_kw", "reason"),
    [
        ({"game": "g" * 100_000}, "field_too_long"),
        ({"options_json": "[" * 1000 + "]" * 1000}, "json_too_deep"),
        ({"options_json": '{"a":' * 1000 + "1" + "}" * 1000}, "json_too_deep"),
        ({"party": ["p" * 306]}, "field_too_long"),
        ({"party": ["p" * 201], "party_tokens": []}, "field_too_long"),
        ({"party": [f"p{i}" for i in range(100)]}, "too_many_values"),
        ({"party_tokens": ["t" * 10_000]}, "field_too_long"),
        ({"player_counts": [2**32 - 1]}, "player_count"),
    ],
)
async def test_enqueue_fields_are_bounded(api, request_kw, reason) -> None:
    await _refused(_enqueue(api, "alice", **request_kw), grpc.StatusCode.INVALID_ARGUMENT, reason)


async def test_a_service_may_not_queue_ids_the_match_service_would_refuse(api) -> None:
    svc = auth("svc:lobby", role="service")
    for bad, reason in (
        ("p" * 201, "field_too_long"),
        ("tab\there", "bad_player"),
        ("", "bad_player"),
    ):
        await _refused(
            api.stub.Enqueue(pb.EnqueueRequest(game=TTT, party=["ok", bad]), metadata=svc),
            grpc.StatusCode.INVALID_ARGUMENT,
            reason,
        )
