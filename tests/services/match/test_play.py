"""PlayMatch: one stream per seat that both follows the match and plays it.

Its frames are WatchMatch's for the caller (never another seat's secrets);
each move goes through SubmitMove's path and is answered once, under its ref:
by its own commit frame, by an answer frame, or by an error frame carrying
SubmitMove's status; errors leave the stream open; the stream ends with the
match."""

from __future__ import annotations

import asyncio
from dataclasses import replace
from typing import Any

import grpc
import pytest

from services.common.auth import Tokens
from services.common.errors import error_info
from services.common.ratelimit import LimitSettings, Rate
from tabletop.match.v1 import match_pb2
from tests.services.match.conftest import Player, make_registry, stream_commits
from tests.services.match.helpers import commits_of, move_json, states_by_version
from tests.services.match.secret_game import Bid

TTT = ["guest:x", "guest:o"]
DRAW = (0, 1, 2, 4, 3, 5, 7, 6, 8)  # X O X O X O X O X: no line, a draw
SECRET_GAME = make_registry().get("secret_bids")


def place(cell: int) -> str:
    return f'{{"type":"place_mark","cell":{cell}}}'


class FrameReader:
    """A bidirectional call's frames read so far, by a task; waits on them."""

    def __init__(self, call: Any) -> None:
        self.call = call
        self.frames: list[Any] = []
        self.error: grpc.aio.AioRpcError | None = None
        self.reader = asyncio.ensure_future(self._read())

    async def _read(self) -> None:
        try:
            while True:
                frame = await self.call.read()
                if frame is grpc.aio.EOF:
                    return
                self.frames.append(frame)
        except grpc.aio.AioRpcError as e:
            self.error = e

    async def until(self, condition: Any, timeout: float = 10.0) -> None:
        deadline = asyncio.get_running_loop().time() + timeout
        while not condition():
            if self.reader.done():
                assert condition(), f"the stream ended first: {self.error!r}"
            assert asyncio.get_running_loop().time() < deadline, "condition not met in time"
            await asyncio.sleep(0.005)

    async def ended(self, timeout: float = 10.0) -> grpc.StatusCode:
        await asyncio.wait_for(asyncio.shield(self.reader), timeout)
        if self.error is not None:
            return self.error.code()
        return await self.call.code()

    def close(self) -> None:
        self.call.cancel()
        self.reader.cancel()


class PlayStream(FrameReader):
    """One PlayMatch call."""

    def __init__(self, player: Player) -> None:
        super().__init__(player.stub.PlayMatch(metadata=player.metadata))

    @classmethod
    async def open(cls, player: Player, match_id: str, **kw: Any) -> PlayStream:
        stream = cls(player)
        await stream.call.write(
            match_pb2.PlayRequest(open=match_pb2.PlayOpen(match_id=match_id, **kw))
        )
        return stream

    async def move(self, ref: str, move: str, **kw: Any) -> None:
        await self.call.write(
            match_pb2.PlayRequest(move=match_pb2.PlayMove(ref=ref, move_json=move, **kw))
        )

    def commits(self) -> list[Any]:
        return [f for f in self.frames if f.WhichOneof("kind") == "commit"]

    def version(self) -> int:
        commits = self.commits()
        return commits[-1].commit.version if commits else -1

    async def until_version(self, version: int, timeout: float = 10.0) -> None:
        await self.until(lambda: self.version() >= version, timeout)

    async def answer(self, ref: str, timeout: float = 10.0) -> Any:
        """The frame answering the move ``ref`` (there is exactly one)."""
        await self.until(lambda: any(f.ref == ref for f in self.frames), timeout)
        answers = [f for f in self.frames if f.ref == ref]
        assert len(answers) == 1, answers
        return answers[0]


@pytest.fixture
async def ttt(service) -> Any:
    players = [service.player(p) for p in TTT]
    match_id = await players[0].create("tic_tac_toe", TTT)
    streams = [await PlayStream.open(p, match_id) for p in players]
    for s in streams:
        await s.until_version(0)
    yield match_id, players, streams
    for s in streams:
        s.close()


