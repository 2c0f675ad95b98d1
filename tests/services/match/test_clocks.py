"""Turn clocks with real NATS (message schedules), real Redis and the real
service: timeouts, races at the deadline, chess clocks, bad controls."""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import os
import signal
import subprocess
import sys
import time
from collections.abc import Awaitable, Callable
from typing import Any

import grpc
import pytest

from engine_core.games.tic_tac_toe import GAME as TTT
from services.common.auth import bearer_metadata
from services.common.errors import error_info
from services.common.logging import listening_address
from services.match.clocks import TAKEOVER_MS, forfeit_outcome
from services.match.model import KIND_FORFEIT, Commit, now_ms
from tabletop.match.v1 import match_pb2, match_pb2_grpc
from tests.services.match.conftest import stream_commits
from tests.services.match.helpers import commits_of, replay_in_process
from tests.services.match.secret_game import GAME as SECRET_GAME

TC = match_pb2.TimeControl
A, B = "guest:a", "guest:b"


def per_move(ms: int, **kw: Any) -> match_pb2.MatchOptions:
    return match_pb2.MatchOptions(time_control=TC(kind=TC.KIND_PER_MOVE, per_move_ms=ms, **kw))


def fischer(initial: int, increment: int, delay: int = 0) -> match_pb2.MatchOptions:
    return match_pb2.MatchOptions(
        time_control=TC(
            kind=TC.KIND_FISCHER, initial_ms=initial, increment_ms=increment, delay_ms=delay
        )
    )


async def until(check: Callable[[], Awaitable[Any]], timeout: float = 20.0) -> Any:
    """Poll ``check`` until it returns something truthy (or fail after ``timeout``)."""
    deadline = time.monotonic() + timeout
    while True:
        value = await check()
        if value:
            return value
        assert time.monotonic() < deadline, "timed out waiting for the condition"
        await asyncio.sleep(0.05)


def assert_timeouts_on_time(commits: list[Commit], late_ms: int = 3000) -> None:
    """Every timeout commit came at or after the deadline the previous commit
    set for its seat (never early, so never applied twice), and not late."""
    for before, c in itertools.pairwise(commits):
        if not c.timeout:
            continue
        assert before.clocks is not None and c.seat is not None
        deadline = before.clocks.deadlines[c.seat]
        assert deadline, f"version {c.version}: a timeout for a seat nobody waited for"
        assert deadline <= c.time_ms <= deadline + late_ms, (c.version, c.time_ms - deadline)


def legal_outcome(commits: list[Commit]) -> None:
    """Deciding every stored move again in process gives the stored outcome."""
    moves = [c for c in commits if c.kind != KIND_FORFEIT]
    state, _events = replay_in_process(TTT, moves)
    assert TTT.outcome(state) == moves[-1].outcome


# ------------------------------------------------------------ a silent seat
async def test_a_silent_seat_gets_default_moves_on_time_until_the_end(service) -> None:
    a, b = service.player(A), service.player(B)
    match_id = await a.create("tic_tac_toe", [A, B], match_options=per_move(1000))

    async def answer_as_b() -> None:  # seat 1 plays at once whenever it is awaited
        async for c in b.watch(match_id):
            if c.status == match_pb2.MATCH_STATUS_FINISHED:
                return
            state = await b.get(match_id)
            if 1 in state.awaiting and state.legal_moves_json:
                with contextlib.suppress(grpc.aio.AioRpcError):  # raced: asked again next
                    await b.submit(match_id, state.legal_moves_json[-1])

    task = asyncio.create_task(answer_as_b())
    try:
        await asyncio.wait_for(task, 30)
    finally:
        task.cancel()
    commits = await commits_of(service, match_id)
    assert commits[-1].outcome is not None
    seat0 = [c for c in commits[1:] if c.seat == 0]
    assert seat0 and all(c.timeout and c.player == "svc:clock" for c in seat0)
    assert not any(c.timeout for c in commits if c.seat == 1)
    assert_timeouts_on_time(commits)
    legal_outcome(commits)
    # the clocks are in the views too
    final = await a.get(match_id)
    assert final.status == match_pb2.MATCH_STATUS_FINISHED
    assert [sc.deadline for sc in final.clocks] == ["", ""]
    assert final.clocks[0].timeouts == len(seat0)


