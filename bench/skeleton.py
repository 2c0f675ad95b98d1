"""The architecture's skeleton: what the messages of a move cost with no
logic around them, on the boardgame.io workload.

Two processes take the places of the match and rules services, with every
message a move makes in our stack and nothing else:

* ``rules``: a bare grpc.aio server with one bidi stream that echoes each
  message (a batch of requests, each a request id and ~200 bytes, as the
  rules stream's ``ApplyMoves`` batches are): no protobuf, no engine;
* ``match``: a grpc.aio server of ``tabletop.match.v1.MatchService`` answering
  only ``CreateMatch``, ``PlayMatch``, ``PlaySession`` and ``SubmitMove``. ``CreateMatch``
  appends the creation commit to JetStream (file storage,
  ``Nats-Expected-Last-Subject-Sequence``) and answers once it is
  acknowledged; each move read on a ``PlayMatch`` stream, or sent with
  ``SubmitMove``, goes to the rules stream (batched with the others
  waiting), then is appended with the match's expected sequence, and once
  acknowledged a commit frame goes to both seats' streams (and
  ``SubmitMove`` answers); the match ends after 9 moves. ``PlaySession``
  does the same on one stream per client: creates (answered ``created``),
  opens (version 0 under the subscription's name) and moves (each commit
  frame to every seat's subscription).
  One push consumer (``AckNone``) delivers every commit back to the process,
  as the match service's watch tap does (the deliveries are only counted).

Not there, each of which our match service does per move or per game: the
token check, the bounds check, idempotency keys, the engine's decision and
its state bytes, redaction per seat, clocks, the projection's write to
Redis, the index and the ``MatchFinished`` fact, metrics and logs. The
transports are the same: grpc.aio on uvloop with the services' gRPC
settings (``services/__init__.py``), nats-py, and nats-server as the
benchmarks start it. So the skeleton's throughput is a ceiling for any
Python code on this architecture and machine, and our stack's ratio to it
is what the logic costs.

``run_skeleton(G, seconds, mode)`` drives it with the Node driver of the
play path or of the session path (``bench/boardgameio/tabletop_driver.js``,
unchanged), and reports what
``bench.boardgameio.run_ours`` reports. ``run_latency(moves)`` measures one
move at a time with the clients of ``bench.match_e2e`` (its ``sequential``
and ``sequential_play``, on 9-move games): the least a move's round trip
can take on this architecture, against which the end-to-end goal's 3x the
floor can be read. ``python -m bench.skeleton [--loops 1,10,50,200]
[--seconds 5] [--latency MOVES]`` prints it as JSON.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import itertools
import json
import os
import struct
import subprocess
import sys
from collections import deque
from collections.abc import Iterator
from typing import Any

import grpc
import nats
from nats.js import api

from services.common.eventloop import run as run_loop
from services.common.servers import NatsServer, free_port
from tabletop.match.v1 import match_pb2, match_pb2_grpc

STREAM = "SKELETON"
PREFIX = "match"
ECHO = "/tabletop.skeleton.Rules/Apply"
MOVES_PER_GAME = 9
PAYLOAD = b"s" * 200
"""About a tic-tac-toe ``ApplyMove``'s state bytes and move."""
_ID = struct.Struct("<I")


# ------------------------------------------------------------------ rules
async def serve_rules(port: int) -> None:
    async def apply(requests: Any, context: grpc.aio.ServicerContext) -> Any:
        async for batch in requests:
            yield batch

    handler = grpc.method_handlers_generic_handler(
        "tabletop.skeleton.Rules", {"Apply": grpc.stream_stream_rpc_method_handler(apply)}
    )
    server = grpc.aio.server()
    server.add_generic_rpc_handlers((handler,))
    server.add_insecure_port(f"127.0.0.1:{port}")
    await server.start()
    await server.wait_for_termination()


class _Rules:
    """One stream to the rules; requests waiting while a batch is out go
    together in the next one; answers come in order."""

    def __init__(self, channel: grpc.aio.Channel) -> None:
        self.call = channel.stream_stream(ECHO)()
        self.queued: list[tuple[int, asyncio.Future[bytes]]] = []
        self.out: deque[list[asyncio.Future[bytes]]] = deque()
        self.ids = itertools.count()
        self.wake = asyncio.Event()
        self.tasks = [asyncio.ensure_future(self._write()), asyncio.ensure_future(self._read())]

    def apply(self) -> asyncio.Future[bytes]:
        future = asyncio.get_running_loop().create_future()
        self.queued.append((next(self.ids), future))
        self.wake.set()
        return future

    async def _write(self) -> None:
        while True:
            await self.wake.wait()
            self.wake.clear()
            batch, self.queued = self.queued, []
            self.out.append([f for _, f in batch])
            await self.call.write(b"".join(_ID.pack(i) + PAYLOAD for i, _ in batch))

    async def _read(self) -> None:
        size = _ID.size + len(PAYLOAD)
        async for message in self.call:
            futures = self.out.popleft()
            for k, future in enumerate(futures):
                future.set_result(message[k * size + _ID.size : (k + 1) * size])


