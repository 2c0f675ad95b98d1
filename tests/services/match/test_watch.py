"""Watchers: resume without gap or duplicate; never another seat's secrets."""

from __future__ import annotations

import asyncio

import msgspec
import pytest

from engine_core.registry import default_registry
from services.match.relay import LEGACY_DURABLE
from tests.services.match.conftest import make_registry
from tests.services.match.helpers import commits_of, play_out, states_by_version

GAME = make_registry().get("secret_bids")
SECRET_GAMES = [
    "secret_bids",
    *(g for g in default_registry().names() if g in ("dwarves_duel", "arcane_academy")),
]
IDS = ["guest:a", "guest:b"]


async def collect(call, until_version: int | None = None) -> list:
    out = []
    async for commit in call:
        out.append(commit)
        if until_version is not None and commit.version >= until_version:
            call.cancel()
            break
    return out


async def test_a_watcher_resumes_after_the_last_version_it_saw(service) -> None:
    players = [service.player(p) for p in IDS]
    match_id = await players[0].create("secret_bids", IDS)
    await play_out(service, GAME, match_id, players, seed=1, limit=2)

    first = await collect(players[0].watch(match_id), until_version=2)
    assert [c.version for c in first] == [0, 1, 2]

    # more moves while nobody watches, then resume after version 2 while the
    # game goes on
    await play_out(service, GAME, match_id, players, seed=2, limit=1)
    resumed = asyncio.ensure_future(collect(players[0].watch(match_id, after_version=2)))
    await asyncio.sleep(0.1)
    total = 3 + await play_out(service, GAME, match_id, players, seed=3)
    rest = await asyncio.wait_for(resumed, 10)
    assert [c.version for c in rest] == list(range(3, total + 1))
    assert rest[-1].HasField("outcome")


async def test_a_watcher_at_the_current_version_gets_only_new_commits(service) -> None:
    players = [service.player(p) for p in IDS]
    match_id = await players[0].create("secret_bids", IDS)
    await play_out(service, GAME, match_id, players, seed=1, limit=2)
    watching = asyncio.ensure_future(
        collect(players[1].watch(match_id, after_version=2, include_view=True), until_version=3)
    )
    await asyncio.sleep(0.1)
    await play_out(service, GAME, match_id, players, seed=2, limit=1)
    got = await asyncio.wait_for(watching, 10)
    assert [c.version for c in got] == [3]
    state = states_by_version(GAME, await commits_of(service, match_id))[3]
    assert got[0].view_json == msgspec.json.encode(GAME.view(state, 1)).decode()


@pytest.mark.parametrize("game_id", SECRET_GAMES)
async def test_a_watch_stream_never_carries_another_seats_secrets(service, game_id) -> None:
    game = make_registry().get(game_id)
    ids = [f"guest:p{s}" for s in range(max(2, game.min_players))]
    players = [service.player(p) for p in ids]
    spectator = service.player("guest:nobody")
    match_id = await players[0].create(game_id, ids)
    watches = {
        who: asyncio.ensure_future(collect(p.watch(match_id, include_view=True)))
        for who, p in [(0, players[0]), (1, players[1]), (None, spectator)]
    }
    await asyncio.sleep(0.1)
    await play_out(service, game, match_id, players, seed=11)
    states = states_by_version(game, await commits_of(service, match_id))
    for who, task in watches.items():
        got = await asyncio.wait_for(task, 30)
        assert [c.version for c in got] == list(range(len(states)))
        for commit, state in zip(got, states, strict=True):
            secrets = game.secrets(state)
            # secrets owned by None are hidden from everybody, spectators included
            others = {
                w for seat, words in secrets.items() if seat is None or seat != who for w in words
            }
            if game_id == "secret_bids":
                assert others, "the test game holds secrets at every version"
            # secrets appear as JSON strings: look for the quoted token
            text = " ".join([*commit.events_json, commit.view_json, commit.move_json])
            leaked = [w for w in others if f'"{w}"' in text]
            assert not leaked, f"seat {who} saw {leaked} at version {commit.version}"


async def test_a_finished_match_watched_from_its_end_ends_at_once(service) -> None:
    players = [service.player(p) for p in IDS]
    match_id = await players[0].create("secret_bids", IDS)
    total = await play_out(service, GAME, match_id, players, seed=1)
    assert await collect(players[0].watch(match_id, after_version=total)) == []


