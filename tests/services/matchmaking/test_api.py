"""The gRPC API with a matchmaker running, against a real valkey."""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import time

import grpc
import pytest
from grpc_status import rpc_status

from services.matchmaking.inprocess import InProcessMatchCreator
from services.matchmaking.matchmaker import Matchmaker
from services.matchmaking.ratings import rating_key
from tabletop.matchmaking.v1 import matchmaking_pb2 as pb

from .conftest import auth, running_api, until

TTT = "tic_tac_toe"


@contextlib.asynccontextmanager
async def matchmaker(api, settings, creator=None):
    creator = creator or InProcessMatchCreator()
    stop = asyncio.Event()
    task = asyncio.create_task(Matchmaker(api.app.store, creator, settings).run(stop))
    try:
        yield creator
    finally:
        stop.set()
        await task


async def party_token(api, member: str, leader: str, game: str = TTT) -> str:
    res = await api.stub.JoinParty(
        pb.JoinPartyRequest(leader=leader, game=game), metadata=auth(member)
    )
    return res.party_token


async def enqueue(api, player: str, **kw) -> str:
    """Enqueue ``player``; each member of ``party`` consents first (JoinParty)."""
    kw.setdefault("game", TTT)
    if kw.get("party") and "party_tokens" not in kw:
        kw["party_tokens"] = [await party_token(api, m, player, kw["game"]) for m in kw["party"]]
    res = await api.stub.Enqueue(pb.EnqueueRequest(**kw), metadata=auth(player))
    return res.ticket_id


async def watch_all(api, player: str, ticket: str) -> list[pb.TicketUpdate]:
    return [
        u
        async for u in api.stub.WatchTicket(
            pb.WatchTicketRequest(ticket_id=ticket), metadata=auth(player)
        )
    ]


def reason(err: grpc.aio.AioRpcError) -> str:
    status = rpc_status.from_call(err)
    from google.rpc import error_details_pb2

    info = error_details_pb2.ErrorInfo()
    status.details[0].Unpack(info)
    return info.reason


async def test_two_players_are_matched_and_each_learns_their_seat(api, settings) -> None:
    async with matchmaker(api, settings) as creator:
        a = await enqueue(api, "alice")
        b = await enqueue(api, "bob")
        ua, ub = await asyncio.gather(watch_all(api, "alice", a), watch_all(api, "bob", b))
    last_a, last_b = ua[-1], ub[-1]
    assert last_a.state == pb.TICKET_STATE_MATCHED and last_b.state == pb.TICKET_STATE_MATCHED
    assert last_a.matched.match_id == last_b.matched.match_id
    _, players, _ = creator.matches[last_a.matched.match_id]
    assert players[last_a.matched.seat] == "alice" and players[last_b.matched.seat] == "bob"
    assert last_a.matched.player_count == 2 and last_a.matched.bots == 0


async def test_bad_requests_get_typed_errors(api) -> None:
    with pytest.raises(grpc.aio.AioRpcError) as e:
        await enqueue(api, "alice", game="chess")
    assert e.value.code() == grpc.StatusCode.NOT_FOUND and reason(e.value) == "unknown_game"
    with pytest.raises(grpc.aio.AioRpcError) as e:
        await enqueue(api, "alice", player_counts=[5])
    assert e.value.code() == grpc.StatusCode.INVALID_ARGUMENT and reason(e.value) == "player_count"
    with pytest.raises(grpc.aio.AioRpcError) as e:
        await enqueue(api, "alice", options_json="[1,")
    assert e.value.code() == grpc.StatusCode.INVALID_ARGUMENT
    with pytest.raises(grpc.aio.AioRpcError) as e:
        await api.stub.Enqueue(pb.EnqueueRequest(game=TTT))
    assert e.value.code() == grpc.StatusCode.UNAUTHENTICATED
    t = await enqueue(api, "alice")
    with pytest.raises(grpc.aio.AioRpcError) as e:
        await enqueue(api, "alice")
    assert e.value.code() == grpc.StatusCode.ALREADY_EXISTS
    with pytest.raises(grpc.aio.AioRpcError) as e:
        await api.stub.CancelTicket(pb.CancelTicketRequest(ticket_id=t), metadata=auth("mallory"))
    assert e.value.code() == grpc.StatusCode.PERMISSION_DENIED
    with pytest.raises(grpc.aio.AioRpcError) as e:
        await api.stub.CancelTicket(
            pb.CancelTicketRequest(ticket_id="nope"), metadata=auth("alice")
        )
    assert e.value.code() == grpc.StatusCode.NOT_FOUND