# ------------------------------------------------------------------ match
class _Acks:
    """JetStream's acks on one wildcard inbox, a future per append."""

    def __init__(self, nc: Any) -> None:
        self.nc = nc
        self.prefix = nc.new_inbox() + "."
        self.waiting: dict[str, asyncio.Future[bytes]] = {}
        self.ids = itertools.count()

    async def open(self) -> None:
        await self.nc.subscribe(self.prefix + "*", future=self)

    def cancelled(self) -> bool:  # nats-py hands each message to set_result
        return False

    def set_result(self, msg: Any) -> None:
        future = self.waiting.pop(msg.subject[len(self.prefix) :], None)
        if future is not None:
            future.set_result(msg.data)

    async def append(self, match_id: str, expected_seq: int, data: bytes) -> int:
        token = format(next(self.ids), "x")
        future = asyncio.get_running_loop().create_future()
        self.waiting[token] = future
        headers = {
            "Nats-Expected-Last-Subject-Sequence": str(expected_seq),
            "Nats-Expected-Stream": STREAM,
        }
        await self.nc.publish(
            f"{PREFIX}.{match_id}", data, reply=self.prefix + token, headers=headers
        )
        ack = json.loads(await future)
        if "error" in ack:
            raise RuntimeError(f"append refused: {ack['error']}")
        return int(ack["seq"])


class _Tap:
    """The process's one consumer of every commit (deliveries counted)."""

    def __init__(self) -> None:
        self.delivered = 0

    def cancelled(self) -> bool:
        return False

    def set_result(self, msg: Any) -> None:
        self.delivered += 1


_END = object()


class _Match:
    __slots__ = ("seats", "seq", "version")

    def __init__(self, seq: int) -> None:
        self.seq = seq
        self.version = 0
        self.seats: list[tuple[asyncio.Queue[Any], str | None]] = []
        """Each seat's queue of frames, and its subscription's name on a
        session (None: a ``PlayMatch`` stream, which ends with the match)."""


