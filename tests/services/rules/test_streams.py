"""ApplyMoves: ApplyMove calls batched over long-lived streams (``MoveStreams``).

Real servers: in-process ``build_server`` servers, and rules service processes
for the kill of a replica mid-stream."""

from __future__ import annotations

import asyncio
import collections
import io
import json
import urllib.request

import grpc
import pytest
from prometheus_client import REGISTRY

from services.common.auth import AuthSettings, ServiceToken, Tokens
from services.common.errors import error_info
from services.common.logging import configure_logging
from services.rules.client import RulesClient, RulesError
from services.rules.process import RulesProcess
from services.rules.server import build_server
from services.rules.settings import RulesSettings
from tabletop.rules.v1 import rules_pb2, rules_pb2_grpc
from tests.waiting import until

SERVICE = "tabletop.rules.v1.RulesService"
SECRET = "rules-stream-secret-0123456789-0123456789"


def mark(cell: int) -> str:
    return json.dumps({"type": "place_mark", "cell": cell})


@pytest.fixture
async def server():
    server = build_server(RulesSettings(host="127.0.0.1", port=0, grace_seconds=0.1))
    await server.start()
    yield server
    await server.stop(0.1)


@pytest.fixture
async def streamed(server):
    # one server: nowhere to spread the streams to (see the spread tests)
    async with RulesClient(server.address, timeout=10, streams=2, spread_attempts=0) as client:
        yield client


def assert_same_refusal(got: object, expected: RulesError, call: object) -> None:
    """A streamed call's answer is the refusal the unary call gave: its
    status, reason, message and metadata."""
    assert isinstance(got, RulesError), (call, got)
    assert (got.status, got.reason, got.message, got.metadata) == (
        expected.status,
        expected.reason,
        expected.message,
        expected.metadata,
    )


def count(method: str, code: str = "OK") -> float:
    labels = {"service": SERVICE, "method": method, "code": code}
    return REGISTRY.get_sample_value("tabletop_rpc_seconds_count", labels) or 0.0


async def test_concurrent_calls_are_batched_and_each_counted_as_apply_move(streamed) -> None:
    new = await streamed.new_game("tic_tac_toe", 2, entropy=b"seed")
    before, streams_before = count("ApplyMove"), count("ApplyMoves")
    played = await asyncio.gather(
        *(streamed.apply_move("", new.state, 0, mark(i % 9)) for i in range(300))
    )
    for i, p in enumerate(played):
        assert json.loads(p.events[0]) == {"type": "mark_placed", "seat": 0, "cell": i % 9}
        assert p.status.awaiting == (1,)
    mux = streamed.streams
    assert mux.calls == 300 and mux.resent == 0 and mux.opened == 2
    # calls queued while a write was in flight went together
    assert mux.messages < 100, mux.messages
    # sent at once, in turns of 32 calls from the first stream on (300 = 9
    # turns and 12 calls): the tenth turn, the second stream's, has 20 left
    assert (mux._turn, mux._turn_left) == (1, 20)
    # the server counted 300 ApplyMove calls (and no stream has ended yet)
    assert count("ApplyMove") - before == 300
    assert count("ApplyMoves") == streams_before


