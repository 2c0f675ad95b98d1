"""The matchmaker against a real valkey: many tickets, two replicas, bots."""

from __future__ import annotations

import asyncio
import dataclasses
import random
import time
from collections import Counter

import pytest

from engine_core.registry import default_registry
from services.matchmaking.inprocess import InProcessMatchCreator
from services.matchmaking.matchmaker import Matchmaker
from services.matchmaking.store import (
    EXPIRED,
    MATCHED,
    NewTicket,
    TicketStore,
)

from .conftest import run_until_settled


def _game_counts() -> list[tuple[str, list[int]]]:
    return [(g.name, list(range(g.min_players, g.max_players + 1))) for g in default_registry()]


async def _enqueue_many(store: TicketStore, n: int, rng: random.Random) -> list[str]:
    games = _game_counts()
    ids = []
    for i in range(n):
        game, counts = rng.choice(games)
        accepted = sorted(rng.sample(counts, rng.randint(1, len(counts))))
        size = rng.randint(1, min(2, max(accepted))) if rng.random() < 0.2 else 1
        players = tuple(f"p{i}-{k}" for k in range(size))
        rating = rng.gauss(25, 6)
        t = NewTicket(game, players, tuple(accepted), "", rng.random() < 0.1, rating)
        ids.append(await store.enqueue(t))
    return ids


async def _run_until_final(store: TicketStore, ids: list[str], *makers: Matchmaker) -> None:
    await run_until_settled(store, ids, makers)


async def _check_invariants(store: TicketStore, ids: list[str], creator: InProcessMatchCreator):
    recs = await store.get_many(ids)
    by_match: dict[str, list] = {}
    for r in recs:
        assert r is not None
        assert r.state in (MATCHED, EXPIRED), r
        if r.state == MATCHED:
            by_match.setdefault(r.match_id, []).append(r)
    seated = Counter()
    for match_id, tickets in by_match.items():
        game, players, _state = creator.matches[match_id]
        humans = [p for p in players if not p.startswith("bot:")]
        ticket_players = [p for t in tickets for p in t.players]
        assert sorted(humans) == sorted(ticket_players), match_id
        for t in tickets:
            assert t.game == game and t.player_count == len(players)
            assert len(players) in t.player_counts
            for p, seat in t.seats.items():
                assert players[seat] == p
        seated.update(humans)
    # Every match created was finalised by its tickets, none twice.
    assert set(creator.matches) == set(by_match)
    assert all(c == 1 for c in seated.values())
    return by_match


async def test_a_thousand_tickets_each_end_in_one_match_or_expire(rclient, settings) -> None:
    # A lifetime long enough that no ticket expires while the thousand are
    # still being queued on a loaded machine; what is left unmatched once
    # pairing has settled is expired by the settling sweep.
    s = dataclasses.replace(settings, ticket_ttl_s=30.0, window_growth=20.0, bot_fill_after_s=1.0)
    store = TicketStore(rclient, s)
    ids = await _enqueue_many(store, 1000, random.Random(1))
    creator = InProcessMatchCreator()
    await _run_until_final(store, ids, Matchmaker(store, creator, s))
    by_match = await _check_invariants(store, ids, creator)
    matched = sum(len(v) for v in by_match.values())
    assert matched > 900  # windows reach everybody; only odd ones out expire


async def test_two_matchmakers_never_assign_a_ticket_twice(rclient, settings) -> None:
    s = dataclasses.replace(settings, ticket_ttl_s=60.0, window_growth=50.0, tick_s=0.0)
    ids = []
    store = TicketStore(rclient, s)
    creator = InProcessMatchCreator()
    a = Matchmaker(store, creator, s, name="a")
    b = Matchmaker(TicketStore(rclient, s), creator, s, name="b")
    # Tickets keep arriving while both replicas pair.
    stop = asyncio.Event()
    tasks = [asyncio.create_task(m.run(stop)) for m in (a, b)]
    rng = random.Random(2)
    for _ in range(8):
        for i in range(60):
            game, counts = rng.choice(_game_counts())
            players = (f"q{len(ids)}-{i}",)
            ids.append(
                await store.enqueue(NewTicket(game, players, tuple(counts), "", False, 25.0))
            )
        await asyncio.sleep(0.05)
    stop.set()
    await asyncio.gather(*tasks)
    await _run_until_final(store, ids, a, b)
    by_match = await _check_invariants(store, ids, creator)
    assert sum(len(v) for v in by_match.values()) >= len(ids) - 8