async def test_two_play_streams_play_a_whole_game_and_end_with_it(service, settings, ttt):
    match_id, _players, streams = ttt
    for i, cell in enumerate(DRAW):
        seat = i % 2
        await streams[seat].until_version(i)  # its own feed showed the previous move
        await streams[seat].move(f"m{i}", place(cell))
    for seat, s in enumerate(streams):
        assert await s.ended() == grpc.StatusCode.OK
        commits = s.commits()
        assert len(commits) == len(s.frames)  # a fresh move is answered by its commit
        assert [f.commit.version for f in commits] == list(range(10))
        assert commits[-1].commit.status == match_pb2.MATCH_STATUS_FINISHED
        assert commits[-1].commit.outcome.reason
        answered = {f.commit.version: f.ref for f in commits if f.ref}
        assert answered == {i + 1: f"m{i}" for i in range(9) if i % 2 == seat}
        for f in commits[1:]:  # its own moves' text only
            own = f.commit.seat == seat
            assert f.commit.move_json == (place(DRAW[f.commit.version - 1]) if own else "")
    stored = await stream_commits(settings.nats_url, match_id)
    assert [c.move for c in stored[1:]] == [place(c) for c in DRAW]


async def test_each_stream_correlates_its_moves_while_other_seats_commit_in_between(service):
    """Four seats bid at once every round: the commits of the others arrive
    before, between and after a seat's own; each ref is carried by exactly
    its own move's commit frame."""
    ids = [f"guest:p{s}" for s in range(4)]
    players = [service.player(p) for p in ids]
    match_id = await players[0].create("secret_bids", ids)
    streams = [await PlayStream.open(p, match_id) for p in players]
    sent: dict[int, dict[str, str]] = {s: {} for s in range(4)}

    async def seat(s: int) -> None:
        for r in range(3):
            await streams[s].until_version(4 * r)
            ref = f"s{s}r{r}"
            sent[s][ref] = move_json(Bid(amount=(s + 2 * r) % 10))
            await streams[s].move(ref, sent[s][ref])

    await asyncio.gather(*(seat(s) for s in range(4)))
    interleaved = 0
    for s, stream in enumerate(streams):
        assert await stream.ended() == grpc.StatusCode.OK
        commits = stream.commits()
        assert [f.commit.version for f in commits] == list(range(13))
        assert len(commits) == len(stream.frames)
        for f in commits[1:]:
            if f.commit.seat == s:
                assert sent[s][f.ref] == f.commit.move_json
            else:
                assert f.ref == "" and f.commit.move_json == ""
        assert sorted(f.ref for f in commits if f.ref) == sorted(sent[s])
        # a round's own commit is rarely first or last: others came between
        interleaved += sum(1 for f in commits[1:] if f.ref and (f.commit.version - 1) % 4 != 0)
    assert interleaved > 0
    for stream in streams:
        stream.close()


def _status(frame: Any) -> tuple[str, str, dict[str, str]]:
    e = frame.error
    return e.code, e.reason, dict(e.metadata)


async def _submit_status(player: Player, match_id: str, move: str, **kw: Any) -> Any:
    with pytest.raises(grpc.aio.AioRpcError) as err:
        await player.submit(match_id, move, **kw)
    info = error_info(err.value)
    assert info is not None
    return err.value.code().name, info.reason, dict(info.metadata)


async def test_a_refused_move_is_an_error_frame_with_submit_moves_status_and_play_goes_on(ttt):
    match_id, players, streams = ttt
    x, o = streams
    await x.move("x1", place(4))
    assert (await x.answer("x1")).commit.version == 1
    await o.until_version(1)
    cases = [
        ("taken", o, players[1], place(4), {}),
        ("early", x, players[0], place(0), {}),  # not X's turn
        ("stale", o, players[1], place(0), {"expected_version": 0}),
        ("garbled", o, players[1], "{not json", {}),
        ("no_cell", o, players[1], place(42), {}),
    ]
    for ref, stream, player, move, kw in cases:
        await stream.move(ref, move, **kw)
        frame = await stream.answer(ref)
        assert frame.WhichOneof("kind") == "error"
        assert _status(frame) == await _submit_status(player, match_id, move, **kw)
    assert _status(await o.answer("taken"))[:2] == ("FAILED_PRECONDITION", "cell_taken")
    assert _status(await x.answer("early"))[:2] == ("FAILED_PRECONDITION", "not_your_turn")
    code, reason, meta = _status(await o.answer("stale"))
    assert (code, reason, meta["current_version"]) == ("ABORTED", "stale_version", "1")
    assert _status(await o.answer("garbled"))[0] == "INVALID_ARGUMENT"
    # the stream is still open and plays on
    await o.move("o1", place(0), expected_version=1)
    assert (await o.answer("o1")).commit.version == 2
    await x.until_version(2)
    assert x.error is None and o.error is None


