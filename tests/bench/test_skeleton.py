"""The architecture's skeleton (bench/skeleton.py) plays the benchmark's game
as our stack does: the same calls answered, every move appended to
JetStream with its expected sequence before any seat sees it."""

from __future__ import annotations

import asyncio

import grpc
import nats

from bench import skeleton
from services.common.servers import NatsServer
from tabletop.match.v1 import match_pb2, match_pb2_grpc

MOVES = [move for _, move in skeleton.DRAW]


async def _play(address: str) -> tuple[str, list[list[int]], list[str]]:
    async with grpc.aio.insecure_channel(address) as channel:
        stub = match_pb2_grpc.MatchServiceStub(channel)
        created = await stub.CreateMatch(
            match_pb2.CreateMatchRequest(game="tic_tac_toe", players=["a", "b"])
        )
        calls = [stub.PlayMatch() for _ in range(2)]
        opening = match_pb2.PlayRequest(open=match_pb2.PlayOpen(match_id=created.match_id))
        seen: list[list[int]] = [[], []]
        refs: list[str] = []
        for call in calls:
            await call.write(opening)
        for seat, call in enumerate(calls):  # the creation commit, on each stream
            seen[seat].append((await call.read()).commit.version)
        for i, move in enumerate(MOVES):
            mover = calls[i % 2]
            await mover.write(
                match_pb2.PlayRequest(move=match_pb2.PlayMove(ref=str(i), move_json=move))
            )
            for seat, call in enumerate(calls):
                frame = await call.read()
                seen[seat].append(frame.commit.version)
                if seat == i % 2:
                    refs.append(frame.ref)
        for call in calls:  # both streams end after the last commit
            assert await call.read() is grpc.aio.EOF
        return created.match_id, seen, refs


async def _stored(url: str, match_id: str) -> list[bytes]:
    nc = await nats.connect(url)
    try:
        js = nc.jetstream()
        sub = await js.subscribe(f"{skeleton.PREFIX}.{match_id}", ordered_consumer=True)
        out = []
        for _ in range(len(MOVES) + 1):
            out.append((await sub.next_msg(timeout=5)).data)
        return out
    finally:
        await nc.close()


def test_the_skeleton_plays_a_game_and_stores_every_commit() -> None:
    with NatsServer() as server:
        with skeleton.running(server) as (address, _pids):
            match_id, seen, refs = asyncio.run(_play(address))
        stored = asyncio.run(_stored(server.url, match_id))
    assert seen == [list(range(10)), list(range(10))]
    assert refs == [str(i) for i in range(9)]
    assert stored[0].startswith(b"created ")
    assert stored[1:] == [m.encode() for m in MOVES]


async def _submit(address: str) -> tuple[str, list[tuple[int, int, int]]]:
    async with grpc.aio.insecure_channel(address) as channel:
        stub = match_pb2_grpc.MatchServiceStub(channel)
        created = await stub.CreateMatch(
            match_pb2.CreateMatchRequest(game="tic_tac_toe", players=["a", "b"])
        )
        answers = []
        for _seat, move in skeleton.DRAW:
            reply = await stub.SubmitMove(
                match_pb2.SubmitMoveRequest(match_id=created.match_id, move_json=move)
            )
            answers.append((reply.version, reply.seat, reply.status))
        return created.match_id, answers


def test_the_skeleton_answers_submit_move_after_each_commit_is_stored() -> None:
    with NatsServer() as server:
        with skeleton.running(server) as (address, _pids):
            match_id, answers = asyncio.run(_submit(address))
        stored = asyncio.run(_stored(server.url, match_id))
    active, finished = match_pb2.MATCH_STATUS_ACTIVE, match_pb2.MATCH_STATUS_FINISHED
    assert answers == [
        (i + 1, seat, finished if i == 8 else active) for i, (seat, _) in enumerate(skeleton.DRAW)
    ]
    assert stored[1:] == [move.encode() for _, move in skeleton.DRAW]


async def _session(address: str) -> tuple[str, list[list[tuple[str, int]]]]:
    """One game on two PlaySession streams, as the session path's driver
    plays it: created on the first, a subscription on each."""
    async with grpc.aio.insecure_channel(address) as channel:
        stub = match_pb2_grpc.MatchServiceStub(channel)
        calls = [stub.PlaySession() for _ in range(2)]
        await calls[0].write(
            match_pb2.SessionRequest(
                create=match_pb2.SessionCreate(
                    ref="c", match=match_pb2.CreateMatchRequest(game="tic_tac_toe")
                )
            )
        )
        created = await calls[0].read()
        assert (created.WhichOneof("kind"), created.ref) == ("created", "c")
        match_id = created.created.match_id
        opening = match_pb2.SessionRequest(
            open=match_pb2.SessionOpen(sub="g", open=match_pb2.PlayOpen(match_id=match_id))
        )
        seen: list[list[tuple[str, int]]] = [[], []]
        for call in calls:
            await call.write(opening)
        for seat, call in enumerate(calls):
            frame = await call.read()
            seen[seat].append((frame.sub, frame.commit.version))
        for i, move in enumerate(MOVES):
            m = match_pb2.SessionMove(sub="g", move=match_pb2.PlayMove(ref=str(i), move_json=move))
            await calls[i % 2].write(match_pb2.SessionRequest(move=m))
            for seat, call in enumerate(calls):
                frame = await call.read()
                seen[seat].append((frame.sub, frame.commit.version))
        for call in calls:  # the session goes on after the match, until the client ends it
            await call.done_writing()
            assert await call.read() is grpc.aio.EOF
        return match_id, seen


def test_the_skeleton_plays_a_game_on_sessions_and_stores_every_commit() -> None:
    with NatsServer() as server:
        with skeleton.running(server) as (address, _pids):
            match_id, seen = asyncio.run(_session(address))
        stored = asyncio.run(_stored(server.url, match_id))
    assert seen == [[("g", v) for v in range(10)]] * 2
    assert stored[0].startswith(b"created ")
    assert stored[1:] == [m.encode() for m in MOVES]