async def test_a_bad_call_is_answered_alone_as_apply_move_answers_it(server, streamed) -> None:
    new = await streamed.new_game("tic_tac_toe", 2)
    one = await streamed.apply_move("", new.state, 0, mark(4))
    bad = [
        ("", one.state, 1, mark(4)),  # cell_taken
        ("", one.state, 0, mark(0)),  # not_your_turn
        ("", one.state, 1, "{"),  # malformed_move
        ("", one.state, 1, mark(99)),  # no_such_cell
        ("x" * 300, one.state, 1, mark(0)),  # field_too_long (bounds, per call)
        ("chess", one.state, 1, mark(0)),  # unknown_game
        ("", b"\x93\x01\x02", 1, mark(0)),  # corrupt_state
    ]
    good = [("", one.state, 1, mark(c)) for c in (0, 1, 2)]
    calls = [*bad, *good]
    results = await asyncio.gather(
        *(streamed.apply_move(*c) for c in calls), return_exceptions=True
    )
    async with RulesClient(server.address, timeout=10) as unary:
        for call, got in zip(calls, results, strict=True):
            try:
                expected = await unary.apply_move(*call)
            except RulesError as e:
                assert_same_refusal(got, e, call)
            else:
                assert not isinstance(got, BaseException), got
                assert (got.events, got.redacted, got.status) == (
                    expected.events,
                    expected.redacted,
                    expected.status,
                )
    reasons = [r.reason for r in results[: len(bad)]]
    assert reasons == [
        "cell_taken",
        "not_your_turn",
        "malformed_move",
        "no_such_cell",
        "field_too_long",
        "unknown_game",
        "corrupt_state",
    ]
    # no stream broke for them (each one opened is still open)
    mux = streamed.streams
    assert mux.resent == 0
    assert mux.opened == len([s for s in mux._streams if s is not None and not s.reader.done()])


async def test_new_game_calls_go_on_a_stream_and_answer_as_new_game_does(server, streamed) -> None:
    # the first goes unary: no stream is open yet, and a NewGame call opens none
    first = await streamed.new_game("tic_tac_toe", 2, entropy=b"seed")
    mux = streamed.streams
    assert (mux.calls, mux.opened) == (0, 0)
    await streamed.apply_move("", first.state, 0, mark(4))  # opens a stream
    assert mux.opened == 1 and await until(lambda: "new_game" in mux._streams[0].takes)
    codes = ("OK", "INVALID_ARGUMENT", "NOT_FOUND")
    before = {code: count("NewGame", code) for code in codes}
    calls = [
        ("tic_tac_toe", 2, None, b"seed"),
        ("dice_forge", 3, None, b"df"),
        ("tic_tac_toe", 3, None, b""),  # bad_player_count (with the bounds in metadata)
        ("chess", 2, None, b""),  # unknown_game: NOT_FOUND
        ("tic_tac_toe", 2, "{", b""),  # malformed_options
        ("tic_tac_toe", 2, None, b"x" * 5000),  # entropy_too_large
        ("x" * 300, 2, None, b""),  # field_too_long (bounds, per call)
    ]
    results = await asyncio.gather(
        *(streamed.new_game(g, n, options=o, entropy=e) for g, n, o, e in calls),
        return_exceptions=True,
    )
    assert mux.calls == 1 + len(calls), "every one went on the stream"
    # each counted as a NewGame call, with its code
    assert {code: count("NewGame", code) - before[code] for code in codes} == {
        "OK": 2,
        "INVALID_ARGUMENT": 4,
        "NOT_FOUND": 1,
    }
    async with RulesClient(server.address, timeout=10) as unary:
        for (g, n, o, e), got in zip(calls, results, strict=True):
            try:
                expected = await unary.new_game(g, n, options=o, entropy=e)
            except RulesError as err:
                assert_same_refusal(got, err, (g, n))
            else:
                assert not isinstance(got, BaseException), got
                assert got == expected  # the same state, events, redactions, entropy
    assert [getattr(r, "reason", None) for r in results] == [
        None,
        None,
        "bad_player_count",
        "unknown_game",
        "malformed_options",
        "entropy_too_large",
        "field_too_long",
    ]
    assert results[3].status is grpc.StatusCode.NOT_FOUND
    assert results[2].metadata == {"min_players": "2", "max_players": "2"}
    # the entropy as sent, and the game goes on from the streamed state
    assert len(results[0].entropy) == 4
    assert (await streamed.apply_move("", results[0].state, 0, mark(0))).status.awaiting == (1,)


