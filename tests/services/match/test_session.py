"""PlaySession: a client's whole session on one stream, any number of
matches followed and played at once, and matches created on it.

A subscription's frames are exactly a PlayMatch stream's (the same commits,
redacted the same way, the same answers under the same refs); subscriptions
play independently; a subscription ends after its match's last commit, with
an error frame, or closed; the session goes on from match to match and ends
when the client half-closes and everything it holds has ended."""

from __future__ import annotations

import asyncio
from dataclasses import replace
from typing import Any

import grpc

from services.common.auth import Tokens
from services.common.errors import error_info
from services.common.ratelimit import LimitSettings, Rate
from tabletop.match.v1 import match_pb2
from tests.services.match.conftest import Player, stream_commits
from tests.services.match.helpers import commits_of, move_json, states_by_version
from tests.services.match.secret_game import Bid
from tests.services.match.test_play import (
    DRAW,
    SECRET_GAME,
    TTT,
    FrameReader,
    PlayStream,
    place,
)

K = "kind"
DEEP = "[" * 40 + "]" * 40  # JSON nested past the limit


class Session(FrameReader):
    """One PlaySession call."""

    def __init__(self, player: Player) -> None:
        super().__init__(player.stub.PlaySession(metadata=player.metadata))

    async def open(self, sub: str, match_id: str, **kw: Any) -> None:
        await self.call.write(
            match_pb2.SessionRequest(
                open=match_pb2.SessionOpen(
                    sub=sub, open=match_pb2.PlayOpen(match_id=match_id, **kw)
                )
            )
        )

    async def move(self, sub: str, ref: str, move: str, **kw: Any) -> None:
        await self.call.write(
            match_pb2.SessionRequest(
                move=match_pb2.SessionMove(
                    sub=sub, move=match_pb2.PlayMove(ref=ref, move_json=move, **kw)
                )
            )
        )

    async def close_sub(self, sub: str) -> None:
        await self.call.write(match_pb2.SessionRequest(close=match_pb2.SessionClose(sub=sub)))

    async def create(self, ref: str, game: str, players: list[str], **kw: Any) -> None:
        await self.call.write(
            match_pb2.SessionRequest(
                create=match_pb2.SessionCreate(
                    ref=ref, match=match_pb2.CreateMatchRequest(game=game, players=players, **kw)
                )
            )
        )

    def of(self, sub: str) -> list[Any]:
        return [f for f in self.frames if f.sub == sub]

    def commits(self, sub: str) -> list[Any]:
        return [f for f in self.of(sub) if f.WhichOneof(K) == "commit"]

    def version(self, sub: str) -> int:
        commits = self.commits(sub)
        return commits[-1].commit.version if commits else -1

    async def until_version(self, sub: str, version: int) -> None:
        await self.until(lambda: self.version(sub) >= version)

    def _answers(self, ref: str, sub: str) -> list[Any]:
        # with no ref: what ended or closed ``sub`` (commit frames of other
        # moves carry no ref either)
        return [
            f
            for f in self.frames
            if f.ref == ref and f.sub == sub and (ref or f.WhichOneof(K) != "commit")
        ]

    async def answer(self, ref: str, sub: str = "") -> Any:
        """The frame answering ``ref`` of ``sub`` (there is exactly one)."""
        await self.until(lambda: bool(self._answers(ref, sub)))
        answers = self._answers(ref, sub)
        assert len(answers) == 1, answers
        return answers[0]


def _error(frame: Any) -> tuple[str, str, dict[str, str]]:
    assert frame.WhichOneof(K) == "error", frame
    return frame.error.code, frame.error.reason, dict(frame.error.metadata)


async def _play_draw(sessions: list[Session], sub: str) -> None:
    for i, cell in enumerate(DRAW):
        seat = i % 2
        await sessions[seat].until_version(sub, i)
        await sessions[seat].move(sub, f"{sub}-m{i}", place(cell))
    for s in sessions:
        await s.until_version(sub, len(DRAW))