async def test_a_watch_survives_a_nats_server_restart(service, nats_server) -> None:
    players = [service.player(p) for p in IDS]
    match_id = await players[0].create("secret_bids", IDS)
    watching = asyncio.ensure_future(collect(players[0].watch(match_id)))
    await play_out(service, GAME, match_id, players, seed=1, limit=2)
    await asyncio.sleep(0.1)
    await asyncio.to_thread(nats_server.restart)
    total = 2 + await play_out(service, GAME, match_id, players, seed=2)
    got = await asyncio.wait_for(watching, 30)
    assert [c.version for c in got] == list(range(total + 1))


async def test_the_sequence_of_every_version_is_found(service) -> None:
    players = [service.player(p) for p in IDS]
    other = await players[0].create("secret_bids", IDS)  # interleaved subjects
    match_id = await players[0].create("secret_bids", IDS)
    for _ in range(3):
        await play_out(service, GAME, match_id, players, seed=1, limit=1)
        await play_out(service, GAME, other, players, seed=2, limit=1)
    store = service.app.store
    items = [x async for x in store.commits(match_id, 0)]
    last = await store.last_seq(other)
    for seq, commit in items:
        assert await store.seq_of_version(match_id, commit.version, last) == seq
    assert await store.seq_of_version(match_id, 99, last) is None


async def _until(condition, timeout: float = 10.0) -> None:
    deadline = asyncio.get_running_loop().time() + timeout
    while not condition():
        assert asyncio.get_running_loop().time() < deadline, "condition not met in time"
        await asyncio.sleep(0.01)


async def test_the_watchers_of_a_match_share_one_subscription(service) -> None:
    players = [service.player(p) for p in IDS]
    spectator = service.player("guest:nobody")
    match_id = await players[0].create("secret_bids", IDS)
    feeds = service.app.feeds
    watches = [asyncio.ensure_future(collect(p.watch(match_id))) for p in (*players, spectator)]
    await _until(lambda: feeds.watchers(match_id) == 3)
    assert len(feeds) == 1
    total = await play_out(service, GAME, match_id, players, seed=5)
    for task in watches:
        got = await asyncio.wait_for(task, 10)
        assert [c.version for c in got] == list(range(total + 1))
    # the feed ends with the match's last commit
    await _until(lambda: len(feeds) == 0)


async def test_a_late_watcher_joins_a_feed_that_is_ahead_without_gap_or_duplicate(
    service,
) -> None:
    players = [service.player(p) for p in IDS]
    match_id = await players[0].create("secret_bids", IDS)
    feeds = service.app.feeds
    early = asyncio.ensure_future(collect(players[0].watch(match_id)))
    await _until(lambda: feeds.watchers(match_id) == 1)
    await play_out(service, GAME, match_id, players, seed=1, limit=3)
    # the shared feed has handed out versions 0..3; this one starts after 1
    late = asyncio.ensure_future(collect(players[1].watch(match_id, after_version=1)))
    await _until(lambda: feeds.watchers(match_id) == 2)
    total = 3 + await play_out(service, GAME, match_id, players, seed=2)
    assert [c.version for c in await asyncio.wait_for(early, 10)] == list(range(total + 1))
    assert [c.version for c in await asyncio.wait_for(late, 10)] == list(range(2, total + 1))


async def test_a_slow_watcher_is_detached_and_catches_up_from_the_stream(service) -> None:
    players = [service.player(p) for p in IDS]
    match_id = await players[0].create("secret_bids", IDS)
    feeds = service.app.feeds
    feeds.queue_limit = 1
    try:
        # one reader in process that does not read while the match moves on
        slow = feeds.follow(match_id, 0)
        first = await asyncio.wait_for(anext(slow), 10)  # attached, at version 0
        fast = asyncio.ensure_future(collect(players[0].watch(match_id)))
        await _until(lambda: feeds.watchers(match_id) == 2)
        total = await play_out(service, GAME, match_id, players, seed=3)
        got = await asyncio.wait_for(fast, 10)
        assert [c.version for c in got] == list(range(total + 1))
        versions = [first[1].version]
        while versions[-1] < total:
            versions.append((await asyncio.wait_for(anext(slow), 10))[1].version)
        assert versions == list(range(total + 1))
        await slow.aclose()
    finally:
        feeds.queue_limit = 256