async def test_view_and_legal_moves_calls_go_on_a_stream_and_answer_as_the_unary_calls(
    server, streamed
) -> None:
    """View and LegalMoves calls on an open stream: each answered, refused and
    counted as the unary call is (under its own method)."""
    new = await streamed.new_game("tic_tac_toe", 2, entropy=b"seed")
    mux = streamed.streams
    # a call of these kinds opens no stream: the first goes unary
    assert (await streamed.legal_moves("", new.state, 0)).moves
    assert (mux.calls, mux.opened) == (0, 0)
    played = await streamed.apply_move("", new.state, 0, mark(4))  # opens a stream
    await until(lambda: {"view", "legal_moves"} <= mux._streams[0].takes)
    sent = mux.calls
    codes = ("OK", "INVALID_ARGUMENT", "NOT_FOUND", "FAILED_PRECONDITION")
    before = {(m, c): count(m, c) for m in ("View", "LegalMoves") for c in codes}
    state = played.state
    views = [
        (state, 0, False),
        (state, 1, False),
        (state, None, False),  # a spectator
        (state, None, True),  # the whole state before the end: game_not_over
        (state, 5, False),  # unknown_seat
        (b"\x00garbage", 0, False),  # a state that does not decode
    ]
    legal = [(state, 1), (state, 0), (state, 7), (b"\x00garbage", 1)]
    got_views, got_legal = await asyncio.gather(
        asyncio.gather(
            *(streamed.view("", st, seat, full=full) for st, seat, full in views),
            return_exceptions=True,
        ),
        asyncio.gather(
            *(streamed.legal_moves("", st, seat) for st, seat in legal),
            return_exceptions=True,
        ),
    )
    assert mux.calls - sent == len(views) + len(legal), "every one went on a stream"
    async with RulesClient(server.address, timeout=10) as unary:
        for (st, seat, full), got in zip(views, got_views, strict=True):
            try:
                expected = await unary.view("", st, seat, full=full)
            except RulesError as err:
                assert_same_refusal(got, err, (seat, full))
            else:
                assert got == expected
        for (st, seat), got in zip(legal, got_legal, strict=True):
            try:
                expected_moves = await unary.legal_moves("", st, seat)
            except RulesError as err:
                assert_same_refusal(got, err, seat)
            else:
                assert got == expected_moves
    assert [getattr(r, "reason", None) for r in got_views][3:5] == [
        "game_not_over",
        "unknown_seat",
    ]
    assert got_legal[0].moves and got_legal[1].moves == ()  # seat 1 to move
    after = {k: count(*k) - v for k, v in before.items()}
    # counted under their own methods, and the unary calls above as many times
    assert after[("View", "OK")] == 2 * 3 and after[("LegalMoves", "OK")] == 2 * 2
    assert after[("View", "FAILED_PRECONDITION")] == 2
    assert mux.resent == 0


async def test_streamed_calls_are_logged_as_the_unary_calls_they_stand_for(monkeypatch) -> None:
    """A successful View or LegalMoves on a stream is a polled read, logged
    as the unary call is: at debug, one in ``TABLETOP_LOG_SAMPLE`` at info
    (with ``sample``); an ApplyMove at info each time, and a refused read
    too."""
    monkeypatch.setenv("TABLETOP_LOG_SAMPLE", "3")
    lines = io.StringIO()
    configure_logging(service="rules", fmt="json", level="INFO", stream=lines)
    server = build_server(RulesSettings(host="127.0.0.1", port=0, grace_seconds=0.1))
    await server.start()
    try:
        async with RulesClient(server.address, timeout=10, streams=1, spread_attempts=0) as client:
            new = await client.new_game("tic_tac_toe", 2, entropy=b"seed")
            played = await client.apply_move("", new.state, 0, mark(4))  # opens the stream
            await until(lambda: {"view", "legal_moves"} <= client.streams._streams[0].takes)
            sent = client.streams.calls
            for _ in range(6):
                await client.view("", played.state, 0)
                await client.legal_moves("", played.state, 1)
            await client.apply_move("", played.state, 1, mark(0))
            with pytest.raises(RulesError):
                await client.view("", played.state, 5)  # unknown_seat
            assert client.streams.calls - sent == 6 * 2 + 2, "every one went on a stream"

            def rpc() -> list[dict]:
                return [
                    line
                    for line in map(json.loads, lines.getvalue().splitlines())
                    if line["event"] == "rpc" and line.get("via") == "ApplyMoves"
                ]

            # the server logs each call just after answering it
            await until(lambda: len(rpc()) >= 2 + 2 + 2 + 1)
    finally:
        await server.stop(0.1)
        configure_logging(service="test")
    by = collections.Counter((line["method"].rsplit("/", 1)[1], line["code"]) for line in rpc())
    assert by == {
        ("ApplyMove", "OK"): 2,
        ("View", "OK"): 2,  # 6 calls, one in 3
        ("LegalMoves", "OK"): 2,
        ("View", "INVALID_ARGUMENT"): 1,
    }, by
    assert all(
        line["sample"] == 3
        for line in rpc()
        if line["method"].endswith(("/View", "/LegalMoves")) and line["code"] == "OK"
    )


