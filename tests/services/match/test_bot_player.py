"""The bot worker's seat player against a real match service: a game whose
views it cannot sample a state from is played from the legal moves the
commits' turns list."""

from __future__ import annotations

import asyncio
from dataclasses import replace

from engine_core.bots import RandomBot
from services.bots.player import Identity, SeatPlayer
from services.common.auth import Tokens
from services.match.ports import InProcessRules, RulesUnavailable
from tabletop.match.v1 import match_pb2, match_pb2_grpc
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
    seats, commits = await _play_every_seat(service, match_id, GAME, BOTS)
    assert commits[-1].outcome is not None
    assert sum(s.moves for s in seats) == len(commits) - 1
    # the moves came with the commits; a GetMatch only for a commit a newer
    # one followed before its watcher got it (before: one per commit and bot)
    assert len(gets) < len(commits)


async def _play_every_seat(service, match_id, game, bots):
    """A random ``SeatPlayer`` for each seat, played to the match's end;
    the seats and the match's commits."""
    stub = match_pb2_grpc.MatchServiceStub(service.channel)
    seats = [
        SeatPlayer(stub, match_id, game, Identity(bot, service.tokens), seat, RandomBot())
        for seat, bot in enumerate(bots)
    ]
    await asyncio.wait_for(asyncio.gather(*(s.play() for s in seats)), 30)
    return seats, await commits_of(service, match_id)


class FlakyRules(InProcessRules):
    """The rules refuse every third decision as unavailable."""

    def __init__(self) -> None:
        super().__init__(make_registry())
        self.calls = 0
        self.refused = 0

    async def decide(self, state, seat, move, entropy):
        self.calls += 1
        if self.calls % 3 == 0:
            self.refused += 1
            raise RulesUnavailable("connection refused")
        return await super().decide(state, seat, move, entropy)


async def test_a_bot_sends_a_move_again_after_a_transient_refusal(start_service) -> None:
    """A move refused with UNAVAILABLE on the bot's stream is sent again
    (same key), and every move is counted once, from its commit."""
    rules = FlakyRules()
    service = await start_service(rules=rules)
    bots = ["bot:random-1", "bot:random-2"]
    match_id = await service.player(bots[0]).create("tic_tac_toe", bots)
    game = make_registry().get("tic_tac_toe")
    seats, commits = await _play_every_seat(service, match_id, game, bots)
    assert commits[-1].outcome is not None
    assert rules.refused > 0
    assert sum(s.moves for s in seats) == len(commits) - 1
    assert [s.moves for s in seats] == [
        sum(1 for c in commits[1:] if c.seat == seat) for seat in range(2)
    ]


async def test_a_bots_stream_outliving_its_token_goes_on_with_a_fresh_one(
    start_service, settings
) -> None:
    """A match longer than the bot's token: its stream ends with
    ``token_expired`` (no leeway here) and the seat opens another with a
    renewed token, from the last commit it saw."""
    service = await start_service(auth=replace(settings.auth, leeway_s=0))
    tokens = Tokens(replace(settings.auth, leeway_s=0))
    players = ["bot:random-1", "guest:o"]
    match_id = await service.player(players[1]).create("tic_tac_toe", players)
    stub = match_pb2_grpc.MatchServiceStub(service.channel)
    game = make_registry().get("tic_tac_toe")
    bot = SeatPlayer(stub, match_id, game, Identity(players[0], tokens, ttl_s=2), 0, RandomBot())
    playing = asyncio.ensure_future(bot.play())
    human = service.player(players[1])
    waited = False
    while not playing.done():
        m = await human.get(match_id)
        if m.status == match_pb2.MATCH_STATUS_FINISHED:
            break
        if 1 not in m.awaiting:
            await asyncio.sleep(0.02)
            continue
        if not waited:  # past the bot's token's expiry, its stream open all along
            await asyncio.sleep(3)
            waited = True
        await human.submit(match_id, m.legal_moves_json[0], expected_version=m.version)
    await asyncio.wait_for(playing, 20)
    commits = await commits_of(service, match_id)
    assert commits[-1].outcome is not None
    assert bot.moves == sum(1 for c in commits[1:] if c.seat == 0) > 1