class Skeleton(match_pb2_grpc.MatchServiceServicer):
    def __init__(self, acks: _Acks, rules: _Rules) -> None:
        self.acks = acks
        self.rules = rules
        self.matches: dict[str, _Match] = {}

    async def CreateMatch(self, request: Any, context: Any) -> Any:
        match_id = os.urandom(8).hex()
        seq = await self.acks.append(match_id, 0, b"created " + PAYLOAD)
        self.matches[match_id] = _Match(seq)
        return match_pb2.CreateMatchResponse(match_id=match_id, version=0)

    async def PlayMatch(self, requests: Any, context: Any) -> Any:
        opening = await anext(aiter(requests))
        match = self.matches[opening.open.match_id]
        seat = len(match.seats)
        queue: asyncio.Queue[Any] = asyncio.Queue()
        match.seats.append((queue, None))
        mover = asyncio.ensure_future(self._moves(match, opening.open.match_id, seat, requests))
        try:
            yield match_pb2.PlayFrame(
                commit=match_pb2.MatchCommit(version=0, status=match_pb2.MATCH_STATUS_ACTIVE)
            )
            while (frame := await queue.get()) is not _END:
                yield frame
        finally:
            mover.cancel()

    async def PlaySession(self, requests: Any, context: Any) -> Any:
        """Creates, opens and moves on one stream: a create appends the
        creation commit and answers ``created``; an open answers version 0
        under its subscription; a move goes as a ``PlayMatch`` move does,
        its commit frame to each seat's subscription."""
        out: asyncio.Queue[Any] = asyncio.Queue()
        reader = asyncio.ensure_future(self._session_requests(requests, out))
        try:
            while (frame := await out.get()) is not _END:
                yield frame
        finally:
            reader.cancel()

    async def _session_requests(self, requests: Any, out: asyncio.Queue[Any]) -> None:
        subs: dict[str, tuple[_Match, str, int]] = {}
        tasks: set[asyncio.Task[Any]] = set()  # (held: a task is only weakly referenced)
        async for request in requests:
            kind = request.WhichOneof("kind")
            if kind == "move":
                match, match_id, seat = subs[request.move.sub]
                m = request.move.move
                task = asyncio.ensure_future(self._move(match, match_id, seat, m.move_json, m.ref))
            elif kind == "open":
                name, match_id = request.open.sub, request.open.open.match_id
                match = self.matches[match_id]
                subs[name] = (match, match_id, len(match.seats))
                match.seats.append((out, name))
                commit = match_pb2.MatchCommit(version=0, status=match_pb2.MATCH_STATUS_ACTIVE)
                out.put_nowait(match_pb2.SessionFrame(sub=name, commit=commit))
                continue
            else:  # create
                task = asyncio.ensure_future(self._session_create(request.create.ref, out))
            tasks.add(task)
            task.add_done_callback(tasks.discard)
        out.put_nowait(_END)

    async def _session_create(self, ref: str, out: asyncio.Queue[Any]) -> None:
        created = await self.CreateMatch(None, None)
        out.put_nowait(match_pb2.SessionFrame(ref=ref, created=created))

    async def SubmitMove(self, request: Any, context: Any) -> Any:
        """The unary path's move: the same messages as a move on a
        ``PlayMatch`` stream, the answer a ``SubmitMoveResponse`` (the
        seats alternate, as the benchmark's games do)."""
        match = self.matches[request.match_id]
        seat = match.version % 2
        commit = await self._move(match, request.match_id, seat, request.move_json, "")
        return match_pb2.SubmitMoveResponse(
            version=commit.version,
            seat=seat,
            events_json=commit.events_json,
            status=commit.status,
        )

    async def _moves(self, match: _Match, match_id: str, seat: int, requests: Any) -> None:
        async for request in requests:
            commit = await self._move(
                match, match_id, seat, request.move.move_json, request.move.ref
            )
            if commit.status == match_pb2.MATCH_STATUS_FINISHED:
                return

    async def _move(self, match: _Match, match_id: str, seat: int, move_json: str, ref: str) -> Any:
        """One move: the rules stream, the append with the match's expected
        sequence, then a frame to each seat's stream; the commit."""
        await self.rules.apply()
        version = match.version + 1
        match.seq = await self.acks.append(match_id, match.seq, move_json.encode())
        match.version = version
        done = version == MOVES_PER_GAME
        commit = match_pb2.MatchCommit(
            version=version,
            seat=seat,
            events_json=[move_json],
            move_json=move_json,
            status=match_pb2.MATCH_STATUS_FINISHED if done else match_pb2.MATCH_STATUS_ACTIVE,
            committed_at="2026-01-01T00:00:00.000Z",
        )
        frame = match_pb2.PlayFrame(ref=ref, commit=commit)
        for queue, sub in match.seats:
            if sub is None:
                queue.put_nowait(frame)
                if done:
                    queue.put_nowait(_END)
            else:
                queue.put_nowait(match_pb2.SessionFrame(sub=sub, ref=ref, commit=commit))
        if done:
            del self.matches[match_id]
        return commit


async def serve_match(port: int, nats_url: str, rules_addr: str) -> None:
    nc = await nats.connect(nats_url)
    js = nc.jetstream()
    info = await js.stream_info(STREAM)
    inbox = nc.new_inbox()
    tap = _Tap()
    await nc.subscribe(inbox, future=tap)  # type: ignore[arg-type]
    await js.add_consumer(
        STREAM,
        config=api.ConsumerConfig(
            deliver_subject=inbox,
            deliver_policy=api.DeliverPolicy.BY_START_SEQUENCE,
            opt_start_seq=info.state.last_seq + 1,
            ack_policy=api.AckPolicy.NONE,
            filter_subject=f"{PREFIX}.*",
            mem_storage=True,
        ),
    )
    acks = _Acks(nc)
    await acks.open()
    channel = grpc.aio.insecure_channel(rules_addr)
    server = grpc.aio.server()
    match_pb2_grpc.add_MatchServiceServicer_to_server(Skeleton(acks, _Rules(channel)), server)
    server.add_insecure_port(f"127.0.0.1:{port}")
    await server.start()
    await server.wait_for_termination()


# ------------------------------------------------------------- the bench
def _start(args: list[str], port: int) -> subprocess.Popen[str]:
    from bench.match_e2e import start_module

    return start_module(["bench.skeleton", *args], port, f"skeleton {args[0]}")