async def test_new_game_goes_unary_to_a_server_whose_streams_do_not_take_it(monkeypatch) -> None:
    """A server from before NewGame calls on ApplyMoves says it answers
    ApplyMove calls only: its clients send NewGame as the unary call."""
    monkeypatch.setattr("services.rules.servicer.STREAM_CALLS", "apply_move")
    server = build_server(RulesSettings(host="127.0.0.1", port=0, grace_seconds=0.1))
    await server.start()
    try:
        async with RulesClient(server.address, timeout=10, streams=1) as client:
            new = await client.new_game("tic_tac_toe", 2)
            one = await client.apply_move("", new.state, 0, mark(4))  # opens the stream
            mux = client.streams
            await until(lambda: mux._streams[0].instance is not None)
            assert "new_game" not in mux._streams[0].takes
            again = await client.new_game("tic_tac_toe", 2, entropy=b"e")
            assert mux.calls == 1, "only the ApplyMove call went on the stream"
            assert again.status.awaiting == (0,) and one.status.awaiting == (1,)
    finally:
        await server.stop(0.1)


async def test_a_malformed_message_ends_that_stream_invalid_argument(server, streamed) -> None:
    async with grpc.aio.insecure_channel(server.address) as channel:
        raw = channel.stream_stream(f"/{SERVICE}/ApplyMoves")()
        await raw.write(b"\xff\xff\xff")
        with pytest.raises(grpc.aio.AioRpcError) as e:
            await raw.read()
    assert e.value.code() == grpc.StatusCode.INVALID_ARGUMENT
    assert error_info(e.value).reason == "malformed_request"
    new = await streamed.new_game("tic_tac_toe", 2)  # the server serves on
    assert (await streamed.apply_move("", new.state, 0, mark(0))).status.awaiting == (1,)


async def test_a_call_queued_past_its_timeout_is_not_worked_on(server, streamed) -> None:
    new = await streamed.new_game("tic_tac_toe", 2)
    request = rules_pb2.ApplyMovesRequest()
    for i in range(300):
        request.calls.add(
            id=i,
            timeout_ms=1,
            request=rules_pb2.ApplyMoveRequest(state=new.state, seat=0, move=mark(i % 9)),
        )
    async with grpc.aio.insecure_channel(server.address) as channel:
        stub = rules_pb2_grpc.RulesServiceStub(channel)
        call = stub.ApplyMoves()
        await call.write(request)
        answer = await call.read()
        await call.done_writing()
    results = {r.id: r for r in answer.results}
    assert sorted(results) == list(range(300))
    assert results[0].HasField("reply")
    late = results[299].error
    assert (late.code, late.reason) == (
        grpc.StatusCode.DEADLINE_EXCEEDED.value[0],
        "deadline_exceeded",
    )