async def test_an_idempotent_retry_gets_the_first_answer(service, ttt):
    match_id, players, streams = ttt
    x = streams[0]
    await x.move("a", place(4), idempotency_key="k1")
    first = await x.answer("a")
    assert first.commit.version == 1
    # the same key again on the same stream: the commit went out already
    await x.move("b", place(4), idempotency_key="k1")
    again = await x.answer("b")
    assert again.WhichOneof("kind") == "answer"
    assert (again.answer.version, again.answer.seat) == (1, 0)
    # the same key for another move: refused as SubmitMove refuses it
    await x.move("c", place(0), idempotency_key="k1")
    assert _status(await x.answer("c"))[:2] == ("FAILED_PRECONDITION", "idempotency_key_reused")
    # a new stream from the start, retrying at once: answered once, version 1,
    # by the commit frame or by an answer, whichever its catch-up makes first
    late = await PlayStream.open(players[0], match_id)
    await late.move("d", place(4), idempotency_key="k1")
    answer = await late.answer("d")
    kind = answer.WhichOneof("kind")
    assert kind in ("commit", "answer")
    assert (answer.commit.version if kind == "commit" else answer.answer.version) == 1
    await late.until_version(1)
    assert [f.commit.version for f in late.commits()] == [0, 1]
    assert await _commits_count(service, match_id) == 2
    late.close()


async def test_a_spectator_follows_and_its_move_is_not_seated(service, ttt):
    match_id, _players, streams = ttt
    spectator = await PlayStream.open(service.player("guest:nobody"), match_id)
    await spectator.until_version(0)
    await spectator.move("s", place(4))
    frame = await spectator.answer("s")
    assert _status(frame)[:2] == ("PERMISSION_DENIED", "not_seated")
    assert _status(frame) == await _submit_status(
        service.player("guest:nobody"), match_id, place(4)
    )
    for i, cell in enumerate(DRAW):
        await streams[i % 2].until_version(i)
        await streams[i % 2].move(f"m{i}", place(cell))
    assert await spectator.ended() == grpc.StatusCode.OK
    assert [f.commit.version for f in spectator.commits()] == list(range(10))
    assert all(f.commit.move_json == "" for f in spectator.commits())


async def test_a_play_stream_never_carries_another_seats_secret(service):
    """The frames are WatchMatch's for the same caller, and hold no secret of
    another seat (the test game deals one per seat and one per bid)."""
    game = SECRET_GAME
    ids = ["guest:a", "guest:b"]
    players = [service.player(p) for p in ids]
    match_id = await players[0].create("secret_bids", ids)
    streams = [await PlayStream.open(p, match_id, include_view=True) for p in players]
    watches = [p.watch(match_id, include_view=True) for p in players]
    watched = [asyncio.ensure_future(_collect(w)) for w in watches]
    for r in range(3):
        for s in (0, 1):
            await streams[s].until_version(2 * r)
            await streams[s].move(f"{s}{r}", move_json(Bid(amount=5)))
    for stream in streams:
        assert await stream.ended() == grpc.StatusCode.OK
    states = states_by_version(game, await commits_of(service, match_id))
    for s, stream in enumerate(streams):
        commits = [f.commit for f in stream.commits()]
        assert commits == await asyncio.wait_for(watched[s], 10)
        for frame, state in zip(stream.frames, states, strict=True):
            # the secrets of the others as of this commit (revealed at the end)
            others = {w for seat, words in game.secrets(state).items() if seat != s for w in words}
            assert others
            leaked = [w for w in others if w in str(frame)]
            assert not leaked, f"seat {s} saw {leaked} at version {frame.commit.version}"


async def _collect(call: Any) -> list[Any]:
    return [c async for c in call]


async def test_opening_badly_ends_the_stream_with_watch_matchs_status(service, ttt):
    match_id, players, _streams = ttt
    unknown = await PlayStream.open(players[0], "no-such-match")
    assert await unknown.ended() == grpc.StatusCode.NOT_FOUND
    ahead = await PlayStream.open(players[0], match_id, after_version=5)
    assert await ahead.ended() == grpc.StatusCode.INVALID_ARGUMENT
    assert error_info(ahead.error).reason == "version_ahead"
    first_a_move = PlayStream(players[0])
    await first_a_move.move("m", place(4))
    assert await first_a_move.ended() == grpc.StatusCode.INVALID_ARGUMENT
    assert error_info(first_a_move.error).reason == "open_expected"
    anonymous = await PlayStream.open(service.anonymous(), match_id)
    assert await anonymous.ended() == grpc.StatusCode.UNAUTHENTICATED
    assert await _commits_count(service, match_id) == 1  # nothing was played


