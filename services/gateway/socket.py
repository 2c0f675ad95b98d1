"""One WebSocket per page: live matches, tickets and pings over one socket.

The protocol (JSON text frames; docs/gateway.md has it in full):

client to gateway::

    {"op": "auth", "token": "<jwt>"}                      first, within 10 s
    {"op": "watch", "sub": "m1", "match_id": "...", "after_version": 12}
    {"op": "watch_ticket", "sub": "t1", "ticket_id": "..."}
    {"op": "watch_tournament", "sub": "x1", "tournament_id": "...", "after_seq": 0}
    {"op": "move", "sub": "m1", "ref": "r7", "move": {...}, "expected_version": 12,
     "idempotency_key": "...", "seat": 0}                 on a match subscription
    {"op": "unwatch", "sub": "m1"}
    {"op": "ping"}

gateway to client::

    {"type": "ready", "player_id": "guest:..."}
    {"type": "commit", "sub": "m1", "match_id": "...", "version": 13, "seat": 0,
     "events": [...], "view": {...}, "move": {...} | null, "status": "active",
     "outcome": null, "committed_at": "...", "clocks": [{"seat": 1, "deadline": "...",
     "remaining_ms": 61000 | null, "timeouts": 0, "taken_over": false}], "timeout": false,
     "turn": {"version": 13, "awaiting": [1], "legal_moves": [...], "your_seat": 1} | null,
     "ref": "r7"}                          "ref": set on the commit of this page's move
    {"type": "answer", "sub": "m1", "ref": "r7", "version": 13, "seat": 0, "status": "active"}
    {"type": "ticket", "sub": "t1", "ticket_id": "...", "state": "searching", ...}
    {"type": "tournament", "sub": "x1", "seq": 7, "event_type": "round_started", "event": {...}}
    {"type": "end", "sub": "m1"}           the match is over, everything was sent
    {"type": "error", "sub": "m1" | null, "status": "...", "reason": "...", "message": "...",
     "metadata": {...}, "ref": "r7"}       with "ref": one move refused, the sub goes on
    {"type": "pong"}

``after_version`` is the last version the page has: the stream starts right
after it, so a page that reconnects resumes with no gap and no duplicate. The
gateway itself resumes an upstream stream that fails (a match replica going
away) from the last version it sent. ``turn`` is present when the commit is
the match's newest: the seats awaited and the caller's legal moves, from the
match service (the gateway holds no rules).

A match subscription is a ``PlayMatch`` stream of the gateway's, opened with
the socket's token: a ``move`` on it goes on that stream (no HTTP request,
no unary call) and is answered once, naming its ``ref``: by the commit it
made, by an ``answer`` (its commit was sent before), or by an ``error`` with
``SubmitMove``'s status and reason. A move the stream had not answered when
it broke is an ``error`` ``UNAVAILABLE outcome_unknown`` naming the
``idempotency_key`` to send it again with (the gateway draws one for a move
sent without). ``POST /api/v1/matches/{id}/moves`` stays for any client.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import secrets
from typing import Any

from starlette.websockets import WebSocket, WebSocketDisconnect

from services.common.auth import Tokens
from services.common.errors import ServiceError
from services.common.logging import get_logger
from services.gateway import metrics
from services.gateway.app import (
    STATUS,
    GatewayApp,
    Play,
    check_id,
    commit_dict,
    move_fields,
    ticket_dict,
    turn_dict,
)
from services.gateway.errors import GatewayError, bad_request
from services.gateway.settings import GatewaySettings
from tabletop.match.v1 import match_pb2

log = get_logger("gateway")

AUTH_TIMEOUT_S = 10.0
MAX_FRAME = 16 * 1024
OUTBOX = 256  # frames queued for a slow page before the socket is closed
RESUME_ATTEMPTS = 5
MAX_REF = 256  # as PlayMove.ref
RESUMABLE = {"UNAVAILABLE", "DEADLINE_EXCEEDED", "INTERNAL", "UNKNOWN"}


def _resume_or_raise(error: GatewayError, attempts: int) -> None:
    """An upstream stream failed for the ``attempts``-th time in a row: go on
    (resume it) if the failure is one a resume mends and attempts are left,
    else ``error`` ends the subscription."""
    if error.status not in RESUMABLE or attempts > RESUME_ATTEMPTS:
        raise error
    metrics.SOCKET_RESUMES.inc()


class SocketSession:
    def __init__(
        self, ws: WebSocket, app: GatewayApp, tokens: Tokens, settings: GatewaySettings
    ) -> None:
        self.ws = ws
        self.app = app
        self.tokens = tokens
        self.settings = settings
        self.token = ""
        self.subs: dict[str, asyncio.Task[None]] = {}
        self.plays: dict[str, Play] = {}
        """Each match subscription's open stream, which its moves go on."""
        self.moving: dict[str, dict[str, str]] = {}
        """Each match subscription's moves not answered yet (ref -> idempotency key)."""
        self.outbox: asyncio.Queue[dict[str, Any] | None] = asyncio.Queue(OUTBOX)
        self.closed = False
        self._close_code = 1000
        self._writer: asyncio.Task[None] | None = None
        self._closing: asyncio.Future[None] | None = None

    async def run(self) -> None:
        await self.ws.accept()
        metrics.SOCKETS.inc()
        writer = self._writer = asyncio.create_task(self._write())
        try:
            if await self._authenticate():
                await self._read()
        except WebSocketDisconnect:
            pass
        finally:
            for task in self.subs.values():
                task.cancel()
            await asyncio.gather(*self.subs.values(), return_exceptions=True)
            if not self.closed:
                writer.cancel()
            await asyncio.gather(writer, return_exceptions=True)
            metrics.SOCKETS.dec()

    # ------------------------------------------------------------ plumbing
    def send(self, frame: dict[str, Any]) -> None:
        if self.closed:
            return
        try:
            self.outbox.put_nowait(frame)
        except asyncio.QueueFull:  # the page does not read: it reconnects and resumes
            log.info("socket_slow_reader_closed")
            self.closed = True
            if self._writer is not None:
                self._writer.cancel()
            self._closing = asyncio.ensure_future(self._close(1013))

    def close(self, code: int = 1000) -> None:
        """Close once the frames already queued are sent."""
        if not self.closed:
            self._close_code = code
            self.closed = True
            try:
                self.outbox.put_nowait(None)
            except asyncio.QueueFull:
                if self._writer is not None:
                    self._writer.cancel()
                self._closing = asyncio.ensure_future(self._close(code))

    async def _close(self, code: int) -> None:
        with contextlib.suppress(Exception):
            await self.ws.close(code=code)

    async def _write(self) -> None:
        while True:
            frame = await self.outbox.get()
            if frame is None:
                await self._close(self._close_code)
                return
            metrics.SOCKET_FRAMES.labels(frame.get("type", "")).inc()
            try:
                await self.ws.send_text(json.dumps(frame, separators=(",", ":")))
            except Exception:  # the socket went away: the reader notices
                return

    def error(self, sub: str | None, e: GatewayError, *, ref: str | None = None) -> None:
        """An error frame: of a subscription (which then ends), or with
        ``ref``, of one move (the subscription goes on)."""
        frame: dict[str, Any] = {
            "type": "error",
            "sub": sub,
            "status": e.status,
            "reason": e.reason,
            "message": e.message[:500],
        }
        if e.metadata:
            frame["metadata"] = e.metadata
        if ref is not None:
            frame["ref"] = ref
        self.send(frame)

    async def _message(self) -> dict[str, Any] | None:
        raw = await self.ws.receive_text()
        if len(raw) > MAX_FRAME:
            self.error(
                None, bad_request("frame_too_large", f"frames are at most {MAX_FRAME} bytes")
            )
            return None
        try:
            msg = json.loads(raw)
        except RecursionError:
            self.error(None, bad_request("json_too_deep", "the frame is nested too deeply"))
            return None
        except ValueError:
            self.error(None, bad_request("bad_json", "frames are JSON objects"))
            return None
        if not isinstance(msg, dict) or not isinstance(msg.get("op"), str):
            self.error(None, bad_request("bad_frame", 'frames are objects with an "op"'))
            return None
        return msg

    # -------------------------------------------------------------- phases
    async def _authenticate(self) -> bool:
        try:
            async with asyncio.timeout(AUTH_TIMEOUT_S):
                msg = await self._message()
        except TimeoutError:
            self.error(None, GatewayError("UNAUTHENTICATED", "missing_token", "send auth first"))
            self.close(1008)
            return False
        token = msg.get("token") if msg is not None and msg.get("op") == "auth" else None
        if not isinstance(token, str) or not token:
            self.error(
                None,
                GatewayError(
                    "UNAUTHENTICATED", "missing_token", 'the first frame is {"op": "auth"}'
                ),
            )
            self.close(1008)
            return False
        try:
            principal = self.tokens.verify(token)
        except ServiceError as e:
            log.warning("socket_auth_failed", reason=e.reason)
            self.error(None, GatewayError("UNAUTHENTICATED", e.reason, e.message))
            self.close(1008)
            return False
        self.token = token
        self.send({"type": "ready", "player_id": principal.subject})
        return True

    async def _read(self) -> None:
        while True:
            msg = await self._message()
            if msg is None:
                continue
            op = msg["op"]
            try:
                if op == "ping":
                    self.send({"type": "pong"})
                elif op == "move":
                    await self._move(msg)
                elif op == "watch":
                    self._start(msg, self._watch_match)
                elif op == "watch_ticket":
                    self._start(msg, self._watch_ticket)
                elif op == "watch_tournament":
                    self._start(msg, self._watch_tournament)
                elif op == "unwatch":
                    task = self.subs.pop(str(msg.get("sub", "")), None)
                    if task is not None:
                        task.cancel()
                elif op == "auth":
                    raise bad_request("already_authenticated", "this socket is signed in")
                else:
                    raise bad_request("unknown_op", f"unknown op {op[:40]!r}")
            except GatewayError as e:
                sub = msg.get("sub")
                ref = msg.get("ref") if op == "move" else None
                self.error(
                    sub if isinstance(sub, str) else None,
                    e,
                    ref=ref if isinstance(ref, str) and len(ref) <= MAX_REF else None,
                )

    def _start(self, msg: dict[str, Any], run: Any) -> None:
        sub = msg.get("sub")
        if not isinstance(sub, str) or not 0 < len(sub) <= 64:
            raise bad_request("bad_sub", "sub must be a string of 1..64 characters")
        if sub in self.subs:
            raise bad_request("sub_in_use", f"sub {sub!r} is already streaming")
        if len(self.subs) >= self.settings.max_socket_subscriptions:
            raise GatewayError("RESOURCE_EXHAUSTED", "too_many_streams", "unwatch something first")
        task = asyncio.create_task(self._guard(sub, run(sub, msg)))
        self.subs[sub] = task

    async def _guard(self, sub: str, body: Any) -> None:
        try:
            await body
        except GatewayError as e:
            self.error(sub, e)
        except asyncio.CancelledError:
            raise
        except Exception:
            log.exception("socket_stream_failed")
            self.error(sub, GatewayError("INTERNAL", "internal", "the stream failed"))
        finally:
            if self.subs.get(sub) is asyncio.current_task():
                del self.subs[sub]

    # ------------------------------------------------------------- streams
    async def _watch_match(self, sub: str, msg: dict[str, Any]) -> None:
        match_id = check_id(msg.get("match_id"), "match_id")
        after = msg.get("after_version")
        if after is not None and (
            isinstance(after, bool) or not isinstance(after, int) or not 0 <= after < 2**53
        ):
            raise bad_request("bad_after_version", "after_version is a non-negative integer")
        attempts = 0
        pending = self.moving[sub] = {}  # this sub's moves sent, not answered: ref -> key
        try:
            while True:
                play: Play | None = None
                try:
                    play = await self.app.play(self.token, match_id, after)
                    self.plays[sub] = play
                    async for f in play.frames():
                        attempts = 0
                        kind = f.WhichOneof("kind")
                        ref = f.ref
                        if ref:
                            pending.pop(ref, None)
                        if kind == "commit":
                            c = f.commit
                            frame = {"type": "commit", "sub": sub, "match_id": match_id}
                            frame.update(commit_dict(c))
                            frame["turn"] = (
                                turn_dict(c)
                                if c.HasField("turn")
                                else await self._turn(match_id, c)
                            )
                            if ref:
                                frame["ref"] = ref
                            self.send(frame)
                            after = c.version
                            if c.status == match_pb2.MATCH_STATUS_FINISHED:
                                self.send({"type": "end", "sub": sub})
                                return
                        elif kind == "answer":
                            a = f.answer
                            self.send(
                                {
                                    "type": "answer",
                                    "sub": sub,
                                    "ref": ref,
                                    "version": a.version,
                                    "seat": a.seat,
                                    "status": STATUS.get(a.status, "active"),
                                }
                            )
                        elif kind == "error":
                            err = f.error
                            e = GatewayError(err.code, err.reason, err.message, dict(err.metadata))
                            self.error(sub, e, ref=ref)
                    return
                except GatewayError as e:
                    attempts += 1
                    _resume_or_raise(e, attempts)
                finally:
                    self.plays.pop(sub, None)
                    if play is not None:
                        play.cancel()
                    self._unanswered(sub, pending)
                await asyncio.sleep(0.2 * attempts)
        finally:
            if self.moving.get(sub) is pending:
                del self.moving[sub]

    def _unanswered(self, sub: str, pending: dict[str, str]) -> None:
        """The moves a stream that ended had not answered: of unknown outcome
        (each may have been played), to send again with its key."""
        for ref, key in pending.items():
            self.error(
                sub,
                GatewayError(
                    "UNAVAILABLE",
                    "outcome_unknown",
                    "the stream ended before the move was answered: it may have been "
                    "played; send it again with this idempotency_key to know",
                    {"idempotency_key": key},
                ),
                ref=ref,
            )
        pending.clear()

    async def _move(self, msg: dict[str, Any]) -> None:
        """A move on a match subscription's stream; answered on the socket by
        the frame naming its ``ref`` (its commit, an ``answer`` or an ``error``)."""
        sub, ref = msg.get("sub"), msg.get("ref")
        if not isinstance(ref, str) or not 0 < len(ref) <= MAX_REF:
            raise bad_request("bad_ref", f"ref must be a string of 1..{MAX_REF} characters")
        play = self.plays.get(sub) if isinstance(sub, str) else None
        pending = self.moving.get(sub) if isinstance(sub, str) else None
        if play is None or pending is None:
            if isinstance(sub, str) and sub in self.moving:
                raise GatewayError(
                    "UNAVAILABLE", "stream_resuming", "the match stream is resuming: move again"
                )
            raise GatewayError(
                "FAILED_PRECONDITION",
                "not_watching",
                "moves go on a match subscription of this socket: watch the match first",
            )
        if ref in pending:
            raise bad_request("ref_in_use", f"ref {ref[:40]!r} has a move on its way")
        move_json, key, expected_version, seat = move_fields(msg)
        key = key or secrets.token_hex(16)  # so that an unknown outcome can name it
        pending[ref] = key
        try:
            await play.move(ref, move_json, key, expected_version, seat)
        except GatewayError:
            pending.pop(ref, None)
            raise

    async def _turn(self, match_id: str, c: match_pb2.MatchCommit) -> dict[str, Any] | None:
        """Whose input the match waits for and the caller's legal moves, when
        ``c`` is still the newest commit, for a commit that carries no turn: a
        resumed watch's backlog (newer commits follow), or a match service of
        before ``include_turn``."""
        try:
            m = await self.app.get_match(self.token, match_id, view=False)  # the frame has it
        except GatewayError:
            return None
        if m["version"] != c.version:
            return None  # newer commits are on their way
        return {
            "version": m["version"],
            "awaiting": m["awaiting"],
            "legal_moves": m["legal_moves"],
            "your_seat": m["your_seat"],
            "server_time": m["server_time"],
        }

    async def _watch_ticket(self, sub: str, msg: dict[str, Any]) -> None:
        ticket_id = check_id(msg.get("ticket_id"), "ticket_id")
        async for u in self.app.watch_ticket(self.token, ticket_id):
            frame = {"type": "ticket", "sub": sub}
            frame.update(ticket_dict(u))
            self.send(frame)
            if frame["state"] != "searching":
                self.send({"type": "end", "sub": sub})
                return

    async def _watch_tournament(self, sub: str, msg: dict[str, Any]) -> None:
        tournament_id = check_id(msg.get("tournament_id"), "tournament_id")
        after = msg.get("after_seq", 0)
        if isinstance(after, bool) or not isinstance(after, int) or not 0 <= after < 2**53:
            raise bad_request("bad_after_seq", "after_seq is a non-negative integer")
        attempts = 0
        while True:
            try:
                async for e in self.app.watch_tournament(self.token, tournament_id, after):
                    attempts = 0
                    after = e.seq
                    self.send(
                        {
                            "type": "tournament",
                            "sub": sub,
                            "tournament_id": tournament_id,
                            "seq": e.seq,
                            "event_type": e.type,
                            "event": json.loads(e.event_json) if e.event_json else None,
                        }
                    )
                    if e.type == "finished":
                        self.send({"type": "end", "sub": sub})
                        return
                return
            except GatewayError as e:
                attempts += 1
                _resume_or_raise(e, attempts)
                await asyncio.sleep(0.2 * attempts)