async def test_a_stream_needs_the_service_token_a_call_would() -> None:
    auth = AuthSettings(secret=SECRET)
    settings = RulesSettings(
        host="127.0.0.1", port=0, grace_seconds=0.1, require_service_token=True, auth=auth
    )
    server = build_server(settings)
    await server.start()
    token = ServiceToken(Tokens(auth), "service:match")
    try:
        async with RulesClient(server.address, metadata=token.metadata, streams=2) as client:
            new = await client.new_game("tic_tac_toe", 2)
            assert (await client.apply_move("", new.state, 0, mark(0))).status.awaiting == (1,)
        async with RulesClient(server.address, streams=2) as anonymous:
            with pytest.raises(RulesError) as e:
                await anonymous.apply_move("", new.state, 0, mark(0))
            assert (e.value.status, e.value.reason) == (
                grpc.StatusCode.UNAUTHENTICATED,
                "missing_token",
            )
            assert anonymous.streams.resent == 0  # a refusal, not retried
    finally:
        await server.stop(0.1)


def _open_streams(proc: RulesProcess) -> float:
    body = urllib.request.urlopen(f"http://127.0.0.1:{proc.metrics_port}/metrics", timeout=5)
    name = f'tabletop_rpc_in_flight{{method="ApplyMoves",service="{SERVICE}"}}'
    for line in body.read().decode().splitlines():
        if line.startswith(name + " "):
            return float(line.rsplit(" ", 1)[1])
    return 0.0


async def test_a_replica_killed_mid_stream_costs_no_call() -> None:
    """Two rules processes behind one target; the one serving a stream is
    killed while calls are in flight: they are sent again on a fresh stream
    (the other replica) and every call succeeds."""
    env = {"TABLETOP_RULES_METRICS_PORT": "0"}
    with RulesProcess(env=env) as one, RulesProcess(env=env) as two:
        target = f"ipv4:127.0.0.1:{one.port},127.0.0.1:{two.port}"
        # a turn of one call: both streams always have calls in flight
        async with RulesClient(target, timeout=5, streams=2, calls_per_turn=1) as client:
            new = await client.new_game("tic_tac_toe", 2)
            done = 0
            stop = asyncio.Event()

            async def player() -> None:
                nonlocal done
                while not stop.is_set():
                    played = await client.apply_move("", new.state, 0, mark(done % 9))
                    assert played.status.awaiting == (1,)
                    done += 1

            players = [asyncio.ensure_future(player()) for _ in range(24)]
            try:
                await until(lambda: done >= 200, what="calls before the kill")
                serving = [p for p in (one, two) if await asyncio.to_thread(_open_streams, p)]
                assert serving
                victim = serving[0]
                victim.proc.kill()
                at_kill = done
                await until(lambda: client.streams.resent > 0, what="calls sent again")
                await until(lambda: done >= at_kill + 300, what="calls after the kill")
            finally:
                stop.set()
                outcomes = await asyncio.gather(*players, return_exceptions=True)
            assert not [o for o in outcomes if isinstance(o, BaseException)], outcomes
            assert client.streams.opened > 2


async def test_an_old_stream_is_replaced_and_its_calls_still_answered(server, streamed) -> None:
    """Past ``max_age_s`` a stream takes no new call: it is half-closed once
    written, answers what it carries, and a fresh one takes the next calls."""
    mux = streamed.streams
    new = await streamed.new_game("tic_tac_toe", 2)
    await asyncio.gather(*(streamed.apply_move("", new.state, 0, mark(i % 9)) for i in range(64)))
    assert mux.opened == 2  # a turn on each
    mux.max_age_s = 0.0
    old = [s for s in mux._streams if s is not None]
    played = await asyncio.gather(
        *(streamed.apply_move("", new.state, 0, mark(i % 9)) for i in range(40))
    )
    assert [p.status.awaiting for p in played] == [(1,)] * 40
    assert mux.opened > 2 and mux.resent == 0
    for stream in old:  # ended by the server once its calls were answered
        await until(lambda s=stream: s.reader.done(), what="the old stream's end")
        assert await stream.call.code() == grpc.StatusCode.OK


