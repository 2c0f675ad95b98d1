"""The matchmaker against a real valkey: many tickets, two replicas, bots."""

from __future__ import annotations

import asyncio
import dataclasses
import random
from collections import Counter

from engine_core.registry import default_registry
from services.matchmaking.inprocess import InProcessMatchCreator
from services.matchmaking.matchmaker import Matchmaker
from services.matchmaking.store import (
    EXPIRED,
    FINAL_STATES,
    MATCHED,
    NewTicket,
    TicketStore,
)

from .conftest import until


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
    stop = asyncio.Event()
    tasks = [asyncio.create_task(m.run(stop)) for m in makers]

    async def all_final() -> bool:
        recs = await store.get_many(ids)
        return all(r is not None and r.state in FINAL_STATES for r in recs)

    try:
        await until(all_final, timeout=60, every=0.2)
    finally:
        stop.set()
        await asyncio.gather(*tasks)


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
    s = dataclasses.replace(settings, ticket_ttl_s=3.0, window_growth=20.0, bot_fill_after_s=1.0)
    store = TicketStore(rclient, s)
    ids = await _enqueue_many(store, 1000, random.Random(1))
    creator = InProcessMatchCreator()
    await _run_until_final(store, ids, Matchmaker(store, creator, s))
    by_match = await _check_invariants(store, ids, creator)
    matched = sum(len(v) for v in by_match.values())
    assert matched > 900  # windows reach everybody; only odd ones out expire


async def test_two_matchmakers_never_assign_a_ticket_twice(rclient, settings) -> None:
    s = dataclasses.replace(settings, ticket_ttl_s=3.0, window_growth=20.0, tick_s=0.0)
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

        async def create_match(self, game, players, options_json):
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
