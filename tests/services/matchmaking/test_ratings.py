"""Ratings from MatchFinished facts consumed from a real JetStream."""

from __future__ import annotations

import asyncio
import json
import uuid

import pytest

from services.common.results import ensure_results_stream
from services.matchmaking.ratings import (
    DEFAULT_MU,
    InvalidFact,
    MatchFinished,
    Ratings,
    decode_fact,
    rating_key,
)
from services.matchmaking.results import ResultsConsumer

from .conftest import until

G = "tic_tac_toe"


def fact(players, ranks, bots=None, match_id=None, game=G) -> dict:
    return {
        "match_id": match_id or uuid.uuid4().hex,
        "game": game,
        "players": players,
        "bots": bots or [False] * len(players),
        "ranks": ranks,
        "scores": [float(-r) for r in ranks],
        "reason": "test",
        "finished_at": "2026-01-01T00:00:00Z",
    }


async def publish(js, f: dict, msg_id: str | None = None) -> None:
    await js.publish(
        f"results.{f['match_id']}",
        json.dumps(f).encode(),
        headers={"Nats-Msg-Id": msg_id or f"finished:{f['match_id']}"},
    )


async def test_winners_go_up_losers_go_down_and_shared_places_tie(rclient) -> None:
    r = Ratings(rclient)
    assert await r.record(decode_fact(json.dumps(fact(["a", "b"], [1, 2])).encode()))
    a, b = await r.get_many(G, ["a", "b"])
    assert a.mu > DEFAULT_MU > b.mu and a.matches == b.matches == 1
    assert a.sigma < 25 / 3 and b.sigma < 25 / 3
    # Four players, two sharing first place.
    await r.record(MatchFinished(**fact(["w1", "w2", "m", "l"], [1, 1, 3, 4])))
    w1, w2, m, low = await r.get_many(G, ["w1", "w2", "m", "l"])
    assert w1.mu == pytest.approx(w2.mu)
    assert w1.sigma == pytest.approx(w2.sigma)
    assert w1.mu > m.mu > low.mu and w1.mu > DEFAULT_MU > low.mu
    board = await r.leaderboard(G, 3)
    assert board[0].player_id in ("w1", "w2", "a")
    assert board == sorted(board, key=lambda p: -p.ordinal)


async def test_bots_and_guests_are_not_rated(rclient) -> None:
    r = Ratings(rclient)
    await r.record(
        MatchFinished(
            **fact(
                ["bot:greedy-1", "h1", "guest:x", "h2"],
                [1, 2, 3, 4],
                bots=[True, False, False, False],
            )
        )
    )
    assert not await rclient.exists(rating_key(G, "bot:greedy-1"))
    assert not await rclient.exists(rating_key(G, "guest:x"))
    h1, h2 = await r.get_many(G, ["h1", "h2"])
    assert h1.mu > DEFAULT_MU > h2.mu  # ranked among the rated players only
    # One human against a bot: nothing to rate, but the match counts as seen.
    f = fact(["bot:greedy-1", "solo"], [2, 1], bots=[True, False])
    assert await r.record(MatchFinished(**f))
    assert not await r.record(MatchFinished(**f))
    assert (await r.get(G, "solo")).matches == 0


def test_malformed_facts_are_refused() -> None:
    with pytest.raises(InvalidFact):
        decode_fact(b"{}")
    with pytest.raises(InvalidFact):
        decode_fact(json.dumps(fact(["a", "b"], [1])).encode())


async def test_a_fact_delivered_twice_changes_ratings_once(rclient, js) -> None:
    await ensure_results_stream(js, "RESULTS")
    await js.purge_stream("RESULTS")  # the server is shared by the session's tests
    ratings = Ratings(rclient)
    f = fact(["winner", "loser"], [1, 2])
    # Published twice with different ids, so JetStream delivers it twice
    # (as after a redelivery); a third publish with the same id is deduplicated.
    await publish(js, f)
    await publish(js, f, msg_id=f"again:{f['match_id']}")
    await publish(js, f)
    consumer = ResultsConsumer(js, ratings, durable=f"t{uuid.uuid4().hex[:8]}")
    stop = asyncio.Event()
    task = asyncio.create_task(consumer.run(stop))

    async def consumed() -> bool:
        return consumer.rated + consumer.duplicates >= 2

    await until(consumed)
    once = await ratings.get_many(G, ["winner", "loser"])
    assert consumer.rated == 1 and consumer.duplicates == 1
    assert once[0].mu > DEFAULT_MU > once[1].mu and once[0].matches == 1
    # A restart of the durable consumer redelivers nothing and re-rates nothing.
    stop.set()
    await task
    second = ResultsConsumer(js, ratings, durable=consumer.durable)
    stop2 = asyncio.Event()
    task2 = asyncio.create_task(second.run(stop2))
    f2 = fact(["winner", "third"], [1, 2])
    await publish(js, f2)
    await until(lambda: _ready(second))
    stop2.set()
    await task2
    assert second.rated == 1 and second.duplicates == 0
    w = await ratings.get(G, "winner")
    assert w.matches == 2 and w.mu > once[0].mu


async def _ready(c: ResultsConsumer) -> bool:
    return c.rated >= 1


async def test_match_rated_is_logged_only_for_a_match_that_rated_someone(rclient, js) -> None:
    import io

    from services.common.logging import configure_logging

    await ensure_results_stream(js, "RESULTS")
    await js.purge_stream("RESULTS")
    buffer = io.StringIO()
    configure_logging(service="test", fmt="json", level="INFO", stream=buffer)
    try:
        consumer = ResultsConsumer(js, Ratings(rclient), durable=f"t{uuid.uuid4().hex[:8]}")
        stop = asyncio.Event()
        task = asyncio.create_task(consumer.run(stop))
        nobody = fact(["guest:1", "bot:greedy-1"], [1, 2], bots=[False, True])
        rated = fact(["alice", "bob", "bot:x"], [2, 1, 3], bots=[False, False, True])
        await publish(js, nobody)
        await publish(js, rated)

        async def both() -> bool:
            return consumer.rated >= 2

        await until(both)
        stop.set()
        await task
    finally:
        configure_logging(service="test")
    lines = [json.loads(x) for x in buffer.getvalue().splitlines()]
    logged = [x for x in lines if x["event"] == "match_rated"]
    assert [(x["match"], x["players"]) for x in logged] == [(rated["match_id"], ["alice", "bob"])]