async def test_cancel_ends_the_ticket_and_frees_the_player(api, settings) -> None:
    t = await enqueue(api, "alice")
    res = await api.stub.CancelTicket(pb.CancelTicketRequest(ticket_id=t), metadata=auth("alice"))
    assert res.state == pb.TICKET_STATE_CANCELLED
    updates = await watch_all(api, "alice", t)
    assert [u.state for u in updates] == [pb.TICKET_STATE_CANCELLED]
    assert updates[0].reason == "cancelled"
    with pytest.raises(grpc.aio.AioRpcError) as e:
        await api.stub.CancelTicket(pb.CancelTicketRequest(ticket_id=t), metadata=auth("alice"))
    assert e.value.code() == grpc.StatusCode.FAILED_PRECONDITION
    # A cancelled ticket is never matched; the player may queue again.
    t2 = await enqueue(api, "alice")
    async with matchmaker(api, settings):
        await enqueue(api, "bob")
        updates = await watch_all(api, "alice", t2)
    assert updates[-1].state == pb.TICKET_STATE_MATCHED
    assert (await api.app.store.get(t)).state == "cancelled"


async def test_a_watcher_cancelling_mid_stream_is_seen_by_the_other_watcher(api) -> None:
    t = await enqueue(api, "alice")
    call = api.stub.WatchTicket(pb.WatchTicketRequest(ticket_id=t), metadata=auth("alice"))
    first = await call.read()
    assert first.state == pb.TICKET_STATE_SEARCHING
    await api.stub.CancelTicket(pb.CancelTicketRequest(ticket_id=t), metadata=auth("alice"))
    rest = []
    while (u := await call.read()) is not grpc.aio.EOF:
        rest.append(u)
    assert rest[-1].state == pb.TICKET_STATE_CANCELLED


async def test_a_ticket_whose_watcher_disconnects_is_cancelled_after_the_grace(
    api, settings
) -> None:
    s = settings  # grace 1 s
    kept = await enqueue(api, "alice")
    lost = await enqueue(api, "bob", player_counts=[2])
    # Both watch; bob's client goes away; alice's reconnects within the grace.
    ca = api.stub.WatchTicket(pb.WatchTicketRequest(ticket_id=kept), metadata=auth("alice"))
    watched = time.monotonic()  # bob's watch touches his ticket after this
    cb = api.stub.WatchTicket(pb.WatchTicketRequest(ticket_id=lost), metadata=auth("bob"))
    assert (await ca.read()).state == pb.TICKET_STATE_SEARCHING
    assert (await cb.read()).state == pb.TICKET_STATE_SEARCHING
    ca.cancel()
    cb.cancel()
    await asyncio.sleep(s.watch_grace_s / 2)
    ca = api.stub.WatchTicket(pb.WatchTicketRequest(ticket_id=kept), metadata=auth("alice"))
    assert (await ca.read()).state == pb.TICKET_STATE_SEARCHING
    # No matchmaker runs, so only the sweep can end tickets.
    store = api.app.store
    started = time.monotonic()

    async def bob_gone() -> bool:
        await store.sweep()
        return (await store.get(lost)).state == "cancelled"

    await until(bob_gone, timeout=5)
    # Never before the grace has run from the last touch of his watch, which
    # came after ``watched`` (the touch when his stream leaves extends it
    # further; it is not relied on here).
    assert time.monotonic() - watched >= s.watch_grace_s - 0.05
    assert time.monotonic() - started < s.watch_grace_s + 3
    assert (await store.get(lost)).reason == "watcher_lost"
    await asyncio.sleep(s.watch_grace_s)
    await store.sweep()
    assert (await store.get(kept)).state == "searching"
    ca.cancel()