async def test_a_feed_stops_when_its_last_watcher_leaves(service) -> None:
    players = [service.player(p) for p in IDS]
    match_id = await players[0].create("secret_bids", IDS)
    feeds = service.app.feeds
    calls = [p.watch(match_id) for p in players]
    watches = [asyncio.ensure_future(collect(c)) for c in calls]
    await _until(lambda: feeds.watchers(match_id) == 2)
    calls[0].cancel()
    await _until(lambda: feeds.watchers(match_id) == 1)
    assert len(feeds) == 1
    calls[1].cancel()
    await _until(lambda: len(feeds) == 0)
    await asyncio.gather(*watches, return_exceptions=True)


async def test_a_replica_behind_the_stream_still_watches_every_commit(start_service) -> None:
    one, two = await start_service(), await start_service()
    ones = [one.player(p) for p in IDS]
    twos = [two.player(p) for p in IDS]
    match_id = await ones[0].create("secret_bids", IDS)
    await play_out(one, GAME, match_id, ones, seed=1, limit=2)
    await twos[0].get(match_id)  # replica two now holds version 2 in memory
    await play_out(one, GAME, match_id, ones, seed=2, limit=2)  # the stream is at 4
    # a client that saw version 3 elsewhere, and one from the start, both on two
    resumed = asyncio.ensure_future(collect(twos[0].watch(match_id, after_version=3)))
    whole = asyncio.ensure_future(collect(twos[1].watch(match_id)))
    await _until(lambda: two.app.feeds.watchers(match_id) == 2)
    total = 4 + await play_out(one, GAME, match_id, ones, seed=3)
    assert [c.version for c in await asyncio.wait_for(resumed, 10)] == list(range(4, total + 1))
    assert [c.version for c in await asyncio.wait_for(whole, 10)] == list(range(total + 1))


async def _consumers(service) -> set[str]:
    """The match stream's consumers but the durable one of earlier relays."""
    infos = await service.app.store.js.consumers_info(service.app.store.config.name)
    return {i.name for i in infos} - {LEGACY_DURABLE}


async def test_every_watch_of_a_process_shares_one_consumer(service) -> None:
    """A process follows the match stream with one consumer, however many
    matches its clients watch (none made or deleted per match)."""
    players = [service.player(p) for p in IDS]
    before = await _consumers(service)
    matches = [await players[0].create("secret_bids", IDS) for _ in range(3)]
    watches = [asyncio.ensure_future(collect(p.watch(m))) for m in matches for p in players]
    feeds = service.app.feeds
    await _until(lambda: all(feeds.watchers(m) == 2 for m in matches))
    assert feeds.tap is not None and feeds.tap.consumer in before  # made at the start
    assert await _consumers(service) == before
    for i, m in enumerate(matches):
        total = await play_out(service, GAME, m, players, seed=i)
        for task in watches[2 * i : 2 * i + 2]:
            got = await asyncio.wait_for(task, 10)
            assert [c.version for c in got] == list(range(total + 1))
    assert await _consumers(service) == before
    assert feeds.tap.resets == 0


async def test_a_watch_survives_its_process_losing_the_stream_consumer(start_service) -> None:
    """The tap's consumer deleted on the server: the tap falls silent, makes a
    new one from where it was, and the watcher sees every commit made by
    another replica, in order, once."""
    one, two = await start_service(), await start_service()
    ones = [one.player(p) for p in IDS]
    match_id = await ones[0].create("secret_bids", IDS)
    watching = asyncio.ensure_future(collect(two.player(IDS[1]).watch(match_id)))
    await _until(lambda: two.app.feeds.watchers(match_id) == 1)
    tap = two.app.feeds.tap
    assert tap is not None
    tap.heartbeat_s = 0.2  # notice the silence sooner
    await play_out(one, GAME, match_id, ones, seed=4, limit=2)
    await _until(lambda: two.app.feeds._feeds[match_id].version == 2)
    await two.app.store.js.delete_consumer(two.app.store.config.name, tap.consumer)
    total = 2 + await play_out(one, GAME, match_id, ones, seed=5)
    got = await asyncio.wait_for(watching, 15)
    assert [c.version for c in got] == list(range(total + 1))
    assert tap.resets >= 1