async def test_one_session_per_seat_plays_game_after_game_with_frames_as_play_match(
    service, settings
):
    players = [service.player(p) for p in TTT]
    sessions = [Session(p) for p in players]
    matches = []
    for game in range(3):  # the same two streams, match after match
        await sessions[0].create(f"c{game}", "tic_tac_toe", TTT)
        created = await sessions[0].answer(f"c{game}")
        assert created.WhichOneof(K) == "created" and created.created.version == 0
        match_id = created.created.match_id
        matches.append(match_id)
        for s in sessions:
            await s.open(f"g{game}", match_id)
        await _play_draw(sessions, f"g{game}")
    for s in sessions:
        await s.call.done_writing()
        assert await s.ended() == grpc.StatusCode.OK
    for seat, s in enumerate(sessions):
        for game, match_id in enumerate(matches):
            sub = f"g{game}"
            frames = s.of(sub)
            commits = s.commits(sub)
            assert len(commits) == len(frames)  # each fresh move answered by its commit
            assert [f.commit.version for f in commits] == list(range(10))
            assert commits[-1].commit.status == match_pb2.MATCH_STATUS_FINISHED
            answered = {f.commit.version: f.ref for f in commits if f.ref}
            assert answered == {i + 1: f"{sub}-m{i}" for i in range(9) if i % 2 == seat}
            for f in commits[1:]:  # its own moves' text only
                own = f.commit.seat == seat
                assert f.commit.move_json == (place(DRAW[f.commit.version - 1]) if own else "")
            stored = await stream_commits(settings.nats_url, match_id)
            assert [c.move for c in stored[1:]] == [place(c) for c in DRAW]


async def test_a_subscriptions_frames_equal_a_play_match_streams(service):
    """The same seat, the same match: one PlayMatch stream beside a session's
    subscription see the same frames, move for move (the moves are the
    session's: the PlayMatch stream's commit frames carry no ref)."""
    players = [service.player(p) for p in TTT]
    match_id = await players[0].create("tic_tac_toe", TTT)
    sessions = [Session(p) for p in players]
    for s in sessions:
        await s.open("m", match_id, include_turn=True)
    plain = await PlayStream.open(players[0], match_id, include_turn=True)
    await _play_draw(sessions, "m")
    assert await plain.ended() == grpc.StatusCode.OK

    def strip(commit: Any) -> Any:
        c = match_pb2.MatchCommit()
        c.CopyFrom(commit)
        c.turn.ClearField("server_time")
        c.ClearField("committed_at")
        return c

    mine = [strip(f.commit) for f in sessions[0].commits("m")]
    theirs = [strip(f.commit) for f in plain.commits()]
    assert mine == theirs
    assert [t.turn.legal_moves_json != [] for t in mine[:-1]] == [
        v % 2 == 0 for v in range(len(DRAW))
    ]
    for s in sessions:
        s.close()


async def test_subscriptions_play_at_once_and_refusals_stay_in_theirs(service):
    players = [service.player(p) for p in TTT]
    a = await players[0].create("tic_tac_toe", TTT)
    b = await players[0].create("tic_tac_toe", TTT)
    x = Session(players[0])
    await x.open("a", a)
    await x.open("b", b)
    await x.until(lambda: x.version("a") == 0 and x.version("b") == 0)
    await x.move("a", "1", place(4))
    await x.move("b", "1", place(4))
    await x.move("a", "2", place(0))  # not X's turn in a
    assert (await x.answer("1", "a")).commit.version == 1
    assert (await x.answer("1", "b")).commit.version == 1
    assert _error(await x.answer("2", "a"))[:2] == ("FAILED_PRECONDITION", "not_your_turn")
    await x.move("c", "3", place(0))  # no such subscription
    code, reason, meta = _error(await x.answer("3", "c"))
    assert (code, reason, meta["sub"]) == ("FAILED_PRECONDITION", "not_subscribed", "c")
    assert x.error is None and not x.reader.done()
    x.close()


async def test_opening_badly_is_an_error_frame_for_that_subscription_only(service):
    players = [service.player(p) for p in TTT]
    match_id = await players[0].create("tic_tac_toe", TTT)
    x = Session(players[0])
    await x.open("ok", match_id)
    await x.open("unknown", "no-such-match")
    await x.open("ahead", match_id, after_version=5)
    await x.open("", match_id)
    await x.open("ok", match_id)  # in use
    assert _error(await x.answer("", "unknown"))[:2] == ("NOT_FOUND", "match_not_found")
    assert _error(await x.answer("", "ahead"))[:2] == ("INVALID_ARGUMENT", "version_ahead")
    assert _error(await x.answer("", ""))[:2] == ("INVALID_ARGUMENT", "bad_subscription")
    await x.until_version("ok", 0)
    await x.until(lambda: any(f.WhichOneof(K) == "error" for f in x.of("ok")))
    assert [_error(f)[1] for f in x.of("ok") if f.WhichOneof(K) == "error"] == [
        "subscription_in_use"
    ]
    await x.move("unknown", "m", place(4))  # it ended with its error
    assert _error(await x.answer("m", "unknown"))[1] == "not_subscribed"
    await x.move("ok", "m", place(4))
    assert (await x.answer("m", "ok")).commit.version == 1
    x.close()