async def test_a_failed_creation_puts_the_tickets_back(rclient, settings) -> None:
    class Refusing:
        calls = 0

        async def create_match(self, game, players, options_json, *, key="", **_match_options):
            Refusing.calls += 1
            raise RuntimeError("match service down")

    store = TicketStore(rclient, settings)
    ids = [
        await store.enqueue(NewTicket("tic_tac_toe", (p,), (2,), "", False, 25.0))
        for p in ("a", "b")
    ]
    stats = await Matchmaker(store, Refusing(), settings).run_once()
    assert stats.claimed == 1 and stats.failed == 1 and Refusing.calls == 1
    assert [r.state for r in await store.get_many(ids)] == ["searching", "searching"]
    creator = InProcessMatchCreator()
    stats = await Matchmaker(store, creator, settings).run_once()
    assert stats.matches == 1
    recs = await store.get_many(ids)
    assert {r.state for r in recs} == {MATCHED} and len({r.match_id for r in recs}) == 1


async def test_tickets_whose_matches_keep_failing_end(rclient, settings) -> None:
    class Refusing:
        async def create_match(self, game, players, options_json, *, key="", **_match_options):
            raise RuntimeError("refused")

    s = dataclasses.replace(settings, max_create_failures=3)
    store = TicketStore(rclient, s)
    ids = [
        await store.enqueue(NewTicket("tic_tac_toe", (p,), (2,), "", False, 25.0))
        for p in ("a", "b")
    ]
    mm = Matchmaker(store, Refusing(), s)
    for _ in range(3):
        assert (await mm.run_once()).failed == 1
    recs = await store.get_many(ids)
    assert [(r.state, r.reason) for r in recs] == [("expired", "match_refused")] * 2
    assert (await mm.run_once()).groups == 0
    # The players are free to queue again.
    await store.enqueue(NewTicket("tic_tac_toe", ("a",), (2,), "", False, 25.0))


async def test_racing_claims_on_the_same_tickets_have_one_winner(rclient, settings) -> None:
    store = TicketStore(rclient, settings)
    ids = [
        await store.enqueue(NewTicket("dice_forge", (f"r{i}",), (2, 3), "", False, 25.0))
        for i in range(6)
    ]
    recs = await store.get_many(ids)
    members = {r.ticket_id: f"{r.ticket_id}|1|{r.created_ms}|0" for r in recs}
    q2 = "mm:q:dice_forge:" + (await store.queues())[0].split(":")[3] + ":2"
    q3 = q2[:-1] + "3"
    pairs = [[members[ids[0]], members[ids[1]]], [members[ids[2]], members[ids[3]]]]
    triple = [[members[ids[1]], members[ids[2]], members[ids[4]]]]
    a, b, c = await asyncio.gather(
        store.claim(q2, pairs, "a"), store.claim(q2, pairs, "b"), store.claim(q3, triple, "c")
    )
    # Each pair went to exactly one of a and b; the triple overlaps both pairs.
    assert [x or y for x, y in zip(a.won, b.won, strict=True)] == [True, True]
    assert not any(x and y for x, y in zip(a.won, b.won, strict=True))
    assert c.won == [False]
    claimed = {r.ticket_id: r.state for r in await store.get_many(ids)}
    assert [claimed[t] for t in ids] == ["claimed"] * 4 + ["searching"] * 2
    # A claimed ticket is in no queue any more; the others still are.
    left = await store.read_queues([q2, q3])
    assert {e.ticket_id for e in left[q2]} == {ids[4], ids[5]}
    assert {e.ticket_id for e in left[q3]} == {ids[4], ids[5]}