async def test_after_max_timeouts_a_bot_plays_the_seat_until_its_player_moves(service) -> None:
    a, b = service.player(A), service.player(B)
    options = per_move(1000, max_timeouts=1, on_max_timeouts=TC.ON_MAX_TIMEOUTS_BOT)
    match_id = await a.create("tic_tac_toe", [A, B], match_options=options)

    async def at(version: int) -> Any:
        reply = await a.get(match_id)
        return reply if reply.version >= version else None

    # seat 0 silent: its first timeout hands it over
    first = await until(lambda: at(1))
    assert first.clocks[0].taken_over and first.clocks[0].timeouts == 1
    await b.submit(match_id, (await b.get(match_id)).legal_moves_json[0])
    # the bot moves for seat 0 TAKEOVER_MS after its decision starts
    second = await until(lambda: at(3))
    commits = await commits_of(service, match_id)
    bot_move = commits[3]
    assert bot_move.seat == 0 and bot_move.timeout
    assert bot_move.time_ms - commits[2].time_ms >= TAKEOVER_MS
    assert second.clocks[0].taken_over
    # its player comes back: a move of theirs ends the takeover
    await b.submit(match_id, (await b.get(match_id)).legal_moves_json[0])
    mine = await until(lambda: at(4))
    if mine.status == match_pb2.MATCH_STATUS_ACTIVE and 0 in mine.awaiting:
        reply = await a.submit(match_id, mine.legal_moves_json[0])
        assert not reply.clocks[0].taken_over and reply.clocks[0].timeouts == 0
    assert_timeouts_on_time(await commits_of(service, match_id))


async def test_after_max_timeouts_the_seat_can_forfeit(service) -> None:
    a = service.player(A)
    options = per_move(1000, max_timeouts=1, on_max_timeouts=TC.ON_MAX_TIMEOUTS_FORFEIT)
    match_id = await a.create("tic_tac_toe", [A, B], match_options=options)

    async def finished() -> Any:
        reply = await a.get(match_id)
        return reply if reply.status == match_pb2.MATCH_STATUS_FINISHED else None

    reply = await until(finished)
    assert list(reply.outcome.ranks) == [2, 1] and reply.outcome.reason == "forfeit"
    commits = await commits_of(service, match_id)
    assert [c.kind for c in commits] == ["created", KIND_FORFEIT]
    assert commits[1].outcome == forfeit_outcome(2, 0)
    assert_timeouts_on_time(commits)
    replayed = [c async for c in a.replay(match_id)]
    assert replayed[-1].forfeit and replayed[-1].seat == 0


# ------------------------------------------------------- racing the deadline
async def test_a_move_just_before_the_deadline_wins_just_after_loses(service) -> None:
    a, b = service.player(A), service.player(B)
    match_id = await a.create("tic_tac_toe", [A, B], match_options=per_move(1000))
    first = (await commits_of(service, match_id))[0]
    assert first.clocks is not None
    # just before: seat 0 moves 300 ms before its deadline and wins
    await asyncio.sleep(max(0, first.clocks.deadlines[0] - now_ms() - 300) / 1000)
    reply = await a.submit(match_id, '{"type": "place_mark", "cell": 4}')
    assert reply.version == 1
    deadline_b = reply.clocks[1].deadline
    after = (await commits_of(service, match_id))[1]
    assert after.clocks is not None and not after.timeout
    # just after: seat 1's move 100 ms late loses to the timer, whoever comes first
    await asyncio.sleep(max(0, after.clocks.deadlines[1] - now_ms() + 100) / 1000)
    with pytest.raises(grpc.aio.AioRpcError) as late:
        await b.submit(match_id, '{"type": "place_mark", "cell": 0}', expected_version=1)
    assert late.value.code() in (grpc.StatusCode.FAILED_PRECONDITION, grpc.StatusCode.ABORTED)
    if late.value.code() == grpc.StatusCode.FAILED_PRECONDITION:
        assert error_info(late.value).reason == "time_expired"

    async def two() -> list[Commit]:
        commits = await commits_of(service, match_id)
        return commits if len(commits) >= 3 else []

    commits = await until(two)
    assert commits[1].player == A and not commits[1].timeout  # the early move
    assert commits[2].seat == 1 and commits[2].timeout  # the timer, not the late move
    assert not any(c.player == B for c in commits)
    assert deadline_b and commits[2].time_ms >= after.clocks.deadlines[1]
    # the timer of version 0 never fired anything after the early move
    assert [c.version for c in commits] == list(range(len(commits)))
    assert_timeouts_on_time(commits)