async def test_a_closed_subscription_sends_nothing_more_and_its_name_is_free(service):
    players = [service.player(p) for p in TTT]
    match_id = await players[0].create("tic_tac_toe", TTT)
    x = Session(players[0])
    o = Session(players[1])
    await x.open("s", match_id)
    await o.open("s", match_id)
    await x.until_version("s", 0)
    await x.close_sub("s")
    closed = await x.answer("", "s")
    assert closed.WhichOneof(K) == "closed"
    seen = len(x.frames)
    await x.move("s", "late", place(4))
    assert _error(await x.answer("late", "s"))[1] == "not_subscribed"
    await players[0].submit(match_id, place(4))
    await o.until_version("s", 1)  # the other seat saw it; x's closed one did not
    assert [f.WhichOneof(K) for f in x.frames[seen:]] == ["error"]
    await x.open("s", match_id, after_version=1)  # open again under the same name
    await o.move("s", "o", place(0))
    await x.until_version("s", 2)
    assert [f.commit.version for f in x.commits("s")] == [0, 2]
    await x.close_sub("nothing")
    assert _error(await x.answer("", "nothing"))[1] == "not_subscribed"
    for s in (x, o):
        s.close()


async def test_a_half_closed_session_ends_once_its_matches_have(service):
    players = [service.player(p) for p in TTT]
    match_id = await players[0].create("tic_tac_toe", TTT)
    sessions = [Session(p) for p in players]
    for s in sessions:
        await s.open("m", match_id)
        await s.until_version("m", 0)
    await sessions[1].call.done_writing()  # O still follows, and ends with the match
    for i, cell in enumerate(DRAW):
        if i % 2 == 0:
            await sessions[0].until_version("m", i)
            await sessions[0].move("m", f"m{i}", place(cell))
        else:  # once X's move is in: O's half-closed session still follows
            await sessions[1].until_version("m", i)
            await players[1].submit(match_id, place(cell))
    assert await sessions[1].ended() == grpc.StatusCode.OK
    assert sessions[1].version("m") == len(DRAW)
    assert not sessions[0].reader.done()  # still open for more
    await sessions[0].call.done_writing()
    assert await sessions[0].ended() == grpc.StatusCode.OK


async def test_a_move_sent_after_the_last_commit_is_still_answered(service):
    players = [service.player(p) for p in TTT]
    match_id = await players[0].create("tic_tac_toe", TTT)
    x = Session(players[0])
    await x.open("m", match_id)
    for i, cell in enumerate(DRAW[:-1]):
        await players[i % 2].submit(match_id, place(cell))
    await x.until_version("m", len(DRAW) - 1)
    await x.move("m", "last", place(DRAW[-1]))
    await x.move("m", "after", place(DRAW[-1]))
    assert (await x.answer("last", "m")).commit.status == match_pb2.MATCH_STATUS_FINISHED
    assert _error(await x.answer("after", "m"))[:2] == ("FAILED_PRECONDITION", "game_over")
    x.close()


async def test_creates_on_a_session_are_create_match_calls(start_service):
    service = await start_service(limits=LimitSettings(create_match=Rate(2, 60)))
    x = Session(service.player("guest:x"))
    await x.create("k1", "tic_tac_toe", TTT, idempotency_key="same")
    await x.create("k2", "tic_tac_toe", TTT, idempotency_key="same")  # a retry: one match
    first, again = await x.answer("k1"), await x.answer("k2")
    assert first.created.match_id == again.created.match_id
    await x.create("bad", "no_such_game", TTT)
    await x.create("over", "tic_tac_toe", TTT)
    assert _error(await x.answer("bad"))[:2] == ("RESOURCE_EXHAUSTED", "rate_limited")
    assert _error(await x.answer("over"))[:2] == ("RESOURCE_EXHAUSTED", "rate_limited")
    y = Session(service.player("guest:y"))
    await y.create("bad", "no_such_game", TTT)
    await y.create("opts", "tic_tac_toe", TTT, options_json=DEEP)
    assert _error(await y.answer("bad"))[:2] == ("NOT_FOUND", "unknown_game")
    assert _error(await y.answer("opts"))[:2] == ("INVALID_ARGUMENT", "json_too_deep")
    for s in (x, y):
        s.close()