async def test_bots_fill_the_smallest_match_a_ticket_accepts(rclient, settings) -> None:
    s = dataclasses.replace(settings, bot_fill_after_s=5.0)
    store = TicketStore(rclient, s)
    now = int(time.time() * 1000)
    waited = await store.enqueue(
        NewTicket("dice_forge", ("w",), (2, 3, 4), "", True, 25.0), at_ms=now - 6000
    )
    fresh = await store.enqueue(
        NewTicket("dice_forge", ("f",), (2, 3, 4), "", True, 40.0), at_ms=now
    )
    creator = InProcessMatchCreator()
    stats = await Matchmaker(store, creator, s).run_once()
    assert stats.matches == 1
    w, f = await store.get_many([waited, fresh])
    assert (w.state, w.player_count, w.bots) == ("matched", 2, 1)
    assert f.state == "searching"  # not waited long enough for bots
    _, players, _ = creator.matches[w.match_id]
    assert sorted(players) == ["bot:greedy-1", "w"]


async def test_queue_gauges_are_labelled_by_game_and_player_count(rclient, settings) -> None:
    from prometheus_client import REGISTRY

    from services.matchmaking import metrics

    def gauge(game: str, players: int) -> float | None:
        return REGISTRY.get_sample_value(
            "matchmaking_queue_tickets", {"game": game, "players": str(players)}
        )

    store = TicketStore(rclient, settings)
    creator = InProcessMatchCreator()
    maker = Matchmaker(store, creator, settings)
    await store.enqueue(NewTicket("dice_forge", ("a",), (2, 3), "", False, 25.0))
    await maker.run_once()
    assert gauge("dice_forge", 2) == 1 and gauge("dice_forge", 3) == 1
    labels = {s.labels.get("queue") for s in metrics.QUEUE_TICKETS.collect()[0].samples}
    assert labels == {None}, "no raw queue keys as labels"
    await store.enqueue(NewTicket("dice_forge", ("b",), (2,), "", False, 25.0))
    stats = await maker.run_once()
    assert stats.matches == 1
    await maker.run_once()
    assert gauge("dice_forge", 2) == 0 and gauge("dice_forge", 3) == 0


async def test_bot_seats_are_named_after_the_configured_level(rclient, settings) -> None:
    s = dataclasses.replace(settings, bot_fill_after_s=0.0, bot_level="search")
    store = TicketStore(rclient, s)
    now = int(time.time() * 1000)
    ticket = await store.enqueue(
        NewTicket("dwarves_duel", ("solo",), (2,), "", True, 25.0), at_ms=now - 1000
    )
    creator = InProcessMatchCreator()
    await Matchmaker(store, creator, s, bot_kind=s.bot_level).run_once()
    (t,) = await store.get_many([ticket])
    _, players, _ = creator.matches[t.match_id]
    assert sorted(players) == ["bot:search-1", "solo"]


async def test_a_tickets_own_level_names_its_bots_whatever_the_setting(rclient, settings) -> None:
    s = dataclasses.replace(settings, bot_fill_after_s=0.0, bot_level="search")
    store = TicketStore(rclient, s)
    now = int(time.time() * 1000)
    ticket = await store.enqueue(
        NewTicket("dice_forge", ("solo",), (3,), "", True, 25.0, bot_level="random"),
        at_ms=now - 1000,
    )
    # A ticket queued before levels (its member ends in "1"): the setting's.
    legacy = await store.enqueue(
        NewTicket("dice_forge", ("old",), (3,), "", True, 90.0), at_ms=now - 1000
    )
    assert (await store.get(ticket)).bot_level == "random"
    creator = InProcessMatchCreator()
    await Matchmaker(store, creator, s, bot_kind=s.bot_level).run_once()
    t, old = await store.get_many([ticket, legacy])
    assert sorted(creator.matches[t.match_id][1]) == ["bot:random-1", "bot:random-2", "solo"]
    assert sorted(creator.matches[old.match_id][1]) == ["bot:search-1", "bot:search-2", "old"]


def test_an_unknown_bot_level_is_refused(settings) -> None:
    with pytest.raises(ValueError, match="unknown bot level"):
        Matchmaker(None, None, settings, bot_kind="expert")  # type: ignore[arg-type]