async def _commits_count(service, match_id: str) -> int:
    return len(await stream_commits(service.server.settings.nats_url, match_id))


async def test_a_finished_match_opened_at_its_end_ends_at_once(ttt):
    match_id, players, streams = ttt
    for i, cell in enumerate(DRAW):
        await streams[i % 2].until_version(i)
        await streams[i % 2].move(f"m{i}", place(cell))
    for s in streams:
        assert await s.ended() == grpc.StatusCode.OK
    again = await PlayStream.open(players[0], match_id, after_version=9)
    assert await again.ended() == grpc.StatusCode.OK
    assert again.frames == []


async def test_the_stream_ends_when_its_token_expires(start_service, settings):
    """When a call with the token would be refused (its expiry, plus the
    leeway every check allows; none here)."""
    service = await start_service(auth=replace(settings.auth, leeway_s=0))
    players = [service.player(p) for p in TTT]
    match_id = await players[0].create("tic_tac_toe", TTT)
    tokens = Tokens(replace(settings.auth, leeway_s=0))
    player = Player(service.channel, tokens.issue("guest:x", ttl_s=2), "guest:x")
    stream = await PlayStream.open(player, match_id)
    await stream.until_version(0)
    assert await stream.ended(timeout=10) == grpc.StatusCode.UNAUTHENTICATED
    assert error_info(stream.error).reason == "token_expired"


async def test_moves_on_a_stream_count_as_submit_move_calls(start_service):
    service = await start_service(limits=LimitSettings(submit_move=Rate(2, 60)))
    players = [service.player(p) for p in TTT]
    match_id = await players[0].create("tic_tac_toe", TTT)
    x = await PlayStream.open(players[0], match_id)
    await players[0].submit(match_id, place(4))  # one of the two
    await x.move("early", place(0))  # the second: counted, then not X's turn
    assert _status(await x.answer("early"))[1] == "not_your_turn"
    await x.move("over", place(0))
    code, reason, meta = _status(await x.answer("over"))
    assert (code, reason) == ("RESOURCE_EXHAUSTED", "rate_limited")
    assert int(meta["retry_after_ms"]) > 0
    assert x.error is None
    x.close()


async def test_bad_requests_after_the_first_refuse_the_move_or_end_the_stream(service, ttt):
    match_id, players, streams = ttt
    x = streams[0]
    await x.move("big", place(4), idempotency_key="k" * 300)  # over the bounds
    code, reason, meta = _status(await x.answer("big"))
    assert (code, reason, meta["field"]) == (
        "INVALID_ARGUMENT",
        "field_too_long",
        "move.idempotency_key",
    )
    await x.move("deep", "[" * 40 + "]" * 40)
    assert _status(await x.answer("deep"))[1] == "json_too_deep"
    await x.move("ok", place(4))
    assert (await x.answer("ok")).commit.version == 1
    # a ref that cannot be echoed ends the stream
    await x.move("r" * 300, place(0))
    assert await x.ended() == grpc.StatusCode.INVALID_ARGUMENT
    assert error_info(x.error).metadata["field"] == "move.ref"
    # a second open ends it too
    o = streams[1]
    await o.call.write(match_pb2.PlayRequest(open=match_pb2.PlayOpen(match_id=match_id)))
    assert await o.ended() == grpc.StatusCode.INVALID_ARGUMENT
    assert error_info(o.error).reason == "move_expected"
    # bytes that are not a PlayRequest: malformed_request, never UNKNOWN
    raw = service.channel.stream_stream(
        "/tabletop.match.v1.MatchService/PlayMatch",
        request_serializer=lambda b: b,
        response_deserializer=match_pb2.PlayFrame.FromString,
    )(metadata=players[0].metadata)
    opening = match_pb2.PlayRequest(open=match_pb2.PlayOpen(match_id=match_id))
    await raw.write(opening.SerializeToString())
    assert (await raw.read()).commit.version == 0
    await raw.write(b"\xff\xff\xff")
    with pytest.raises(grpc.aio.AioRpcError) as err:
        while True:
            frame = await raw.read()
            assert frame is not grpc.aio.EOF
    assert err.value.code() == grpc.StatusCode.INVALID_ARGUMENT
    assert error_info(err.value).reason == "malformed_request"
    assert await _commits_count(service, match_id) == 2


