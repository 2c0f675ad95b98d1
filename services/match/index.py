"""Which matches a player is in, for ``ListMatches``, and the ``MatchFinished``
fact for other services.

The index is a JetStream key-value bucket (durable like the stream, unlike
the Redis cache): key ``p.<hex of player id>.<match id>``, value a JSON
summary. Beside it, the stream ``<bucket>_ACTIVE`` holds one message
(the same summary) per match still active, on ``active.<match id>``, purged
when the match finishes: what the active and stalled match gauges scan, in
one read that never grows with the finished matches. Both are written when a
match is created and when it finishes, never on the per-move path. The
bucket also holds the ``MatchFinished`` relay's cursor, key ``relay.cursor``
(see relay.py).
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable
from typing import Any

import msgspec
from nats.js import JetStreamContext, api
from nats.js.errors import (
    BadRequestError,
    BucketNotFoundError,
    KeyDeletedError,
    KeyNotFoundError,
    NotFoundError,
)
from nats.js.kv import KeyValue

from services.common.auth import is_bot
from services.match.model import STATUS_ACTIVE, STATUS_FINISHED, Commit, MatchMeta, rfc3339
from services.match.store import ERR_WRONG_LAST_SEQUENCE, AckInbox, _ApiError, _pub_ack


class MatchSummary(msgspec.Struct, frozen=True, kw_only=True):
    match_id: str
    game: str
    status: str
    players: tuple[str, ...]
    created_at: str


class MatchFinished(msgspec.Struct, frozen=True, kw_only=True):
    """The fact published on ``results.<match_id>`` when a match ends."""

    match_id: str
    game: str
    players: tuple[str, ...]
    bots: tuple[bool, ...]
    ranks: tuple[int, ...]
    scores: tuple[float, ...]
    reason: str
    finished_at: str


class IndexWriteError(Exception):
    """A write of the index that JetStream did not acknowledge, or refused."""


RELAY_CURSOR_KEY = "relay.cursor"
"""The key of the ``MatchFinished`` relay's cursor (no player key looks like it)."""

_json = msgspec.json.Encoder()
_summary = msgspec.json.Decoder(MatchSummary)


def _player_token(player: str) -> str:
    return player.encode().hex() or "00"


class MatchIndex:
    def __init__(
        self,
        js: JetStreamContext,
        bucket: str = "MATCH_INDEX",
        replicas: int = 1,
        timeout_s: float = 5.0,
    ) -> None:
        """``timeout_s``: how long a write waits for its ack."""
        self.js = js
        self.bucket = bucket
        self.replicas = replicas
        self._kv: KeyValue | None = None
        self.active_stream = f"{bucket}_ACTIVE"
        self.timeout_s = timeout_s
        self._acks = AckInbox(js._nc)

    async def open(self) -> None:
        try:
            self._kv = await self.js.key_value(self.bucket)
        except (BucketNotFoundError, NotFoundError):
            self._kv = await self.js.create_key_value(
                api.KeyValueConfig(
                    bucket=self.bucket,
                    history=1,
                    storage=api.StorageType.FILE,
                    replicas=self.replicas,
                )
            )
        config = api.StreamConfig(
            name=self.active_stream,
            subjects=["active.>"],
            max_msgs_per_subject=1,
            storage=api.StorageType.FILE,
            num_replicas=self.replicas,
        )
        try:
            await self.js.stream_info(self.active_stream)
        except NotFoundError:
            with contextlib.suppress(BadRequestError):  # another replica made it first
                await self.js.add_stream(config)

    async def record(self, meta: MatchMeta, status: str) -> None:
        assert self._kv is not None
        summary = MatchSummary(
            match_id=meta.match_id,
            game=meta.game,
            status=status,
            players=meta.players,
            created_at=rfc3339(meta.created_ms),
        )
        data = _json.encode(summary)
        # All at once: one flush to NATS, one round trip of waiting. The
        # bucket's keys, the active message and the purge of it are sent with
        # replies on one wildcard ack inbox and awaited together (no task and
        # no request per write, the answers parsed by msgspec), as the store's
        # appends are; the same messages ``KeyValue.put``,
        # ``JetStreamContext.publish`` and ``purge_stream`` send.
        pre = self._kv._pre  # the bucket's subject prefix, ``$KV.<bucket>.``
        writes: list[_Write] = [
            (f"{pre}p.{_player_token(player)}.{meta.match_id}", None, data, _stored)
            for player in dict.fromkeys(meta.players)
        ]
        active = f"active.{meta.match_id}"
        if status == STATUS_ACTIVE:
            writes.append((active, {"Nats-Expected-Stream": self.active_stream}, data, _stored))
        else:
            purge = f"{self.js._prefix}.STREAM.PURGE.{self.active_stream}"
            writes.append((purge, None, _json.encode({"filter": active}), _purged))
        await self._send(writes)

    async def publish_finished(self, subject_prefix: str, stream: str, fact: MatchFinished) -> bool:
        """Store the fact on ``<subject_prefix>.<match_id>`` of ``stream``
        unless a fact is there already (the subject must be empty: exactly
        once, however late a republish comes). True if this call stored it;
        ``IndexWriteError`` if JetStream did not acknowledge it, or refused it
        for another reason."""
        headers = {
            "Nats-Msg-Id": f"finished:{fact.match_id}",
            "Nats-Expected-Last-Subject-Sequence": "0",
            "Nats-Expected-Stream": stream,
        }
        subject = f"{subject_prefix}.{fact.match_id}"
        (ack,) = await self._send([(subject, headers, _json.encode(fact), _stored_once)])
        return ack

    async def _send(self, writes: list[_Write]) -> list[Any]:
        """Send each write with a reply on the ack inbox and wait for every
        answer; what each write's check makes of its answer, in order.
        ``IndexWriteError`` if one is missing, or a refusal."""
        acks = self._acks
        if acks.prefix is None:
            await acks.open()
        nc = acks.nc
        waits = [acks.wait(self.timeout_s) for _ in writes]
        try:
            for (subject, headers, payload, _check), (reply, _answer) in zip(
                writes, waits, strict=True
            ):
                await nc.publish(subject, payload, reply=reply, headers=headers)
            out = []
            for (subject, _headers, _payload, check), (_reply, answer) in zip(
                writes, waits, strict=True
            ):
                msg = await answer
                if msg is None:
                    raise IndexWriteError(f"{subject}: JetStream did not acknowledge: timeout")
                if msg.headers and msg.headers.get("Status") == "503":
                    raise IndexWriteError(f"{subject}: no responders")
                out.append(check(subject, msg.data))
            return out
        finally:
            for reply, answer in waits:
                if not answer.done():
                    acks.forget(reply)

    async def relay_cursor(self) -> int | None:
        """The ``MatchFinished`` relay's cursor (see relay.py), None if unset."""
        assert self._kv is not None
        try:
            entry = await self._kv.get(RELAY_CURSOR_KEY)
        except (KeyNotFoundError, KeyDeletedError):
            return None
        return int(entry.value) if entry.value else None

    async def set_relay_cursor(self, seq: int) -> None:
        assert self._kv is not None
        await self._kv.put(RELAY_CURSOR_KEY, str(seq).encode())

    async def active(self) -> list[MatchSummary]:
        """Every match still active (one read of the active stream)."""
        info = await self.js.stream_info(self.active_stream)
        if not info.state.messages:
            return []
        return await self._read(self.active_stream, "active.>")

    async def matches_of(self, player: str, status: str | None = None) -> list[MatchSummary]:
        """Newest first. (Not ``KeyValue.watch``: its end-of-initial-values
        marker can come before the values, which then look like none.)"""
        latest = await self._latest(f"$KV.{self.bucket}.p.{_player_token(player)}.>")
        out = [s for s in latest if status is None or s.status == status]
        out.sort(key=lambda s: (s.created_at, s.match_id), reverse=True)
        return out

    async def _latest(self, subjects: str) -> list[MatchSummary]:
        """The live value of every key matching ``subjects``."""
        stream = f"KV_{self.bucket}"
        info = await self.js.stream_info(stream, subjects_filter=subjects)
        if not info.state.subjects:
            return []
        return await self._read(stream, subjects)

    async def _read(self, stream: str, subjects: str) -> list[MatchSummary]:
        sub = await self.js.subscribe(
            subjects,
            stream=stream,
            ordered_consumer=True,
            deliver_policy=api.DeliverPolicy.LAST_PER_SUBJECT,
        )
        latest: dict[str, MatchSummary] = {}
        try:
            while True:
                msg = await sub.next_msg(timeout=5.0)
                if msg.data:  # a deleted key has no value
                    summary = _summary.decode(msg.data)
                    latest[summary.match_id] = summary
                if msg.metadata.num_pending == 0:
                    break
        finally:
            with contextlib.suppress(Exception):
                await sub.unsubscribe()
        return list(latest.values())