async def test_a_feed_that_misses_a_delivery_reads_it_from_the_stream(start_service) -> None:
    """A version skipped by the deliveries (one lost) is read from the
    stream before the next one is handed out."""
    one, two = await start_service(), await start_service()
    ones = [one.player(p) for p in IDS]
    match_id = await ones[0].create("secret_bids", IDS)
    watching = asyncio.ensure_future(collect(two.player(IDS[0]).watch(match_id)))
    await _until(lambda: two.app.feeds.watchers(match_id) == 1)
    feed = two.app.feeds._feeds[match_id]
    await _until(lambda: feed.version == 0)
    offer = feed.offer
    dropped: list[int] = []

    def lose_the_first(seq: int, data: bytes) -> None:
        if not dropped:
            dropped.append(seq)
            return
        offer(seq, data)

    feed.offer = lose_the_first  # type: ignore[method-assign]
    total = await play_out(one, GAME, match_id, ones, seed=6)
    got = await asyncio.wait_for(watching, 10)
    assert dropped
    assert [c.version for c in got] == list(range(total + 1))


async def test_the_watchers_of_a_match_created_here_read_nothing_from_the_stream(
    service,
) -> None:
    """The feed starts with the creation commit and the tap hands it every
    later one: the match's watchers need no read of the stream."""
    players = [service.player(p) for p in IDS]
    store = service.app.store
    reads: list[str] = []
    commits, last_seq = store.commits, store.last_seq

    def counted_commits(match_id, *args, **kwargs):  # type: ignore[no-untyped-def]
        reads.append(match_id)
        return commits(match_id, *args, **kwargs)

    async def counted_last_seq(match_id):  # type: ignore[no-untyped-def]
        reads.append(match_id)
        return await last_seq(match_id)

    match_id = await players[0].create("secret_bids", IDS)
    store.commits, store.last_seq = counted_commits, counted_last_seq  # type: ignore[method-assign]
    try:
        watches = [asyncio.ensure_future(collect(p.watch(match_id))) for p in players]
        await _until(lambda: service.app.feeds.watchers(match_id) == 2)
        await asyncio.sleep(0.1)  # what the watchers would read, they have read
        assert reads == []
    finally:
        store.commits, store.last_seq = commits, last_seq  # type: ignore[method-assign]
    total = await play_out(service, GAME, match_id, players, seed=7)
    for task in watches:
        assert [c.version for c in await asyncio.wait_for(task, 10)] == list(range(total + 1))


async def test_a_live_watch_with_views_asks_the_rules_for_no_fold(service, monkeypatch) -> None:
    """Each live commit's view comes from the state of the projection in
    memory, which is at that very commit: the rules are asked for the view
    only, never to fold the commit's events again; the views are the
    engine's, for the watcher's seat."""
    players = [service.player(p) for p in IDS]
    match_id = await players[0].create("secret_bids", IDS)
    rules = service.app.rules
    folds: list[int] = []
    real = rules.evolve

    def evolve(game, state, events):
        folds.append(len(events))
        return real(game, state, events)

    monkeypatch.setattr(rules, "evolve", evolve)
    call = players[1].watch(match_id, include_view=True)
    got = [await call.read()]
    seed = 0
    while not got[-1].HasField("outcome"):
        seed += 1
        assert await play_out(service, GAME, match_id, players, seed=seed, limit=1) == 1
        got.append(await call.read())  # seen before the next move is made
    call.cancel()
    assert folds == []
    states = states_by_version(GAME, await commits_of(service, match_id))
    assert [c.version for c in got] == list(range(len(states)))
    for c, state in zip(got, states, strict=True):
        assert c.view_json == msgspec.json.encode(GAME.view(state, 1)).decode()


def _legal_json(game, state, seat: int) -> list[str]:
    return [msgspec.json.encode(m).decode() for m in game.legal_moves(state, seat)]