async def test_a_far_player_is_matched_once_the_window_reaches_them(api, settings, rclient) -> None:
    s = dataclasses.replace(settings, window_base=2.0, window_growth=10.0, watch_update_s=0.1)
    await rclient.hset(rating_key(TTT, "far"), mapping={"mu": 45.0, "sigma": 3.0, "matches": 9})
    gap = 20.0  # 45 vs the default 25
    async with running_api(s, rclient) as a2, matchmaker(a2, s):
        near = await enqueue(a2, "near")
        far = await enqueue(a2, "far")
        updates = await watch_all(a2, "far", far)
        near_updates = await watch_all(a2, "near", near)
    searching = [u.searching for u in updates if u.state == pb.TICKET_STATE_SEARCHING]
    assert searching, "the far player had to wait"
    assert all(u.rating_window < gap for u in searching[:-1])
    assert searching[0].rating == pytest.approx(45.0)
    final = updates[-1]
    assert final.state == pb.TICKET_STATE_MATCHED
    assert near_updates[-1].matched.match_id == final.matched.match_id
    rec = await a2.app.store.get(far)
    # Matched no earlier than when both windows reached the gap.
    assert rec.state == "matched"
    assert (
        searching[-1].waited_seconds
        >= (gap - s.window_base) / s.window_growth - s.watch_update_s - 0.05
    )


async def test_a_party_is_seated_together(api, settings) -> None:
    async with matchmaker(api, settings) as creator:
        solo1 = await enqueue(api, "solo1")
        party = await enqueue(api, "lead", party=["mate"])
        solo2 = await enqueue(api, "solo2")
        up = await watch_all(api, "mate", party)
        u1 = await watch_all(api, "solo1", solo1)
        await watch_all(api, "solo2", solo2)
    m = up[-1].matched
    assert up[-1].state == pb.TICKET_STATE_MATCHED
    assert dict(m.seats).keys() == {"lead", "mate"} and m.seat == m.seats["mate"]
    _, players, _ = creator.matches[m.match_id]
    assert sorted(players) == ["lead", "mate"]
    assert u1[-1].matched.match_id != m.match_id


async def test_bots_fill_a_lonely_ticket_after_the_wait(api, settings) -> None:
    s = dataclasses.replace(settings, bot_fill_after_s=0.3)
    async with running_api(s, api.app.store.redis) as a2, matchmaker(a2, s) as creator:
        t = await enqueue(a2, "alice", allow_bots=True)
        no_bots = await enqueue(a2, "bob", game=TTT, player_counts=[2], allow_bots=False)
        # alice and bob are matched together first (humans before bots) ...
        u = await watch_all(a2, "alice", t)
        assert u[-1].matched.bots == 0
        await watch_all(a2, "bob", no_bots)
        # ... a lonely bot-friendly ticket gets a bot after the wait.
        t2 = await enqueue(a2, "carol", allow_bots=True)
        u2 = await watch_all(a2, "carol", t2)
    m = u2[-1].matched
    assert u2[-1].state == pb.TICKET_STATE_MATCHED and m.bots == 1
    assert u2[-2].searching.waited_seconds < 0.3 + 0.2
    _, players, _ = creator.matches[m.match_id]
    assert sorted(players)[0].startswith("bot:") and "carol" in players
    jobs = await a2.app.store.redis.xrange("mm:bots")
    assert [j[1][b"match_id"].decode() for j in jobs] == [m.match_id]


async def test_parties_are_seated_together_in_bigger_matches(api, settings) -> None:
    df = {"game": "dice_forge", "player_counts": [4]}
    async with matchmaker(api, settings) as creator:
        tickets = {
            "lead": await enqueue(api, "lead", party=["mate"], **df),
            "s1": await enqueue(api, "s1", **df),
            "x": await enqueue(api, "x", party=["y", "z"], **df),
            "s2": await enqueue(api, "s2", **df),
            "s3": await enqueue(api, "s3", **df),
        }
        final = {p: (await watch_all(api, p, t))[-1] for p, t in tickets.items()}
    assert all(u.state == pb.TICKET_STATE_MATCHED for u in final.values())
    matches = {u.matched.match_id for u in final.values()}
    assert len(matches) == 2
    for match_id in matches:
        _, players, _ = creator.matches[match_id]
        assert len(players) == 4
    _, with_pair, _ = creator.matches[final["lead"].matched.match_id]
    _, with_trio, _ = creator.matches[final["x"].matched.match_id]
    assert {"lead", "mate"} <= set(with_pair) and {"x", "y", "z"} <= set(with_trio)
    assert dict(final["x"].matched.seats).keys() == {"x", "y", "z"}