async def test_closing_the_client_fails_the_calls_in_flight_client_closed() -> None:
    from services.common.grpcserver import GrpcServer, ServerConfig
    from services.rules.servicer import SERVICE_NAME, RulesServicer

    class Silent(RulesServicer):
        async def ApplyMoves(self, requests, context):
            async for _ in requests:
                pass
            yield rules_pb2.ApplyMovesResponse()

    server = GrpcServer(ServerConfig(host="127.0.0.1", port=0, grace_seconds=0.1))
    server.add_service(rules_pb2_grpc.add_RulesServiceServicer_to_server, Silent(), SERVICE_NAME)
    await server.start()
    try:
        client = RulesClient(server.address, timeout=30, streams=2)
        new = await client.new_game("tic_tac_toe", 2)
        waiting = asyncio.ensure_future(client.apply_move("", new.state, 0, mark(0)))
        await until(lambda: client.streams.messages == 1, what="the call written")
        await client.close()
        with pytest.raises(RulesError) as e:
            await waiting
        assert (e.value.status, e.value.reason) == (grpc.StatusCode.UNAVAILABLE, "client_closed")
        with pytest.raises(RulesError) as e:
            await client.apply_move("", new.state, 0, mark(0))
        assert e.value.reason == "client_closed"
    finally:
        await server.stop(0.1)