# ---------------------------------------------------------- servers failing
async def test_a_nats_restart_with_schedules_pending_still_fires_them(
    start_service, nats_server
) -> None:
    service = await start_service(timer_reconcile_s=0.5, timer_grace_s=0.5)
    a = service.player(A)
    matches = [
        await a.create("tic_tac_toe", [A, B], match_options=per_move(1500)) for _ in range(5)
    ]
    nats_server.restart()

    async def all_timed_out() -> bool:
        for match_id in matches:
            try:
                commits = await commits_of(service, match_id)
            except Exception:
                return False  # still reconnecting
            if len(commits) < 2:
                return False
        return True

    await until(all_timed_out, 30)
    for match_id in matches:
        commits = await commits_of(service, match_id)
        assert commits[1].timeout and commits[1].seat == 0
        assert_timeouts_on_time(commits, late_ms=10_000)


async def test_a_lost_schedule_is_fired_by_the_reconciler(start_service) -> None:
    service = await start_service(timer_reconcile_s=0.3, timer_grace_s=0.2)
    timers = service.app.timers
    arm = timers.arm
    lost: list[str] = []

    async def failing_arm(match_id: str, version: int, deadline_ms: int) -> None:
        # the schedule write of the first turn fails (NATS itself stays up):
        # a purge after CreateMatch would race the server's scheduler, which
        # may already have fired on a loaded machine
        if version == 0:
            lost.append(match_id)
            raise TimeoutError("schedule write lost")
        await arm(match_id, version, deadline_ms)

    timers.arm = failing_arm  # type: ignore[method-assign]
    a = service.player(A)
    match_id = await a.create("tic_tac_toe", [A, B], match_options=per_move(500))

    async def timed_out() -> list[Commit]:
        commits = await commits_of(service, match_id)
        return commits if len(commits) >= 2 else []

    commits = await until(timed_out)
    assert lost == [match_id]
    assert commits[1].timeout and commits[1].seat == 0
    assert commits[1].time_ms >= commits[0].clocks.deadlines[0] + 200  # type: ignore[union-attr]


# ---------------------------------------------------------------- chess clocks
async def test_chess_clocks_are_exact_across_replay_and_reconnect(service) -> None:
    a, b = service.player(A), service.player(B)
    initial, increment = 60_000, 2_000
    match_id = await a.create("tic_tac_toe", [A, B], match_options=fischer(initial, increment))
    plays = [(a, 4), (b, 0), (a, 8), (b, 2)]
    for player, cell in plays:
        await asyncio.sleep(0.12)
        await player.submit(match_id, f'{{"type": "place_mark", "cell": {cell}}}')
    commits = await commits_of(service, match_id)
    # the banks follow from the commit times alone, the increment once per move
    bank = [initial, initial]
    for before, c in itertools.pairwise(commits):
        assert c.seat is not None and c.clocks is not None
        bank[c.seat] += -(c.time_ms - before.time_ms) + increment
        assert list(c.clocks.remaining) == bank
        other = 1 - c.seat
        assert c.clocks.deadlines[other] == c.time_ms + bank[other]
        assert c.clocks.deadlines[c.seat] == 0
    # the same clocks in a replay, a watch, a reconnecting watch and GetMatch

    def clocks_of(items: list[Any]) -> list[list[tuple[str, int]]]:
        return [[(sc.deadline, sc.remaining_ms) for sc in x.clocks] for x in items]

    stored = [
        [
            (("" if not d else _rfc(d)), r)
            for d, r in zip(c.clocks.deadlines, c.clocks.remaining, strict=True)
        ]
        for c in commits
        if c.clocks
    ]
    replayed = [c async for c in a.replay(match_id)]
    watched = []
    async for c in b.watch(match_id):
        watched.append(c)
        if c.version == len(commits) - 1:
            break
    resumed = []
    async for c in b.watch(match_id, after_version=2):
        resumed.append(c)
        if c.version == len(commits) - 1:
            break
    assert clocks_of(replayed) == stored
    assert clocks_of(watched) == stored
    assert clocks_of(resumed) == stored[3:]
    now = await a.get(match_id)
    assert clocks_of([now]) == stored[-1:]
    assert now.server_time