async def test_tickets_meet_only_players_asking_for_the_same_clock(api, settings) -> None:
    with pytest.raises(grpc.aio.AioRpcError) as e:
        await enqueue(api, "alice", time_control="-5s")
    assert e.value.code() == grpc.StatusCode.INVALID_ARGUMENT
    assert reason(e.value) == "bad_time_control"
    async with matchmaker(api, settings) as creator:
        a = await enqueue(api, "alice", time_control="30s")
        b = await enqueue(api, "bob", time_control="1m")
        c = await enqueue(api, "carol", time_control="30s timeouts=0")  # the same clock
        ua, uc = await asyncio.gather(watch_all(api, "alice", a), watch_all(api, "carol", c))
        match_id = ua[-1].matched.match_id
        assert match_id and uc[-1].matched.match_id == match_id
        assert creator.clocks[match_id] == "30s"
        _, players, _ = creator.matches[match_id]
        assert sorted(players) == ["alice", "carol"]
        await api.stub.CancelTicket(pb.CancelTicketRequest(ticket_id=b), metadata=auth("bob"))


async def test_a_ticket_chooses_the_level_of_the_bots_that_fill_its_match(
    api, settings, rclient
) -> None:
    s = dataclasses.replace(settings, bot_fill_after_s=0.2, bot_level="greedy")
    # Three people cannot fill a 4-player match: bots fill it, by level.
    df = {"game": "dice_forge", "player_counts": [4], "allow_bots": True}
    async with running_api(s, rclient) as a2, matchmaker(a2, s) as creator:
        tickets = {
            "alice": await enqueue(a2, "alice", bot_level="search", **df),
            "bob": await enqueue(a2, "bob", bot_level="random", **df),
            "carol": await enqueue(a2, "carol", **df),  # none named: the setting's
        }
        final = {p: (await watch_all(a2, p, t))[-1] for p, t in tickets.items()}
    expected = {"alice": "search", "bob": "random", "carol": "greedy"}
    # Three people, three levels: nobody shares a match with bots of another level.
    assert len({u.matched.match_id for u in final.values()}) == 3
    for player, level in expected.items():
        m = final[player].matched
        assert final[player].state == pb.TICKET_STATE_MATCHED
        assert m.bots == 3 and m.bot_level == level
        _, players, _ = creator.matches[m.match_id]
        assert sorted(players) == sorted([player, *(f"bot:{level}-{k}" for k in (1, 2, 3))])
        assert await rclient.hget(f"mm:t:{tickets[player]}", "blevel") == level.encode()
    jobs = {
        j[1][b"match_id"].decode(): j[1][b"bots"].decode() for j in await rclient.xrange("mm:bots")
    }
    assert set(jobs) == {u.matched.match_id for u in final.values()}
    assert all(f"bot:{expected[p]}-1" in jobs[u.matched.match_id] for p, u in final.items())


async def test_people_asking_for_other_bot_levels_still_meet(api, settings) -> None:
    async with matchmaker(api, settings) as creator:
        a = await enqueue(api, "alice", allow_bots=True, bot_level="search")
        b = await enqueue(api, "bob", allow_bots=True, bot_level="random")
        ua, ub = await asyncio.gather(watch_all(api, "alice", a), watch_all(api, "bob", b))
    assert ua[-1].matched.match_id == ub[-1].matched.match_id
    assert ua[-1].matched.bots == 0 and ua[-1].matched.bot_level == ""
    _, players, _ = creator.matches[ua[-1].matched.match_id]
    assert sorted(players) == ["alice", "bob"]


async def test_an_unknown_bot_level_is_refused_and_nothing_is_queued(api, rclient) -> None:
    for bad in ("expert", "Search", "x" * 250):
        with pytest.raises(grpc.aio.AioRpcError) as e:
            await enqueue(api, "alice", allow_bots=True, bot_level=bad)
        assert e.value.code() == grpc.StatusCode.INVALID_ARGUMENT
        assert reason(e.value) == "bad_bot_level"
        assert "random, greedy, search" in e.value.details()
        assert len(e.value.details()) < 200
    with pytest.raises(grpc.aio.AioRpcError) as e:  # like every string field
        await enqueue(api, "alice", allow_bots=True, bot_level="x" * 300)
    assert reason(e.value) == "field_too_long"
    assert await rclient.zcard("mm:exp") == 0
    assert not await rclient.exists("mm:p:alice")
    assert not [k async for k in rclient.scan_iter("mm:t:*")]
    # alice is not queued: a good level is taken at once.
    t = await enqueue(api, "alice", allow_bots=True, bot_level=" search ")
    assert await rclient.hget(f"mm:t:{t}", "blevel") == b"search"