async def test_an_unknown_outcome_names_the_key_to_retry_with(start_service, nats_server):
    """The store paused past its timeout: the move sent without a key is
    answered UNAVAILABLE with the key the stream drew (for outcome_unknown);
    the retry with it is answered once, and the move is stored once."""
    service = await start_service(store_timeout_s=1.0)
    players = [service.player(p) for p in TTT]
    match_id = await players[0].create("tic_tac_toe", TTT)
    x = await PlayStream.open(players[0], match_id)
    await x.until_version(0)
    await asyncio.to_thread(nats_server.pause)
    try:
        await x.move("first", place(4))
        frame = await x.answer("first")
    finally:
        await asyncio.to_thread(nats_server.resume)
    code, reason, meta = _status(frame)
    assert code == "UNAVAILABLE"
    assert reason in ("outcome_unknown", "store_unavailable")
    if reason == "outcome_unknown":
        await x.move("retry", place(4), idempotency_key=meta["idempotency_key"])
        answer = await x.answer("retry", timeout=20)
        kind = answer.WhichOneof("kind")
        assert kind in ("commit", "answer"), answer
        await x.until_version(1, timeout=20)
        assert await _commits_count(service, match_id) == 2
    x.close()


async def test_a_player_holding_both_seats_names_the_seat_per_stream_or_per_move(service):
    solo = service.player("guest:solo")
    match_id = await solo.create("tic_tac_toe", ["guest:solo", "guest:solo"])
    o_stream = await PlayStream.open(solo, match_id, seat=1)
    await o_stream.until_version(0)
    await o_stream.move("o-first", place(4))  # seat 1 is not awaited yet
    assert _status(await o_stream.answer("o-first"))[1] == "not_your_turn"
    await o_stream.move("x", place(4), seat=0)  # this move names seat 0
    frame = await o_stream.answer("x")
    assert (frame.commit.version, frame.commit.seat) == (1, 0)
    await o_stream.move("o", place(0))
    frame = await o_stream.answer("o")
    assert (frame.commit.version, frame.commit.seat) == (2, 1)
    await o_stream.move("two", place(1), seat=2)
    assert _status(await o_stream.answer("two"))[:2] == ("PERMISSION_DENIED", "not_your_seat")
    o_stream.close()


async def test_a_stream_whose_client_stopped_sending_follows_to_the_end(ttt):
    match_id, players, streams = ttt
    x, o = streams
    await x.move("x0", place(DRAW[0]))
    await x.call.done_writing()  # X sends nothing more on this stream
    await o.until_version(1)
    assert o.error is None
    await o.call.done_writing()
    # the rest is played by SubmitMove; both streams still follow to the end
    for i, cell in enumerate(DRAW[1:], start=1):
        await streams[i % 2].until_version(i)
        await players[i % 2].submit(match_id, place(cell))
    for s in streams:
        assert await s.ended() == grpc.StatusCode.OK
        assert [f.commit.version for f in s.commits()] == list(range(10))


async def test_play_streams_with_turns_carry_each_seats_legal_moves(service):
    """``include_turn`` on the open request: each commit frame carries the
    turn after it, so a client plays from its frames alone."""
    players = [service.player(p) for p in TTT]
    match_id = await players[0].create("tic_tac_toe", TTT)
    streams = [await PlayStream.open(p, match_id, include_turn=True) for p in players]
    free = set(range(9))
    for i, cell in enumerate(DRAW):
        seat = i % 2
        await streams[seat].until_version(i)
        turn = streams[seat].commits()[-1].commit.turn
        assert turn.your_seat == seat and list(turn.awaiting) == [seat]
        assert sorted(turn.legal_moves_json) == sorted(place(c) for c in free)
        other = streams[1 - seat]
        await other.until_version(i)
        assert not other.commits()[-1].commit.turn.legal_moves_json  # not its turn
        await streams[seat].move(f"m{i}", place(cell))
        free.discard(cell)
    for s in streams:
        assert await s.ended() == grpc.StatusCode.OK
        last = s.commits()[-1].commit
        assert last.status == match_pb2.MATCH_STATUS_FINISHED
        assert not last.turn.awaiting and not last.turn.legal_moves_json
        s.close()