def _rfc(ms: int) -> str:
    from services.match.model import rfc3339

    return rfc3339(ms)


# ------------------------------------------------------------------ bad input
@pytest.mark.parametrize(
    ("control", "field"),
    [
        (TC(kind=TC.KIND_PER_MOVE, per_move_ms=-1000), "per_move_ms"),
        (TC(kind=TC.KIND_PER_MOVE, per_move_ms=30 * 24 * 3600 * 1000), "per_move_ms"),
        (TC(kind=TC.KIND_PER_MOVE, per_move_ms=5), "per_move_ms"),
        (TC(kind=TC.KIND_FISCHER, initial_ms=60_000, increment_ms=-5), "increment_ms"),
        (TC(kind=TC.KIND_FISCHER, increment_ms=1000), "initial_ms"),
        (TC(kind=TC.KIND_PER_MOVE, per_move_ms=1000, initial_ms=5000), "initial_ms"),
        (TC(kind=TC.KIND_NONE, max_timeouts=3), "max_timeouts"),
        (TC(kind=42, per_move_ms=1000), "kind"),
        (TC(kind=TC.KIND_PER_MOVE, per_move_ms=1000, max_timeouts=1000), "max_timeouts"),
        (TC(kind=TC.KIND_PER_MOVE, per_move_ms=1000, bot="no-such-bot"), "bot"),
        (
            TC(
                kind=TC.KIND_PER_MOVE,
                per_move_ms=1000,
                bot="greedy",
                on_max_timeouts=TC.ON_MAX_TIMEOUTS_FORFEIT,
            ),
            "bot",
        ),
    ],
)
async def test_a_bad_time_control_is_invalid_argument_with_a_reason(
    service, control, field
) -> None:
    a = service.player(A)
    with pytest.raises(grpc.aio.AioRpcError) as e:
        await a.create(
            "tic_tac_toe", [A, B], match_options=match_pb2.MatchOptions(time_control=control)
        )
    assert e.value.code() == grpc.StatusCode.INVALID_ARGUMENT
    info = error_info(e.value)
    assert info.reason == "bad_time_control"
    assert info.metadata["field"] == field
    assert await service.app.index.matches_of(A) == []  # nothing written


async def test_the_game_default_control_is_the_game_s(service) -> None:
    a = service.player(A)
    options = match_pb2.MatchOptions(time_control=TC(kind=TC.KIND_GAME_DEFAULT))
    match_id = await a.create("dwarves_duel", [A, B], match_options=options)
    reply = await a.get(match_id)
    tc = reply.match_options.time_control
    assert tc.kind == TC.KIND_PER_MOVE and tc.per_move_ms == 20_000
    assert any(sc.deadline for sc in reply.clocks)


# ------------------------------------------------------- a replica killed
def _spawn(settings: Any, log_path: Any, **env: str) -> tuple[subprocess.Popen, str]:
    """A match service process (its log in ``log_path``) and its address."""
    environ = {
        **os.environ,
        "TABLETOP_NATS_URL": settings.nats_url,
        "TABLETOP_REDIS_URL": settings.redis_url,
        "TABLETOP_JWT_SECRET": settings.auth.secret,
        "TABLETOP_MATCH_PORT": "0",
        "TABLETOP_MATCH_GRACE_S": "1",
        **env,
    }
    log = open(log_path, "w")  # noqa: SIM115 - the process writes it while it runs
    proc = subprocess.Popen(
        [sys.executable, "-m", "services.match"], env=environ, stdout=log, stderr=log, text=True
    )
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        for line in log_path.read_text().splitlines():
            address = listening_address(line)
            if address is not None:
                return proc, address
        assert proc.poll() is None, log_path.read_text()[-2000:]
        time.sleep(0.05)
    raise AssertionError("the service did not start")


