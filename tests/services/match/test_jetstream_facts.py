"""Pins the JetStream behaviour the match store relies on (nats-server + nats-py)."""

from __future__ import annotations

import nats
import pytest
from nats.js.errors import APIError

from services.match.store import ERR_WRONG_LAST_SEQUENCE

SUBJECT = "match.m1"


def headers(expected: int, msg_id: str) -> dict[str, str]:
    return {"Nats-Expected-Last-Subject-Sequence": str(expected), "Nats-Msg-Id": msg_id}


@pytest.fixture
async def js(nats_server):
    nc = await nats.connect(nats_server.url)
    js = nc.jetstream()
    await js.add_stream(name="MATCHES", subjects=["match.*"], duplicate_window=60)
    yield js
    await nc.close()


async def test_expected_sequence_zero_means_no_message_yet(js) -> None:
    ack = await js.publish(SUBJECT, b"created", headers=headers(0, "create:m1"))
    assert ack.seq == 1
    with pytest.raises(APIError) as e:
        await js.publish(SUBJECT, b"created again", headers=headers(0, "create:m1-other"))
    assert e.value.err_code == ERR_WRONG_LAST_SEQUENCE


async def test_a_stale_expected_sequence_is_error_10071(js) -> None:
    await js.publish(SUBJECT, b"v0", headers=headers(0, "a"))
    await js.publish(SUBJECT, b"v1", headers=headers(1, "b"))
    with pytest.raises(APIError) as e:
        await js.publish(SUBJECT, b"late", headers=headers(1, "c"))
    assert e.value.err_code == ERR_WRONG_LAST_SEQUENCE


async def test_other_subjects_do_not_disturb_the_expected_sequence(js) -> None:
    await js.publish(SUBJECT, b"v0", headers=headers(0, "a"))
    await js.publish("match.m2", b"other", headers=headers(0, "x"))
    ack = await js.publish(SUBJECT, b"v1", headers=headers(1, "b"))
    assert ack.seq == 3


async def test_a_repeated_msg_id_with_the_current_sequence_is_a_duplicate(js) -> None:
    await js.publish(SUBJECT, b"v0", headers=headers(0, "a"))
    first = await js.publish(SUBJECT, b"v1", headers=headers(1, "k"))
    again = await js.publish(SUBJECT, b"v1", headers=headers(first.seq, "k"))
    assert again.duplicate and again.seq == first.seq


async def test_a_repeated_msg_id_with_a_stale_sequence_fails_with_10071_first(js) -> None:
    await js.publish(SUBJECT, b"v0", headers=headers(0, "a"))
    await js.publish(SUBJECT, b"v1", headers=headers(1, "k"))
    with pytest.raises(APIError) as e:
        await js.publish(SUBJECT, b"v1 retried", headers=headers(1, "k"))
    assert e.value.err_code == ERR_WRONG_LAST_SEQUENCE