def finished_fact(meta: MatchMeta, commit: Commit) -> MatchFinished:
    assert commit.outcome is not None
    return MatchFinished(
        match_id=meta.match_id,
        game=meta.game,
        players=meta.players,
        bots=tuple(is_bot(p) for p in meta.players),
        ranks=commit.outcome.ranks,
        scores=commit.outcome.scores,
        reason=commit.outcome.reason,
        finished_at=rfc3339(commit.time_ms),
    )


class _PurgeResponse(msgspec.Struct):
    success: bool = False
    error: _ApiError | None = None


_purge_response = msgspec.json.Decoder(_PurgeResponse)

_Write = tuple[str, dict[str, str] | None, bytes, Callable[[str, bytes], Any]]
"""A subject, its headers, the payload, and what checks the answer."""


def _answer(subject: str, data: bytes, decoder: msgspec.json.Decoder[Any]) -> Any:
    try:
        answer = decoder.decode(data)
    except msgspec.DecodeError as e:
        raise IndexWriteError(f"{subject}: JetStream answered {e}") from None
    return answer


def _refused(subject: str, error: _ApiError) -> IndexWriteError:
    return IndexWriteError(
        f"{subject}: JetStream refused: {error.code} {error.err_code} {error.description}"
    )


def _stored(subject: str, data: bytes) -> None:
    ack = _answer(subject, data, _pub_ack)
    if ack.error is not None:
        raise _refused(subject, ack.error)


def _purged(subject: str, data: bytes) -> None:
    answer = _answer(subject, data, _purge_response)
    if answer.error is not None:
        raise _refused(subject, answer.error)
    if not answer.success:
        raise IndexWriteError(f"{subject}: JetStream did not purge")


def _stored_once(subject: str, data: bytes) -> bool:
    """True if stored now; False if stored before (a fact on the subject
    already, or the same message id within the duplicate window)."""
    ack = _answer(subject, data, _pub_ack)
    if ack.error is not None:
        if ack.error.err_code == ERR_WRONG_LAST_SEQUENCE:
            return False  # published before
        raise _refused(subject, ack.error)
    return not ack.duplicate


__all__ = [
    "STATUS_ACTIVE",
    "STATUS_FINISHED",
    "MatchFinished",
    "MatchIndex",
    "MatchSummary",
    "finished_fact",
]
