"""``UNAVAILABLE`` must not lie: with nats-server paused longer than the store
timeout, every submit is answered applied (OK), not applied
(``store_unavailable``, and it never lands), or ``outcome_unknown`` (and a
retry with the same key tells the truth). The same for a client that gives
up with ``DEADLINE_EXCEEDED``."""

from __future__ import annotations

import asyncio
import json

import grpc

from services.common.errors import error_info
from services.match.model import key_digest
from tests.services.match.conftest import stream_commits

TTT = ["guest:x", "guest:o"]
STORE_TIMEOUT_S = 1.0


def mark(cell: int) -> str:
    return json.dumps({"type": "place_mark", "cell": cell})


async def test_a_paused_store_gives_true_or_honest_answers(
    start_service, settings, nats_server
) -> None:
    service = await start_service(store_timeout_s=STORE_TIMEOUT_S)
    x = service.player(TTT[0])
    matches = [await x.create("tic_tac_toe", TTT) for _ in range(7)]
    for m in matches:
        await x.get(m)  # every projection is in memory: a submit goes straight to the append
    await service.app.drain()
    # one match only in the stream: its submit must read the stream first
    cold = matches[-1]
    await service.app.cache.client.delete(service.app.cache.key(cold))
    service.app.forget(cold)

    calls = []
    for i, m in enumerate(matches[:-1]):
        key = f"k{i}" if i % 3 else ""  # some without a key: the server draws one
        timeout = 0.4 if i == 1 else None  # a client that gives up first
        calls.append((m, key, timeout))
    calls.append((cold, "cold", None))

    async def submit(m: str, key: str, timeout: float | None):
        try:
            return await x.stub.SubmitMove(_request(m, key), metadata=x.metadata, timeout=timeout)
        except grpc.aio.AioRpcError as e:
            return e

    await asyncio.to_thread(nats_server.pause)
    try:
        answers = await asyncio.gather(*(submit(*c) for c in calls))
        await asyncio.sleep(0.5)  # the pause lasts past every answer
    finally:
        await asyncio.to_thread(nats_server.resume)

    kinds: dict[str, int] = {}
    retried = []
    not_applied = []
    for (m, key, _t), answer in zip(calls, answers, strict=True):
        if isinstance(answer, grpc.aio.AioRpcError):
            code = answer.code()
            info = error_info(answer)
            if code == grpc.StatusCode.DEADLINE_EXCEEDED:
                kind = "deadline"
                assert key, "a client without a key cannot resolve a deadline"
            else:
                assert code == grpc.StatusCode.UNAVAILABLE, answer
                assert info is not None
                kind = info.reason
                assert kind in ("outcome_unknown", "store_unavailable"), kind
                if not key and kind == "outcome_unknown":
                    key = info.metadata["idempotency_key"]  # the one to retry with
            if kind == "store_unavailable":
                not_applied.append(m)
            else:
                retried.append((m, key))
        else:
            kind = "ok"
        kinds[kind] = kinds.get(kind, 0) + 1
    assert kinds.get("outcome_unknown", 0) >= 3, kinds
    assert kinds.get("deadline", 0) == 1, kinds
    assert not_applied == [cold], kinds

    # The retries resolve every unknown: the first answer, applied once.
    for m, key in retried:
        reply = await x.stub.SubmitMove(_request(m, key), metadata=x.metadata, timeout=10)
        assert reply.version == 1
        commits = await stream_commits(settings.nats_url, m)
        assert [c.version for c in commits] == [0, 1]
        assert commits[1].key == key_digest(m, TTT[0], key)
    # Everything buffered has been processed (the retries were sent after it,
    # on the same connection): "not applied" is still true.
    for m in not_applied:
        assert [c.version for c in await stream_commits(settings.nats_url, m)] == [0]
        reply = await x.stub.SubmitMove(_request(m, "cold"), metadata=x.metadata, timeout=10)
        assert reply.version == 1


def _request(match_id: str, key: str):
    from tabletop.match.v1 import match_pb2

    return match_pb2.SubmitMoveRequest(match_id=match_id, move_json=mark(0), idempotency_key=key)