async def test_a_live_watch_with_turns_carries_what_get_match_would_say(
    service, monkeypatch
) -> None:
    """With ``include_turn`` every live commit carries the turn after it: the
    seats awaited, the watcher's seat and its legal moves (the engine's,
    asked of the rules only for a seat the game waits for), the same as a
    GetMatch at that version would answer; a spectator's turn has no seat and
    no moves. No fold is asked for them, nor for the views beside them."""
    players = [service.player(p) for p in IDS]
    spectator = service.player("guest:nobody")
    match_id = await players[0].create("secret_bids", IDS)
    rules = service.app.rules
    asked: list[int] = []
    real_legal = rules.legal_moves

    def legal_moves(state, seat):
        asked.append(seat)
        return real_legal(state, seat)

    def evolve(game, state, events):
        raise AssertionError("no fold for a live turn")

    monkeypatch.setattr(rules, "legal_moves", legal_moves)
    monkeypatch.setattr(rules, "evolve", evolve)
    calls = [
        players[0].watch(match_id, include_turn=True),
        players[1].watch(match_id, include_turn=True, include_view=True),
        spectator.watch(match_id, include_turn=True),
    ]
    seen: list[list] = [[], [], []]
    gets: list[list] = [[], []]
    awaited = 0
    while True:
        for got, call in zip(seen, calls, strict=True):
            got.append(await call.read())
        for s in (0, 1):  # what GetMatch says now, before the next move
            gets[s].append(await players[s].get(match_id))
        if seen[0][-1].HasField("outcome"):
            break
        awaited += len(seen[0][-1].turn.awaiting)
        assert await play_out(service, GAME, match_id, players, seed=len(seen[0]), limit=1) == 1
    for call in calls:
        call.cancel()
    states = states_by_version(GAME, await commits_of(service, match_id))
    assert [c.version for c in seen[0]] == list(range(len(states)))
    for v, state in enumerate(states):
        awaiting = list(GAME.awaiting(state)) if GAME.outcome(state) is None else []
        for s in (0, 1):
            c, m = seen[s][v], gets[s][v]
            assert c.HasField("turn") and c.turn.HasField("your_seat")
            assert c.turn.your_seat == s and list(c.turn.awaiting) == awaiting
            legal = _legal_json(GAME, state, s) if s in awaiting else []
            assert list(c.turn.legal_moves_json) == legal
            assert m.version == v and list(m.legal_moves_json) == legal
            assert list(m.awaiting) == awaiting
            assert c.turn.server_time
        assert seen[1][v].view_json == msgspec.json.encode(GAME.view(state, 1)).decode()
        t = seen[2][v].turn
        assert not t.HasField("your_seat") and not t.legal_moves_json
        assert list(t.awaiting) == awaiting
    # the watches asked for the awaited seats' moves once per commit; the
    # GetMatch calls asked as often
    assert len(asked) == 2 * awaited


async def test_a_resumed_watch_carries_a_turn_on_its_newest_commit_only(service) -> None:
    """The commits of a resumed watch's backlog that newer ones follow carry no
    turn (nobody can play on them); the newest does, as do the live ones."""
    players = [service.player(p) for p in IDS]
    match_id = await players[0].create("secret_bids", IDS)
    await play_out(service, GAME, match_id, players, seed=1, limit=3)
    call = players[0].watch(match_id, after_version=0, include_turn=True)
    backlog = [await call.read() for _ in range(3)]
    assert [c.version for c in backlog] == [1, 2, 3]
    assert [c.HasField("turn") for c in backlog] == [False, False, True]
    await play_out(service, GAME, match_id, players, seed=2, limit=1)
    live = await call.read()
    call.cancel()
    state = states_by_version(GAME, await commits_of(service, match_id))[4]
    assert live.version == 4 and live.HasField("turn")
    awaiting = list(GAME.awaiting(state))
    assert list(live.turn.awaiting) == awaiting
    legal = _legal_json(GAME, state, 0) if 0 in awaiting else []
    assert list(live.turn.legal_moves_json) == legal


async def test_a_turn_after_another_replicas_commit_is_read_from_the_stream(
    start_service,
) -> None:
    """A watch on a replica that did not make the commit (its projection is
    behind) brings the projection forward from the stream for the turn: the
    legal moves are those after that commit."""
    one, two = await start_service(), await start_service()
    ones = [one.player(p) for p in IDS]
    twos = [two.player(p) for p in IDS]
    match_id = await ones[0].create("secret_bids", IDS)
    calls = [twos[s].watch(match_id, include_turn=True) for s in (0, 1)]
    seen: list[list] = [[], []]
    while True:
        for got, call in zip(seen, calls, strict=True):
            got.append(await call.read())
        if seen[0][-1].HasField("outcome"):
            break
        assert await play_out(one, GAME, match_id, ones, seed=len(seen[0]), limit=1) == 1
    for call in calls:
        call.cancel()
    states = states_by_version(GAME, await commits_of(one, match_id))
    for v, state in enumerate(states):
        awaiting = list(GAME.awaiting(state)) if GAME.outcome(state) is None else []
        for s in (0, 1):
            c = seen[s][v]
            assert c.version == v and list(c.turn.awaiting) == awaiting
            legal = _legal_json(GAME, state, s) if s in awaiting else []
            assert list(c.turn.legal_moves_json) == legal