async def test_batches_and_answers_stay_under_the_message_size_limit() -> None:
    """The client cuts its batches at half its message limit (a call larger
    than that goes unary); the server cuts its answers at half its own."""
    limit = 16 * 1024
    server = build_server(
        RulesSettings(host="127.0.0.1", port=0, grace_seconds=0.1, max_message_bytes=limit)
    )
    await server.start()
    try:
        async with RulesClient(
            server.address, timeout=10, streams=1, max_message_bytes=limit
        ) as client:
            new = await client.new_game("tic_tac_toe", 2)
            size = rules_pb2.ApplyMoveRequest(state=new.state, seat=0, move=mark(0)).ByteSize()
            calls = 400
            played = await asyncio.gather(
                *(client.apply_move("", new.state, 0, mark(i % 9)) for i in range(calls))
            )
            assert [p.status.awaiting for p in played] == [(1,)] * calls
            mux = client.streams
            assert mux.messages >= calls * size // (limit // 2) and mux.resent == 0
            # one call over half the limit (a long move) goes unary: the same answer
            long = await client.apply_move("", new.state, 0, " " * (limit // 2) + mark(0))
            assert long.events == played[0].events
            assert mux.calls == calls  # not on the stream
        # answers: a batch of calls whose answers need several messages
        request = rules_pb2.ApplyMovesRequest()
        for i in range(60):
            request.calls.add(
                id=i, request=rules_pb2.ApplyMoveRequest(state=new.state, seat=0, move=mark(0))
            )
        assert request.ByteSize() < limit
        async with grpc.aio.insecure_channel(server.address) as channel:
            call = rules_pb2_grpc.RulesServiceStub(channel).ApplyMoves()
            await call.write(request)
            await call.done_writing()
            answers = [a async for a in call]
        assert sorted(r.id for a in answers for r in a.results) == list(range(60))
        assert len(answers) > 1 and all(a.ByteSize() <= limit // 2 + 1024 for a in answers)
    finally:
        await server.stop(0.1)


async def test_calls_go_to_the_streams_in_turns(server) -> None:
    """Calls in flight together: a turn of ``calls_per_turn`` calls on one
    stream, then on the next. One call at a time: nothing to batch behind,
    so each call's turn passes on and the calls alternate."""
    async with RulesClient(
        server.address, timeout=10, streams=2, calls_per_turn=5, spread_attempts=0
    ) as client:
        new = await client.new_game("tic_tac_toe", 2)
        mux = client.streams
        await asyncio.gather(*(client.apply_move("", new.state, 0, mark(i)) for i in range(5)))
        assert mux.opened == 1 and mux.messages == 1  # one turn, one batch
        await asyncio.gather(*(client.apply_move("", new.state, 0, mark(i)) for i in range(7)))
        # the next turn on the second stream (5 calls), then 2 on the first
        assert mux.opened == 2 and mux.calls == 12 and (mux._turn, mux._turn_left) == (0, 3)
        lanes = []
        for i in range(4):
            await client.apply_move("", new.state, 0, mark(i))
            lanes.append(mux._turn)
        assert lanes == [1, 0, 1, 0] and mux.opened == 2 and mux.resent == 0
    with pytest.raises(ValueError):
        RulesClient(server.address, streams=1, calls_per_turn=0)


async def _settle(client: RulesClient, state: bytes) -> list[str | None]:
    """Calls one at a time (so they alternate between the lanes) until no
    lane is being replaced: the servers the lanes' streams are on."""
    mux = client.streams
    deadline = asyncio.get_running_loop().time() + 30  # replacements are spaced out
    i = 0
    while asyncio.get_running_loop().time() < deadline:
        i += 1
        played = await client.apply_move("", state, 0, mark(i % 9))
        assert played.status.awaiting == (1,)
        lanes = mux._streams
        if all(s is not None and s.instance is not None for s in lanes) and not any(mux._spreading):
            others = [s.instance for s in lanes]
            if len(set(others)) == len(others) or mux.respread >= mux.spread_attempts:
                return others
    raise AssertionError(f"the lanes did not settle: {mux._spreading}, {mux.respread}")


async def test_streams_spread_over_the_replicas_behind_one_target() -> None:
    """Two servers behind one target: each fresh client's two streams end on
    both, whichever its channels' round robin picked first."""
    servers = [build_server(RulesSettings(host="127.0.0.1", port=0)) for _ in range(2)]
    for s in servers:
        await s.start()
    try:
        target = "ipv4:" + ",".join(s.address for s in servers)
        placed = set()
        for _ in range(8):
            async with RulesClient(target, timeout=10, streams=2) as client:
                new = await client.new_game("tic_tac_toe", 2)
                lanes = await _settle(client, new.state)
                assert len(set(lanes)) == 2, lanes
                placed |= set(lanes)
        assert len(placed) == 2  # the two servers, each with a name of its own
    finally:
        for s in servers:
            await s.stop(0.1)


async def test_with_one_server_the_streams_settle_after_the_spread_attempts(server) -> None:
    """Nowhere else to go: a lane is replaced ``spread_attempts`` times in a
    row, then kept; every call is answered, and the replaced streams'
    channels are closed."""
    async with RulesClient(server.address, timeout=10, streams=2, spread_attempts=3) as client:
        new = await client.new_game("tic_tac_toe", 2)
        lanes = await _settle(client, new.state)
        mux = client.streams
        assert lanes[0] == lanes[1] and mux.respread == 3 and mux.opened == 2 + 3
        for i in range(20):  # settled: no more streams
            await client.apply_move("", new.state, 0, mark(i % 9))
        assert mux.opened == 5 and mux.resent == 0
        await until(lambda: len(mux._alive) == 2, what="the replaced streams ended")
        # the later replacements each had a fresh channel; the old ones closed with their streams
        assert {id(s.channel) for s in mux._alive} == {id(c) for c in mux._channels}


@pytest.mark.skipif(not hasattr(__import__("socket"), "SO_REUSEPORT"), reason="no SO_REUSEPORT")
async def test_streams_spread_over_the_workers_of_one_port() -> None:
    """Workers sharing a port: a fresh connection may land on either, so a
    lane that landed on the other lane's worker is moved to a fresh one."""
    env = {"TABLETOP_RULES_METRICS_PORT": "0"}
    with RulesProcess(workers=2, env=env) as proc:
        # the first retry reuses its connection, the other 15 are fresh: 1 in 32,768 stay put
        async with RulesClient(proc.address, timeout=10, streams=2, spread_attempts=16) as client:
            new = await client.new_game("tic_tac_toe", 2)
            lanes = await _settle(client, new.state)
            assert len(set(lanes)) == 2, (lanes, client.streams.respread)
