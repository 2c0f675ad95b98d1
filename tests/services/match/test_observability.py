"""What an operator reads: the watchers gauge, per-RPC metrics, the active
and stalled matches, and the log levels of refusals and faults."""

from __future__ import annotations

import asyncio
import time

import grpc
import pytest

from services.match import metrics
from tests.services.match.conftest import make_registry
from tests.services.match.helpers import play_out

GAME = make_registry().get("secret_bids")
IDS = ["guest:a", "guest:b"]


async def until(condition, timeout: float = 10.0) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        if time.monotonic() > deadline:
            raise AssertionError("condition not met in time")
        await asyncio.sleep(0.02)


def connected(viewer: str = "player") -> float:
    return metrics.WATCHING[viewer]._value.get()


async def test_watchers_connected_returns_to_zero_when_every_client_has_gone(service) -> None:
    players = [service.player(p) for p in IDS]
    match_id = await players[0].create("secret_bids", IDS)
    await play_out(service, GAME, match_id, players, seed=1, limit=2)
    before = connected()

    # one client cancels while the stream waits for the next commit ...
    waiting = players[0].watch(match_id)
    async for c in waiting:
        if c.version == 2:
            break
    await until(lambda: connected() == before + 1)
    # ... another stops reading after the first commit and closes its channel
    channel = grpc.aio.insecure_channel(service.server.address)
    from tabletop.match.v1 import match_pb2, match_pb2_grpc

    stub = match_pb2_grpc.MatchServiceStub(channel)
    other = stub.WatchMatch(
        match_pb2.WatchMatchRequest(match_id=match_id), metadata=players[1].metadata
    )
    await other.read()
    await until(lambda: connected() == before + 2)

    waiting.cancel()
    await channel.close()
    await until(lambda: connected() == before)

    # and a watch that ends with the match leaves nothing behind either
    watching = asyncio.ensure_future(_drain(players[1].watch(match_id)))
    await until(lambda: connected() == before + 1)
    await play_out(service, GAME, match_id, players, seed=2)
    await asyncio.wait_for(watching, 10)
    await until(lambda: connected() == before)


async def _drain(call) -> int:
    return len([c async for c in call])


@pytest.mark.parametrize("stop", ["cancel", "close"])
async def test_many_abandoned_watches_leave_the_gauge_at_zero(service, stop) -> None:
    players = [service.player(p) for p in IDS]
    match_id = await players[0].create("secret_bids", IDS)
    before = connected()
    channels, calls = [], []
    for _ in range(5):
        ch = grpc.aio.insecure_channel(service.server.address)
        from tabletop.match.v1 import match_pb2, match_pb2_grpc

        call = match_pb2_grpc.MatchServiceStub(ch).WatchMatch(
            match_pb2.WatchMatchRequest(match_id=match_id), metadata=players[0].metadata
        )
        await call.read()
        channels.append(ch)
        calls.append(call)
    await until(lambda: connected() == before + 5)
    for ch, call in zip(channels, calls, strict=True):
        if stop == "cancel":
            call.cancel()
        await ch.close()
    await until(lambda: connected() == before)


async def test_a_watch_cancelled_while_blocked_writing_is_closed(service) -> None:
    """A client that stops reading a long backlog (the server is suspended
    writing, not waiting for a commit) and goes away: the stream is closed."""
    from engine_core.registry import default_registry

    game = default_registry().get("dice_forge")
    players = [service.player(p) for p in IDS]
    match_id = await players[0].create("dice_forge", IDS)
    await play_out(service, game, match_id, players, seed=3, limit=40)
    before = connected()
    channel = grpc.aio.insecure_channel(service.server.address)
    from tabletop.match.v1 import match_pb2, match_pb2_grpc

    stub = match_pb2_grpc.MatchServiceStub(channel)
    calls = [
        stub.WatchMatch(
            match_pb2.WatchMatchRequest(match_id=match_id, include_view=True),
            metadata=players[0].metadata,
        )
        for _ in range(3)
    ]
    for call in calls:
        await call.read()
    await until(lambda: connected() == before + 3)
    await asyncio.sleep(0.5)  # let the server fill the flow-control window
    for call in calls:
        call.cancel()
    await channel.close()
    await until(lambda: connected() == before)


async def test_active_and_stalled_matches_are_counted_by_game(start_service) -> None:
    from prometheus_client import REGISTRY

    service = await start_service(scan_s=0)  # the test scans by hand
    players = [service.player(p) for p in IDS]
    playing = await players[0].create("secret_bids", IDS)
    ended = await players[0].create("secret_bids", IDS)
    ttt = await players[0].create("tic_tac_toe", IDS)
    await play_out(service, GAME, ended, players, seed=4)
    await players[0].submit(ttt, '{"type": "place_mark", "cell": 4}')
    observer = service.server.observer
    found = await observer.scan()
    assert found.active == {"secret_bids": 1, "tic_tac_toe": 1}
    assert found.stalled == {}

    def sample(name: str, game: str) -> float | None:
        return REGISTRY.get_sample_value(name, {"game": game})

    assert sample("tabletop_match_active", "secret_bids") == 1
    assert sample("tabletop_match_active", "dice_forge") == 0  # known games read 0
    # an hour on, with no commit: both are stalled
    later = int(time.time() * 1000) + 3600_000
    found = await observer.scan(now_ms=later)
    assert sorted(found.stalled_ids) == sorted([playing, ttt])
    assert sample("tabletop_match_stalled", "tic_tac_toe") == 1
    assert sample("tabletop_match_idle_seconds_max", "tic_tac_toe") >= 3600
    # the finished match left nothing in the index's active keys
    index = service.app.index
    info = await index.js.stream_info(index.active_stream, subjects_filter="active.>")
    assert set(info.state.subjects or {}) == {f"active.{playing}", f"active.{ttt}"}
    assert info.state.messages == 2


async def test_a_bot_watching_a_match_its_human_left_is_told_apart(start_service) -> None:
    """Why ``watchers_connected`` read 2 after every person had gone: the bot
    worker keeps watching each match it sits in until the match ends, and a
    match whose human never plays (``tabletop queue``, then nothing) never
    ends. The gauge says who watches, and the scan calls the match stalled."""
    service = await start_service(scan_s=0)
    ids = ["guest:h", "bot:greedy-1"]
    human, bot = service.player(ids[0]), service.player(ids[1])
    match_id = await human.create("tic_tac_toe", ids)
    before = connected("bot")
    watch = bot.watch(match_id)
    await watch.read()
    await until(lambda: connected("bot") == before + 1)
    assert connected("player") == 0
    later = int(time.time() * 1000) + 3600_000
    found = await service.server.observer.scan(now_ms=later)
    assert match_id in found.stalled_ids
    watch.cancel()
    await until(lambda: connected("bot") == before)
