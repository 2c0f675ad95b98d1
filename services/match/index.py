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

import asyncio
import contextlib

import msgspec
from nats.js import JetStreamContext, api
from nats.js.errors import (
    APIError,
    BadRequestError,
    BucketNotFoundError,
    KeyDeletedError,
    KeyNotFoundError,
    NotFoundError,
)
from nats.js.kv import KeyValue

from services.common.auth import is_bot
from services.match.model import STATUS_ACTIVE, STATUS_FINISHED, Commit, MatchMeta, rfc3339
from services.match.store import AckInbox, _pub_ack


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
        # bucket's keys and the active message are published on one wildcard
        # ack inbox and awaited together (no task and no request per write,
        # the acks parsed by msgspec), as the store's appends are; the same
        # messages ``KeyValue.put`` and ``JetStreamContext.publish`` send.
        pre = self._kv._pre  # the bucket's subject prefix, ``$KV.<bucket>.``
        puts: list[tuple[str, dict[str, str] | None]] = [
            (f"{pre}p.{_player_token(player)}.{meta.match_id}", None)
            for player in dict.fromkeys(meta.players)
        ]
        if status == STATUS_ACTIVE:
            puts.append((f"active.{meta.match_id}", {"Nats-Expected-Stream": self.active_stream}))
            await self._publish(puts, data)
        else:
            await asyncio.gather(
                self._publish(puts, data),
                self.js.purge_stream(self.active_stream, subject=f"active.{meta.match_id}"),
            )

    async def _publish(self, puts: list[tuple[str, dict[str, str] | None]], data: bytes) -> None:
        """Publish ``data`` on each subject (with its headers) and wait for
        every ack: ``IndexWriteError`` if one is missing or a refusal."""
        acks = self._acks
        if acks.prefix is None:
            await acks.open()
        nc = acks.nc
        waits = [acks.wait(self.timeout_s) for _ in puts]
        try:
            for (subject, headers), (reply, _answer) in zip(puts, waits, strict=True):
                await nc.publish(subject, data, reply=reply, headers=headers)
            for (subject, _headers), (_reply, answer) in zip(puts, waits, strict=True):
                msg = await answer
                if msg is None:
                    raise IndexWriteError(f"{subject}: JetStream did not acknowledge: timeout")
                if msg.headers and msg.headers.get("Status") == "503":
                    raise IndexWriteError(f"{subject}: no responders")
                try:
                    ack = _pub_ack.decode(msg.data)
                except msgspec.DecodeError as e:
                    raise IndexWriteError(f"{subject}: JetStream answered {e}") from None
                if ack.error is not None:
                    raise IndexWriteError(
                        f"{subject}: JetStream refused: {ack.error.code} "
                        f"{ack.error.err_code} {ack.error.description}"
                    )
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


ERR_WRONG_LAST_SEQUENCE = 10071


async def publish_finished(
    js: JetStreamContext, subject_prefix: str, stream: str, fact: MatchFinished
) -> bool:
    """Store the fact on ``results.<match_id>`` unless a fact is there already
    (the subject must be empty: exactly once, however late a republish
    comes). True if this call stored it."""
    try:
        ack = await js.publish(
            f"{subject_prefix}.{fact.match_id}",
            _json.encode(fact),
            stream=stream,
            headers={
                "Nats-Msg-Id": f"finished:{fact.match_id}",
                "Nats-Expected-Last-Subject-Sequence": "0",
            },
        )
    except APIError as e:
        if e.err_code == ERR_WRONG_LAST_SEQUENCE:
            return False  # published before
        raise
    return not ack.duplicate


__all__ = [
    "STATUS_ACTIVE",
    "STATUS_FINISHED",
    "MatchFinished",
    "MatchIndex",
    "MatchSummary",
    "finished_fact",
    "publish_finished",
]