async def test_kill_9_of_a_replica_handling_fires_another_applies_them_once(
    settings, tokens, tmp_path
) -> None:
    env = {"TABLETOP_MATCH_TIMER_ACK_WAIT_S": "1", "TABLETOP_MATCH_TIMER_RECONCILE_S": "1"}
    procs = [_spawn(settings, tmp_path / f"replica{i}.log", **env) for i in range(2)]
    doomed, (_survivor, address) = procs
    try:
        async with grpc.aio.insecure_channel(address) as channel:
            stub = match_pb2_grpc.MatchServiceStub(channel)
            meta = bearer_metadata(tokens.issue(A))
            matches = []
            for _ in range(20):  # silent seats on both sides: timeouts until the end
                reply = await stub.CreateMatch(
                    match_pb2.CreateMatchRequest(
                        game="tic_tac_toe", players=[A, B], match_options=per_move(1000)
                    ),
                    metadata=meta,
                )
                matches.append(reply.match_id)
            # kill -9 one replica right when the first deadlines fire: the
            # fires it holds are redelivered to the other one
            first = await stream_commits(settings.nats_url, matches[0])
            deadline = first[0].clocks.deadlines[0]
            await asyncio.sleep(max(0, deadline - now_ms() + 60) / 1000)
            doomed[0].send_signal(signal.SIGKILL)
            doomed[0].wait(5)

            async def three_timeouts_each() -> bool:
                for match_id in matches:
                    reply = await stub.GetMatch(
                        match_pb2.GetMatchRequest(match_id=match_id), metadata=meta
                    )
                    if reply.version < 3:
                        return False
                return True

            await until(three_timeouts_each, 60)
        for match_id in matches:
            commits = await stream_commits(settings.nats_url, match_id)
            assert all(c.timeout for c in commits[1:])  # nobody moved
            assert [c.version for c in commits] == list(range(len(commits)))
            # one timeout per deadline: each at or after the deadline the
            # commit before it set (a double would come before its deadline)
            assert_timeouts_on_time(commits, late_ms=10_000)
    finally:
        for proc, _address in procs:
            if proc.poll() is None:
                proc.send_signal(signal.SIGTERM)
                try:
                    proc.wait(10)
                except subprocess.TimeoutExpired:
                    proc.kill()


async def test_simultaneous_decisions_run_every_awaited_clock_at_once(service) -> None:
    """All three seats bid at once: seat 1 bids, seats 0 and 2 stay silent
    and time out at the deadline set when the round began."""
    ids = ["guest:p0", "guest:p1", "guest:p2"]
    p0, p1 = service.player(ids[0]), service.player(ids[1])
    match_id = await p0.create(SECRET_GAME.name, ids, match_options=fischer(1500, 500))
    await asyncio.sleep(0.2)
    await p1.submit(match_id, '{"type": "bid", "amount": 3}')

    async def round_over() -> list[Commit]:
        commits = await commits_of(service, match_id)
        return commits if len(commits) >= 4 else []

    commits = await until(round_over)
    created, bid = commits[0], commits[1]
    assert created.clocks is not None and bid.clocks is not None
    start = created.clocks.deadlines
    assert start[0] == start[1] == start[2] == created.time_ms + 1500  # all running
    # seat 1's move charged its own bank only; the others kept their deadlines
    assert bid.clocks.remaining[1] == 1500 - (bid.time_ms - created.time_ms) + 500
    assert bid.clocks.deadlines[0] == start[0] and bid.clocks.deadlines[2] == start[2]
    timed_out = commits[2:4]
    assert sorted(c.seat for c in timed_out) == [0, 2]
    assert all(c.timeout and c.time_ms >= start[0] for c in timed_out)
    assert timed_out[-1].clocks is not None
    assert [timed_out[-1].clocks.remaining[s] for s in (0, 2)] == [0, 0]
    assert_timeouts_on_time(commits)
