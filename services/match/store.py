"""The ``EventStore`` on NATS JetStream: one stream, subject ``match.<id>``.

Appends carry ``Nats-Expected-Last-Subject-Sequence`` (optimistic concurrency
per match; ``0`` = the subject has no message yet) and ``Nats-Msg-Id``
(deduplication within the stream's duplicate window). A stale expected
sequence is JetStream error 10071, surfaced as ``AppendConflict``.

An append is a publish with a reply subject on the store's own wildcard
inbox (``AckInbox``): one long-lived subscription whose acks are matched to
their waiting appends by the last token of the subject, as nats-py's
``JetStreamContext.publish`` does, without its per-call timeout task, its
second hop through a subscription task, or its JSON parse of the whole ack.

Reads: the last commit by direct get; a few commits by direct "next by
subject" gets; many (a rebuild) or an endless follow (a watcher) by an
ordered push consumer.
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import time
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass

import msgspec
import nats.errors
import structlog
from nats.aio.client import Client as NATS
from nats.aio.msg import Msg
from nats.js import JetStreamContext, api
from nats.js.errors import APIError, BadRequestError, NotFoundError

from services.match.model import Commit, decode_commit, encode_commit
from services.match.ports import AppendConflict

log = structlog.get_logger("tabletop.match.store")

ERR_WRONG_LAST_SEQUENCE = 10071
ERR_STREAM_NAME_IN_USE = 10058

FINISHED_HEADER = "Tabletop-Finished"
"""Set on the commit that ends a match, so the relay of ``MatchFinished``
facts can follow the stream by headers only."""
FINISHED_HEADERS = {FINISHED_HEADER: "1"}

_DIRECT_READ_LIMIT = 16
"""The first this many commits of a read are direct gets, the rest (a long
match's rebuild) come through a consumer."""


@dataclass(frozen=True, slots=True)
class StreamConfig:
    name: str = "MATCHES"
    subject_prefix: str = "match"
    replicas: int = 1
    duplicate_window_s: float = 120.0
    results_name: str = "RESULTS"
    results_prefix: str = "results"


class _ApiError(msgspec.Struct):
    code: int = 0
    err_code: int = 0
    description: str = ""


class _PubAck(msgspec.Struct):
    stream: str = ""
    seq: int = 0
    duplicate: bool = False
    error: _ApiError | None = None


_pub_ack = msgspec.json.Decoder(_PubAck)
_NO_RESPONDERS = "503"


class AckInbox:
    """The acks of one connection's appends: one wildcard subscription
    ``<inbox>.*``, each append waiting on a future under its own last token.

    The subscription hands its messages straight to ``set_result`` (as
    ``Inline`` does: no queue, no task). One timer sweeps the appends past their deadline while any waits."""

    SWEEP_S = 0.1

    def __init__(self, nc: NATS) -> None:
        self.nc = nc
        self.prefix: str | None = None
        self._waiting: dict[str, tuple[asyncio.Future[Msg], float]] = {}
        self._ids = itertools.count()
        self._sweep: asyncio.TimerHandle | None = None
        self._lock = asyncio.Lock()
        self._loop: asyncio.AbstractEventLoop | None = None
        """The connection's loop (taken once: each lookup is a system call on 3.11)."""

    async def open(self) -> str:
        if self.prefix is None:
            async with self._lock:
                if self.prefix is None:
                    prefix = self.nc.new_inbox() + "."
                    await self.nc.subscribe(prefix + "*", future=self)  # type: ignore[arg-type]
                    self._loop = asyncio.get_running_loop()
                    self.prefix = prefix
        return self.prefix

    def wait(self, timeout: float) -> tuple[str, asyncio.Future[Msg]]:
        """A reply subject and the future of its answer (``None`` after the
        timeout); drop it with ``forget`` if the caller gives up early."""
        assert self.prefix is not None and self._loop is not None
        token = format(next(self._ids), "x")
        future: asyncio.Future[Msg] = self._loop.create_future()
        self._waiting[token] = (future, time.monotonic() + timeout)
        if self._sweep is None:
            self._sweep = self._loop.call_later(self.SWEEP_S, self._expire)
        return self.prefix + token, future

    def forget(self, reply: str) -> None:
        assert self.prefix is not None
        self._waiting.pop(reply[len(self.prefix) :], None)

    def _expire(self) -> None:
        now = time.monotonic()
        late = [t for t, (_, deadline) in self._waiting.items() if deadline <= now]
        for token in late:
            future, _ = self._waiting.pop(token)
            if not future.done():
                future.set_result(None)  # type: ignore[arg-type]
        assert self._loop is not None
        self._sweep = self._loop.call_later(self.SWEEP_S, self._expire) if self._waiting else None

    # the subscription's "future" (see ``Inline``)
    def cancelled(self) -> bool:
        return False

    def set_result(self, msg: Msg) -> None:
        assert self.prefix is not None
        entry = self._waiting.pop(msg.subject[len(self.prefix) :], None)
        if entry is not None and not entry[0].done():
            entry[0].set_result(msg)


class Inline:
    """A core subscription's handler called in nats-py's read loop, passed as
    the subscription's ``future``: nats-py hands every message of such a
    subscription to ``future.set_result`` as it parses it (made for one
    reply, it works for any number), where a ``cb`` would go through a
    queue and a task per message. ``handle`` must be quick and must not
    block; what it raises is logged, not passed to the read loop."""

    def __init__(self, handle: Callable[[Msg], None]) -> None:
        self.handle = handle

    def cancelled(self) -> bool:
        return False

    def set_result(self, msg: Msg) -> None:
        try:
            self.handle(msg)
        except Exception:
            log.exception("nats_message_not_handled", subject=msg.subject)


def delivery_sequences(reply: str) -> tuple[int, int] | None:
    """The (stream, consumer) sequences of a JetStream delivery, from its
    reply subject (what ``Msg.metadata`` gives, without the rest it parses:
    a timestamp made into a datetime, the counts); None if it is none."""
    tokens = reply.split(".")
    if len(tokens) < 9 or tokens[0] != "$JS" or tokens[1] != "ACK":
        return None
    if len(tokens) == 9:  # $JS.ACK.<stream>.<consumer>.<delivered>.<sseq>.<cseq>.<ts>.<pending>
        return int(tokens[5]), int(tokens[6])
    if len(tokens) >= 11:  # with the domain and account hash first
        return int(tokens[7]), int(tokens[8])
    return None


class StoreUnavailable(Exception):
    """JetStream did not answer in time, or refused: nothing was written."""


def _read_failed(e: nats.errors.Error) -> Exception:
    """What a failed read raises: ``StoreUnavailable`` for a timeout, a lost
    connection or a refusal of the moment (a 5xx or 408 status, such as 503
    10008 "JetStream system temporarily unavailable" while the stream elects
    a leader); the API error itself for any other refusal, a request this
    code got wrong (a bug)."""
    if isinstance(e, APIError):
        if e.code is not None and e.code < 500 and e.code != 408:
            return e
        return StoreUnavailable(
            f"JetStream refused the read: {e.code} {e.err_code} {e.description or ''}".rstrip()
        )
    return StoreUnavailable(f"JetStream did not answer: {e!r}")


class AppendOutcomeUnknown(StoreUnavailable):
    """An append was sent (or buffered by the client library) and not
    acknowledged: it may still be stored. nats-py keeps the messages published
    while it is disconnected, or while the server does not read, and sends
    them when the connection works again; nothing can take them back, and
    JetStream has no header that refuses a message arriving too late. Only
    another look at the stream (a retry with the same message id) tells."""


async def ensure_streams(js: JetStreamContext, config: StreamConfig) -> None:
    """Create the match and results streams if they do not exist yet.

    An existing stream is left as it is (its operator may have tuned it)."""
    for name, prefix in (
        (config.name, config.subject_prefix),
        (config.results_name, config.results_prefix),
    ):
        await ensure_stream(js, name, prefix, config.replicas, config.duplicate_window_s)


async def ensure_stream(
    js: JetStreamContext, name: str, prefix: str, replicas: int, duplicate_window_s: float
) -> None:
    """Create one stream of subjects ``<prefix>.*`` if it does not exist yet
    (an existing stream is left as it is: its operator may have tuned it)."""
    cfg = api.StreamConfig(
        name=name,
        subjects=[f"{prefix}.*"],
        storage=api.StorageType.FILE,
        num_replicas=replicas,
        duplicate_window=duplicate_window_s,
        allow_direct=True,
        retention=api.RetentionPolicy.LIMITS,
        discard=api.DiscardPolicy.OLD,
    )
    try:
        await js.add_stream(cfg)
    except (BadRequestError, APIError) as e:
        if e.err_code != ERR_STREAM_NAME_IN_USE:
            raise


class JetStreamStore:
    """Per-subject event streams on one JetStream stream. The codec of the
    messages is ``encode``/``decode`` (match commits here; a subclass may
    store other events the same way, e.g. tournaments)."""

    encode = staticmethod(encode_commit)
    decode = staticmethod(decode_commit)

    def __init__(
        self,
        js: JetStreamContext,
        config: StreamConfig,
        timeout_s: float = 5.0,
        nc: NATS | None = None,
    ) -> None:
        self.js = js
        self.config = config
        self.timeout_s = timeout_s
        self.nc = nc  # when given, no append is buffered while it is disconnected
        self.acks = AckInbox(nc if nc is not None else js._nc)

    def subject(self, match_id: str) -> str:
        return f"{self.config.subject_prefix}.{match_id}"

    async def append(
        self,
        match_id: str,
        commit: Commit,
        expected_seq: int,
        msg_id: str,
        extra_headers: dict[str, str] | None = None,
    ) -> tuple[int, bool]:
        """Append one commit; ``(sequence, duplicate)``. Raises
        ``AppendConflict`` (another commit came first: not written),
        ``StoreUnavailable`` (JetStream refused it or nobody listened: not
        written) or ``AppendOutcomeUnknown`` (no answer in time: maybe written)."""
        headers = {
            "Nats-Expected-Last-Subject-Sequence": str(expected_seq),
            "Nats-Msg-Id": msg_id,
            **(extra_headers or {}),
        }
        # Whatever path ends a match (see relay.py); the store also carries
        # other event types (a tournament's), which never end a match.
        if getattr(commit, "outcome", None) is not None:
            headers.update(FINISHED_HEADERS)
        if self.nc is not None and not self.nc.is_connected:
            # nats-py would keep the message and send it once reconnected,
            # after its caller was told it timed out: refuse it now instead
            # (reads may wait for the reconnection; an append may not).
            raise StoreUnavailable("not connected to NATS: the append was not sent")
        headers["Nats-Expected-Stream"] = self.config.name
        acks = self.acks
        nc = acks.nc
        if acks.prefix is None:
            try:
                await acks.open()
            except nats.errors.Error as e:  # nothing was sent
                raise StoreUnavailable(f"no inbox for JetStream's acks: {e!r}") from None
        try:
            reply, answer = acks.wait(self.timeout_s)
            try:
                await nc.publish(
                    self.subject(match_id), self.encode(commit), reply=reply, headers=headers
                )
                msg = await answer
            finally:
                if not answer.done():  # the publish failed, or the caller gave up
                    acks.forget(reply)
        except (nats.errors.OutboundBufferLimitError, nats.errors.MaxPayloadError) as e:
            # the client refused to send it
            raise StoreUnavailable(f"JetStream did not take the append: {e!r}") from None
        except nats.errors.Error as e:  # the connection closed after sending...
            raise AppendOutcomeUnknown(f"JetStream did not acknowledge: {e!r}") from None
        if msg is None:
            raise AppendOutcomeUnknown("JetStream did not acknowledge: timeout")
        if msg.headers and msg.headers.get("Status") == _NO_RESPONDERS:
            # nobody stores the subject now
            raise StoreUnavailable("JetStream did not take the append: no responders")
        try:
            ack = _pub_ack.decode(msg.data)
        except msgspec.DecodeError as e:
            raise AppendOutcomeUnknown(f"JetStream answered an append with {e}") from None
        if ack.error is not None:
            if ack.error.err_code == ERR_WRONG_LAST_SEQUENCE:
                raise AppendConflict(ack.error.description)
            # JetStream answered with a refusal (no leader, storage full...)
            raise StoreUnavailable(
                f"JetStream refused the append: {ack.error.code} {ack.error.err_code} "
                f"{ack.error.description}"
            )
        return ack.seq, ack.duplicate

    async def last_seq(self, match_id: str) -> int:
        """The stream sequence of the match's last commit, as the stream leader
        knows it. Not a direct get: on a replicated stream any replica answers
        those, and a lagging one would report an old head (a rejection would
        then be "verified" against a stale projection)."""
        try:
            msg = await self.js.get_last_msg(self.config.name, self.subject(match_id))
        except NotFoundError:
            return 0
        except nats.errors.Error as e:
            raise _read_failed(e) from None
        assert msg.seq is not None
        return msg.seq

    async def last(self, match_id: str) -> tuple[int, Commit] | None:
        try:
            msg = await self.js.get_last_msg(self.config.name, self.subject(match_id), direct=True)
        except NotFoundError:
            return None
        except nats.errors.Error as e:
            raise _read_failed(e) from None
        assert msg.seq is not None and msg.data is not None
        return msg.seq, self.decode(msg.data)

    async def commit_at(self, seq: int) -> Commit:
        """The commit at stream sequence ``seq`` (known to exist)."""
        try:
            try:
                msg = await self.js.get_msg(self.config.name, seq=seq, direct=True)
            except NotFoundError:  # a replica that has not caught up: ask the leader
                msg = await self.js.get_msg(self.config.name, seq=seq)
        except nats.errors.Error as e:
            raise _read_failed(e) from None
        assert msg.data is not None
        return self.decode(msg.data)

    async def first(self, match_id: str) -> tuple[int, Commit] | None:
        """The creation commit."""
        return await self.next_at(match_id, 1)

    async def next_at(self, match_id: str, seq: int) -> tuple[int, Commit] | None:
        """The match's first commit at sequence ``seq`` or later."""
        try:
            msg = await self.js.get_msg(
                self.config.name, seq=seq, subject=self.subject(match_id), next=True, direct=True
            )
        except NotFoundError:
            return None
        except nats.errors.Error as e:
            raise _read_failed(e) from None
        assert msg.seq is not None and msg.data is not None
        return msg.seq, self.decode(msg.data)

    async def seq_of_version(self, match_id: str, version: int, last_seq: int) -> int | None:
        """The stream sequence of the match's commit ``version`` (versions grow
        with sequences, so a binary search: a few direct gets, however long
        the stream)."""
        lo, hi = 1, last_seq
        while lo <= hi:
            found = await self.next_at(match_id, (lo + hi) // 2)
            if found is None:
                return None
            seq, commit = found
            if commit.version == version:
                return seq
            if commit.version < version:
                lo = seq + 1
            else:
                hi = (lo + hi) // 2 - 1
        return None

    async def commits(
        self,
        match_id: str,
        after_seq: int = 0,
        *,
        follow: bool = False,
        upto_seq: int | None = None,
    ) -> AsyncIterator[tuple[int, Commit]]:
        """Commits after ``after_seq`` up to the last one (or ``upto_seq``);
        with ``follow``, then every new one, forever."""
        if not follow:
            last = await self.last_seq(match_id) if upto_seq is None else upto_seq
            if last <= after_seq:
                return
            # Direct gets first (each one is the match's next commit, however
            # far the stream's sequence moved on); a consumer past a few.
            seq = after_seq
            for _ in range(_DIRECT_READ_LIMIT):
                if seq >= last:
                    return
                try:
                    msg = await self._next_msg(match_id, seq, direct=True)
                except NotFoundError:
                    # A direct get may be answered by a replica that has
                    # not caught up yet: ask the leader before concluding.
                    try:
                        msg = await self._next_msg(match_id, seq, direct=False)
                    except NotFoundError:
                        return
                    except nats.errors.Error as e:
                        raise _read_failed(e) from None
                except nats.errors.Error as e:  # timeout, no responders...
                    raise _read_failed(e) from None
                assert msg.seq is not None and msg.data is not None
                if msg.seq > last:
                    return
                seq = msg.seq
                yield seq, self.decode(msg.data)
            if seq >= last:
                return
            after_seq = seq
        else:
            last = None
        async for item in self._consume(match_id, after_seq, last):
            yield item

    async def _next_msg(self, match_id: str, seq: int, *, direct: bool) -> api.RawStreamMsg:
        """The match's first message after stream sequence ``seq``."""
        return await self.js.get_msg(
            self.config.name, seq=seq + 1, subject=self.subject(match_id), next=True, direct=direct
        )

    async def _consume(
        self, match_id: str, after_seq: int, last: int | None
    ) -> AsyncIterator[tuple[int, Commit]]:
        if after_seq > 0:
            config = api.ConsumerConfig(
                deliver_policy=api.DeliverPolicy.BY_START_SEQUENCE, opt_start_seq=after_seq + 1
            )
        else:
            config = api.ConsumerConfig(deliver_policy=api.DeliverPolicy.ALL)
        try:
            sub = await self.js.subscribe(
                self.subject(match_id),
                stream=self.config.name,
                ordered_consumer=True,
                config=config,
                idle_heartbeat=1.0,
            )
        except nats.errors.Error as e:  # e.g. a stream leader being elected
            raise StoreUnavailable(f"JetStream did not make a consumer: {e!r}") from None
        try:
            while True:
                timeout = None if last is None else self.timeout_s
                try:
                    msg = await sub.next_msg(timeout=timeout)
                except nats.errors.TimeoutError:
                    raise StoreUnavailable("JetStream stopped delivering commits") from None
                seq = msg.metadata.sequence.stream
                if seq <= after_seq:
                    continue
                yield seq, self.decode(msg.data)
                if last is not None and seq >= last:
                    return
        finally:
            with contextlib.suppress(Exception):
                await asyncio.shield(sub.unsubscribe())
