"""The bot worker's seat player against a real match service: a game whose
views it cannot sample a state from is played from the legal moves the
commits' turns list."""

from __future__ import annotations

import asyncio

from engine_core.bots import RandomBot
from services.bots.player import Identity, SeatPlayer
from tabletop.match.v1 import match_pb2_grpc
from tests.services.match.conftest import make_registry
from tests.services.match.helpers import commits_of

GAME = make_registry().get("secret_bids")  # hidden information and no sample_state
BOTS = ["bot:random-1", "bot:random-2"]


async def test_a_bot_plays_a_game_it_cannot_sample_from_the_commits_turns(
    service, monkeypatch
) -> None:
    match_id = await service.player(BOTS[0]).create("secret_bids", BOTS)
    gets: list[str] = []
    real_get = service.app.get

    async def get(principal, match_id, **kw):
        gets.append(principal.subject)
        return await real_get(principal, match_id, **kw)

    monkeypatch.setattr(service.app, "get", get)
    stub = match_pb2_grpc.MatchServiceStub(service.channel)
    seats = [
        SeatPlayer(stub, match_id, GAME, Identity(bot, service.tokens), seat, RandomBot())
        for seat, bot in enumerate(BOTS)
    ]
    await asyncio.wait_for(asyncio.gather(*(s.play() for s in seats)), 30)
    commits = await commits_of(service, match_id)
    assert commits[-1].outcome is not None
    assert sum(s.moves for s in seats) == len(commits) - 1
    # the moves came with the commits; a GetMatch only for a commit a newer
    # one followed before its watcher got it (before: one per commit and bot)
    assert len(gets) < len(commits)
