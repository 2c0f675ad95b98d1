"""GetMatch carries the caller's legal moves, so a client needs no rules of its own
(and a seat of a game with hidden information can play without seeing the state)."""

from __future__ import annotations

import json

import msgspec

from engine_core.decider import fold
from engine_core.registry import default_registry
from tabletop.match.v1 import match_pb2
from tests.services.match.conftest import stream_commits


async def test_the_awaited_seat_gets_its_legal_moves_and_the_others_none(service, settings) -> None:
    game = default_registry().get("dwarves_duel")
    a, b = service.player("guest:a"), service.player("guest:b")
    match_id = await a.create("dwarves_duel", ["guest:a", "guest:b"])
    first = await a.get(match_id)
    (turn,) = first.awaiting
    mover, other = (a, b) if turn == 0 else (b, a)
    mine, theirs = await mover.get(match_id), await other.get(match_id)
    assert theirs.legal_moves_json == []
    assert mine.legal_moves_json, "the awaited seat must be offered its moves"
    # They are exactly the engine's legal moves on the state folded from the stream.
    commits = await stream_commits(settings.nats_url, match_id)
    events = [game.codec().event_json.decode(e) for c in commits for e in c.events]
    state = fold(game, events)
    expected = [msgspec.json.encode(m).decode() for m in game.legal_moves(state, turn)]
    assert list(mine.legal_moves_json) == expected
    # Any of them is accepted as it is.
    reply = await mover.submit(match_id, mine.legal_moves_json[-1])
    assert reply.version == first.version + 1
    assert json.loads(mine.legal_moves_json[-1])["type"]


async def test_a_spectator_and_a_finished_match_offer_nothing(service) -> None:
    a, b = service.player("guest:a"), service.player("guest:b")
    match_id = await a.create("tic_tac_toe", ["guest:a", "guest:b"])
    assert (await service.player("guest:watcher").get(match_id)).legal_moves_json == []
    for cell, p in ((0, a), (3, b), (1, a), (4, b), (2, a)):
        await p.submit(match_id, json.dumps({"type": "place_mark", "cell": cell}))
    assert (await a.get(match_id)).legal_moves_json == []
    assert (await b.get(match_id)).legal_moves_json == []


async def test_omit_view_answers_the_rest_without_asking_the_rules_for_a_view(
    service, monkeypatch
) -> None:
    a, b = service.player("guest:a"), service.player("guest:b")
    match_id = await a.create("dwarves_duel", ["guest:a", "guest:b"])
    rules = service.app.rules
    asked: list[int | None] = []
    real = rules.view

    def view(state, seat):
        asked.append(seat)
        return real(state, seat)

    monkeypatch.setattr(rules, "view", view)
    for p in (a, b):
        lean = await p.stub.GetMatch(
            match_pb2.GetMatchRequest(match_id=match_id, omit_view=True), metadata=p.metadata
        )
        full = await p.get(match_id)
        assert lean.view_json == "" and full.view_json
        full.view_json = ""
        lean.server_time = full.server_time = ""
        assert lean == full  # the legal moves, the seat, the awaited seats: all the same
    assert len(asked) == 2  # once per full answer, never for a lean one