async def _make_stream(url: str) -> None:
    nc = await nats.connect(url)
    try:
        await nc.jetstream().add_stream(
            api.StreamConfig(name=STREAM, subjects=[f"{PREFIX}.*"], storage=api.StorageType.FILE)
        )
    finally:
        await nc.close()


@contextlib.contextmanager
def running(server: NatsServer) -> Iterator[tuple[str, dict[str, int]]]:
    """The skeleton on ``server`` (its stream made, both processes started):
    the match service's address and the pids of the three processes."""
    asyncio.run(_make_stream(server.url))
    rules_port, match_port = free_port(), free_port()
    rules = _start(["rules"], rules_port)
    try:
        match = _start(
            ["match", "--nats", server.url, "--rules", f"127.0.0.1:{rules_port}"], match_port
        )
        try:
            pids = {"match": match.pid, "rules": rules.pid, "nats": server.pid}
            yield f"127.0.0.1:{match_port}", pids
        finally:
            match.terminate()
            match.wait(15)
    finally:
        rules.terminate()
        rules.wait(15)


def run_skeleton(loops: int, seconds: float, mode: str = "play") -> dict[str, Any]:
    """The skeleton on the play path's workload from Node (``mode``
    ``session``: the session path's): the figures of
    ``bench.boardgameio.run_ours`` (moves/s, latency, CPU per move)."""
    from bench.boardgameio import _children_cpu_s, _drive_ours_from_node
    from bench.match_e2e import _cpu_s

    with NatsServer() as server, running(server) as (address, pids):
        _drive_ours_from_node(address, 2, 0.5, mode)  # warm up
        before = {k: _cpu_s(p) for k, p in pids.items()}
        client0 = _children_cpu_s()
        figures = _drive_ours_from_node(address, loops, seconds, mode)
        client = _children_cpu_s() - client0
        after = {k: _cpu_s(p) for k, p in pids.items()}
    moves = max(1, figures["moves"])
    cpu = {k: (after[k] - before[k]) * 1000 / moves for k in pids}
    cpu["total_servers"] = sum(cpu.values())
    figures["cpu_ms_per_move"] = cpu
    figures["client_cpu_ms_per_move"] = client * 1000 / moves
    figures["path"] = "skeleton" if mode == "play" else f"skeleton_{mode}"
    return figures


DRAW = [
    (i % 2, f'{{"type":"place_mark","cell":{cell}}}')
    for i, cell in enumerate((0, 1, 2, 4, 3, 5, 7, 6, 8))
]
"""A 9-move tic-tac-toe draw as (seat, move JSON), the benchmark's game."""


def run_latency(moves: int = 2000) -> dict[str, Any]:
    """One move at a time, as ``bench.match_e2e.run`` measures our stack
    (``PlayMatch`` first, then ``SubmitMove``, on the same clients): each
    path's latency and the servers' CPU per move (warm-up and creations
    included, as there)."""
    from bench.match_e2e import _cpu_s, _PlayClient, _sequential

    out: dict[str, Any] = {}
    with NatsServer() as server, running(server) as (address, pids):
        for key, client in (("sequential_play", _PlayClient), ("sequential", None)):
            before = {k: _cpu_s(p) for k, p in pids.items()}
            figures = asyncio.run(_sequential(address, moves, client, scripts=[DRAW]))
            after = {k: _cpu_s(p) for k, p in pids.items()}
            figures["cpu_ms_per_move"] = {
                k: (after[k] - before[k]) * 1000 / figures["moves"] for k in pids
            }
            out[key] = figures
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.skeleton", description=__doc__)
    parser.add_argument("role", nargs="?", choices=("rules", "match"), help="(internal)")
    parser.add_argument("--port", type=int)
    parser.add_argument("--nats")
    parser.add_argument("--rules")
    parser.add_argument("--loops", default="1,10,50,200")
    parser.add_argument("--seconds", type=float, default=5.0)
    parser.add_argument(
        "--latency", type=int, metavar="MOVES", help="one move at a time instead (run_latency)"
    )
    args = parser.parse_args(argv)
    if args.role == "rules":
        run_loop(serve_rules(args.port))
        return 0
    if args.role == "match":
        run_loop(serve_match(args.port, args.nats, args.rules))
        return 0
    if args.latency:
        print(json.dumps(run_latency(args.latency), indent=2))
        return 0
    out = [run_skeleton(int(g), args.seconds) for g in args.loops.split(",")]
    print(json.dumps(out, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
