"""Whole matches through the service, checked against the engine."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import msgspec
import nats
import pytest
from nats.js.errors import NotFoundError

from engine_core.registry import default_registry
from tabletop.match.v1 import match_pb2
from tests.services.match.conftest import make_registry
from tests.services.match.helpers import (
    commits_of,
    play_out,
    replay_in_process,
    state_json,
    states_by_version,
)
from tests.waiting import until

GAMES = make_registry().names()


@pytest.mark.parametrize("game_id", GAMES)
async def test_a_full_match_ends_as_the_same_entropy_does_in_process(service, game_id) -> None:
    await check_full_match(service, game_id, make_registry().get(game_id).min_players, seed=7)


@pytest.mark.slow
@pytest.mark.parametrize("seed", range(1, 6))
@pytest.mark.parametrize("game_id", GAMES)
async def test_full_matches_at_every_player_count(service, game_id, seed) -> None:
    game = make_registry().get(game_id)
    players = game.min_players + seed % (game.max_players - game.min_players + 1)
    await check_full_match(service, game_id, players, seed=seed)


async def check_full_match(service, game_id: str, count: int, seed: int) -> None:
    game = make_registry().get(game_id)
    ids = [f"guest:p{s}" for s in range(count)]
    players = [service.player(p) for p in ids]
    match_id = await players[0].create(game_id, ids)
    played = await play_out(service, game, match_id, players, seed=seed)

    info = await players[0].get(match_id)
    assert info.status == match_pb2.MATCH_STATUS_FINISHED
    assert info.version == played
    commits = await commits_of(service, match_id)
    assert [c.version for c in commits] == list(range(played + 1))
    final, events = replay_in_process(game, commits)
    assert [c.events for c in commits] == events
    outcome = game.outcome(final)
    assert outcome is not None
    assert list(info.outcome.ranks) == list(outcome.ranks)
    assert list(info.outcome.scores) == list(outcome.scores)
    assert info.outcome.reason == outcome.reason
    assert commits[-1].outcome == outcome
    assert states_by_version(game, commits)[-1] == final


def test_every_shipped_game_is_played_by_the_suite() -> None:
    assert set(default_registry().names()) <= set(GAMES)


async def test_the_end_publishes_a_match_finished_fact(service, settings) -> None:
    a = service.player("guest:a")
    match_id = await a.create("tic_tac_toe", ["guest:a", "bot:greedy-1"])
    bot = service.service("bots")
    for cell, p in ((0, a), (3, bot), (1, a), (4, bot), (2, a)):
        await p.submit(match_id, json.dumps({"type": "place_mark", "cell": cell}))
    nc = await nats.connect(settings.nats_url)
    try:
        # published once the last move is answered: polled for
        msg = await until(lambda: _fact(nc, match_id), what="the MatchFinished fact")
        fact = json.loads(msg.data)
        assert msg.headers["Nats-Msg-Id"] == f"finished:{match_id}"
    finally:
        await nc.close()
    finished_at = fact.pop("finished_at")
    assert finished_at.endswith("Z") and "T" in finished_at
    assert fact == {
        "match_id": match_id,
        "game": "tic_tac_toe",
        "players": ["guest:a", "bot:greedy-1"],
        "bots": [False, True],
        "ranks": [1, 2],
        "scores": [1.0, 0.0],
        "reason": "three_in_a_row",
    }
    listed = await a.stub.ListMatches(match_pb2.ListMatchesRequest(), metadata=a.metadata)
    assert [(m.match_id, m.status) for m in listed.matches] == [
        (match_id, match_pb2.MATCH_STATUS_FINISHED)
    ]


async def test_replay_reproduces_every_version_of_the_state(service) -> None:
    game = make_registry().get("secret_bids")
    ids = ["guest:a", "guest:b", "guest:c"]
    players = [service.player(p) for p in ids]
    match_id = await players[0].create(
        "secret_bids", ids, match_options=match_pb2.MatchOptions(public_replay=True)
    )
    await play_out(service, game, match_id, players, seed=3)
    expected = [state_json(s) for s in states_by_version(game, await commits_of(service, match_id))]

    outsider = service.player("guest:spectator")
    full = [c async for c in outsider.replay(match_id, include_view=True)]
    assert [c.version for c in full] == list(range(len(expected)))
    assert [c.view_json for c in full] == expected

    part = [c async for c in outsider.replay(match_id, from_version=2, to_version=4, speed=1000.0)]
    assert [c.version for c in part] == [2, 3, 4]


async def _fact(nc: Any, match_id: str) -> Any:
    try:
        return await nc.jetstream().get_last_msg("RESULTS", f"results.{match_id}")
    except NotFoundError:
        return None


async def test_the_last_move_is_answered_before_its_fact_and_list_matches_waits_for_it(
    service, settings
) -> None:
    """The finishing commit is durable when the move is answered; the
    index's mark and the fact follow it, and ``ListMatches`` on this replica
    waits for them: it never shows a match its caller just finished as active."""
    a = service.player("guest:a")
    match_id = await a.create("tic_tac_toe", ["guest:a", "bot:greedy-1"])
    index = service.app.index
    gate = asyncio.Event()
    record = index.record

    async def held(meta: Any, status: str) -> None:
        if status == "finished":
            await gate.wait()
        await record(meta, status)

    index.record = held
    bot = service.service("bots")
    for cell, p in ((0, a), (3, bot), (1, a), (4, bot)):
        await p.submit(match_id, json.dumps({"type": "place_mark", "cell": cell}))
    last = a.submit(match_id, json.dumps({"type": "place_mark", "cell": 2}))
    reply = await asyncio.wait_for(last, 10)  # not waiting for the held mark
    assert reply.status == match_pb2.MATCH_STATUS_FINISHED  # answered, the mark held back
    assert match_id in service.app.finishing
    nc = await nats.connect(settings.nats_url)
    try:
        assert await _fact(nc, match_id) is None
        listing = asyncio.ensure_future(
            a.stub.ListMatches(match_pb2.ListMatchesRequest(), metadata=a.metadata)
        )
        done, _ = await asyncio.wait([listing], timeout=0.3)
        assert not done  # waiting for the mark
        gate.set()
        listed = await listing
        assert [(m.match_id, m.status) for m in listed.matches] == [
            (match_id, match_pb2.MATCH_STATUS_FINISHED)
        ]
        assert await until(lambda: _fact(nc, match_id), what="the MatchFinished fact")
        assert await until(lambda: match_id not in service.app.finishing)
    finally:
        index.record = record
        await nc.close()


async def test_replay_of_an_unfinished_match_is_redacted_for_the_caller(service) -> None:
    game = make_registry().get("secret_bids")
    ids = ["guest:a", "guest:b"]
    players = [service.player(p) for p in ids]
    match_id = await players[0].create(
        "secret_bids", ids, match_options=match_pb2.MatchOptions(public_replay=True)
    )
    await play_out(service, game, match_id, players, seed=5, limit=3)
    states = states_by_version(game, await commits_of(service, match_id))
    replayed = [c async for c in players[0].replay(match_id, include_view=True)]
    assert [c.view_json for c in replayed] == [
        msgspec.json.encode(game.view(s, 0)).decode() for s in states
    ]
    hidden = {w for s in states for w in game.secrets(s)[1]}
    text = " ".join(e for c in replayed for e in c.events_json)
    assert hidden and not any(w in text for w in hidden)