async def test_a_session_holds_a_bounded_number_of_subscriptions(start_service):
    service = await start_service(session_max_subscriptions=2)
    players = [service.player(p) for p in TTT]
    match_id = await players[0].create("tic_tac_toe", TTT)
    x = Session(players[0])
    for sub in ("a", "b", "c"):
        await x.open(sub, match_id)
    code, reason, meta = _error(await x.answer("", "c"))
    assert (code, reason, meta["limit"]) == ("RESOURCE_EXHAUSTED", "too_many_subscriptions", "2")
    await x.create("k", "tic_tac_toe", TTT)
    assert _error(await x.answer("k"))[1] == "too_many_subscriptions"
    await x.close_sub("a")
    await x.open("c", match_id)
    await x.until_version("c", 0)
    x.close()


async def test_requests_that_cannot_be_answered_end_the_session(service):
    players = [service.player(p) for p in TTT]
    match_id = await players[0].create("tic_tac_toe", TTT)
    x = Session(players[0])
    await x.open("m", match_id)
    await x.move("m", "big", place(4), idempotency_key="k" * 300)  # refused, echoed
    code, reason, meta = _error(await x.answer("big", "m"))
    assert (code, reason, meta["field"]) == (
        "INVALID_ARGUMENT",
        "field_too_long",
        "move.move.idempotency_key",
    )
    await x.move("m", "json", DEEP)
    assert _error(await x.answer("json", "m"))[1] == "json_too_deep"
    await x.move("m", "r" * 300, place(4))  # its ref cannot be echoed
    assert await x.ended() == grpc.StatusCode.INVALID_ARGUMENT
    assert error_info(x.error).reason == "field_too_long"
    empty = Session(players[0])
    await empty.call.write(match_pb2.SessionRequest())
    assert await empty.ended() == grpc.StatusCode.INVALID_ARGUMENT
    assert error_info(empty.error).reason == "request_expected"
    assert len(await stream_commits(service.server.settings.nats_url, match_id)) == 1


async def test_a_session_never_carries_another_seats_secret(service):
    """A subscription's commits are WatchMatch's for the same caller, and hold
    no secret of another seat (the test game deals one per seat and one per
    bid)."""
    game = SECRET_GAME
    ids = ["guest:a", "guest:b"]
    players = [service.player(p) for p in ids]
    match_id = await players[0].create("secret_bids", ids)
    sessions = [Session(p) for p in players]
    for s in sessions:
        await s.open("m", match_id, include_view=True)
    watched = [
        asyncio.ensure_future(_collect(p.watch(match_id, include_view=True))) for p in players
    ]
    for r in range(3):
        for seat in (0, 1):
            await sessions[seat].until_version("m", 2 * r)
            await sessions[seat].move("m", f"{seat}{r}", move_json(Bid(amount=5)))
    states = None
    for seat, s in enumerate(sessions):
        await s.until(lambda s=s: s.commits("m") and s.commits("m")[-1].commit.outcome.reason)
        commits = [f.commit for f in s.commits("m")]
        assert commits == await asyncio.wait_for(watched[seat], 10)
        states = states or states_by_version(game, await commits_of(service, match_id))
        for frame, state in zip(s.commits("m"), states, strict=True):
            others = {w for o, words in game.secrets(state).items() if o != seat for w in words}
            assert others
            leaked = [w for w in others if w in str(frame)]
            assert not leaked, f"seat {seat} saw {leaked} at version {frame.commit.version}"
        s.close()


async def _collect(call: Any) -> list[Any]:
    return [c async for c in call]


async def test_the_session_ends_when_its_token_expires(start_service, settings):
    service = await start_service(auth=replace(settings.auth, leeway_s=0))
    players = [service.player(p) for p in TTT]
    match_id = await players[0].create("tic_tac_toe", TTT)
    tokens = Tokens(replace(settings.auth, leeway_s=0))
    player = Player(service.channel, tokens.issue("guest:x", ttl_s=2), "guest:x")
    x = Session(player)
    await x.open("m", match_id)
    await x.until_version("m", 0)
    assert await x.ended(timeout=10) == grpc.StatusCode.UNAUTHENTICATED
    assert error_info(x.error).reason == "token_expired"


async def test_moves_on_a_session_count_as_submit_move_calls(start_service):
    service = await start_service(limits=LimitSettings(submit_move=Rate(1, 60)))
    players = [service.player(p) for p in TTT]
    match_id = await players[0].create("tic_tac_toe", TTT)
    x = Session(players[0])
    await x.open("m", match_id)
    await x.move("m", "one", place(4))
    await x.move("m", "two", place(0))
    assert (await x.answer("one", "m")).commit.version == 1
    assert _error(await x.answer("two", "m"))[:2] == ("RESOURCE_EXHAUSTED", "rate_limited")
    x.close()
