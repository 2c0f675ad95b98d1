"""The cache may vanish, processes restart, the rules go down: nothing accepted is lost."""

from __future__ import annotations

import asyncio
import json

import grpc
import pytest

from services.common.codecs import decode_state
from services.common.errors import error_info
from services.match.ports import InProcessRules, RulesUnavailable
from tests.services.match.conftest import make_registry, stream_commits
from tests.services.match.helpers import commits_of, play_out, states_by_version

GAME = make_registry().get("secret_bids")
IDS = ["guest:a", "guest:b", "guest:c"]


async def test_flushall_mid_game_then_the_next_move_works(service, settings) -> None:
    players = [service.player(p) for p in IDS]
    match_id = await players[0].create("secret_bids", IDS)
    await play_out(service, GAME, match_id, players, seed=1, limit=4)
    app = service.app
    await app.drain()
    assert await app.cache.get(match_id) is not None
    await app.cache.client.flushall()
    app.forget()  # and the in-memory copy: the next load must fold the stream

    await play_out(service, GAME, match_id, players, seed=2, limit=1)
    await app.drain()
    cached = await app.cache.get(match_id)
    commits = await commits_of(service, match_id)
    assert cached is not None and cached.version == len(commits) - 1 == 5
    folded = states_by_version(GAME, commits)[-1]
    assert decode_state(GAME, cached.state) == folded
    await play_out(service, GAME, match_id, players, seed=3)  # to the end


async def test_a_stale_redis_entry_is_caught_up_from_the_stream(start_service, settings) -> None:
    one = await start_service()
    two = await start_service()
    match_id = await one.player("guest:a").create("secret_bids", IDS)
    await one.app.drain()
    stale = await one.app.cache.get(match_id)
    p1 = [one.player(p) for p in IDS]
    await play_out(one, GAME, match_id, p1, seed=1, limit=2)
    await one.app.drain()
    await one.app.cache.client.flushall()
    await one.app.cache.put(stale)  # Redis goes back to version 0
    info = await two.player("guest:a").get(match_id)
    assert info.version == 2
    await play_out(two, GAME, match_id, [two.player(p) for p in IDS], seed=2)


async def test_the_service_restarted_mid_game_loses_nothing(start_service, settings) -> None:
    one = await start_service()
    players = [one.player(p) for p in IDS]
    match_id = await players[0].create("secret_bids", IDS)
    await play_out(one, GAME, match_id, players, seed=1, limit=4)
    await one.close()

    two = await start_service()
    info = await two.player("guest:a").get(match_id)
    assert info.version == 4
    played = await play_out(two, GAME, match_id, [two.player(p) for p in IDS], seed=2)
    commits = await stream_commits(settings.nats_url, match_id)
    assert [c.version for c in commits] == list(range(4 + played + 1))
    assert commits[-1].outcome is not None


async def test_nats_server_restarted_mid_game_loses_nothing(service, settings, nats_server) -> None:
    players = [service.player(p) for p in IDS]
    match_id = await players[0].create("secret_bids", IDS)
    await play_out(service, GAME, match_id, players, seed=1, limit=4)
    await asyncio.to_thread(nats_server.restart)
    service.app.forget()  # also rebuild from the restarted store
    played = await play_out(service, GAME, match_id, players, seed=2)
    commits = await stream_commits(settings.nats_url, match_id)
    assert [c.version for c in commits] == list(range(4 + played + 1))
    assert commits[-1].outcome is not None


class SwitchableRules(InProcessRules):
    def __init__(self) -> None:
        super().__init__(make_registry())
        self.down = False
        self.slow = False

    async def decide(self, state, seat, move, entropy):
        if self.down:
            raise RulesUnavailable("connection refused")
        if self.slow:
            await asyncio.sleep(5)
        return await super().decide(state, seat, move, entropy)


@pytest.mark.parametrize("how", ["down", "slow"])
async def test_rules_unavailable_answers_unavailable_and_appends_nothing(
    start_service, settings, how
) -> None:
    rules = SwitchableRules()
    service = await start_service(rules=rules, rules_timeout_s=0.3)
    a = service.player("guest:a")
    match_id = await a.create("tic_tac_toe", ["guest:a", "guest:b"])
    setattr(rules, how, True)
    with pytest.raises(grpc.aio.AioRpcError) as e:
        await a.submit(match_id, json.dumps({"type": "place_mark", "cell": 4}))
    assert e.value.code() == grpc.StatusCode.UNAVAILABLE
    assert error_info(e.value).reason == "rules_unavailable"
    assert len(await stream_commits(settings.nats_url, match_id)) == 1
    setattr(rules, how, False)
    reply = await a.submit(match_id, json.dumps({"type": "place_mark", "cell": 4}))
    assert reply.version == 1


async def test_play_goes_on_with_redis_down(service, settings, valkey_server) -> None:
    players = [service.player(p) for p in IDS]
    match_id = await players[0].create("secret_bids", IDS)
    await play_out(service, GAME, match_id, players, seed=1, limit=2)
    valkey_server.stop()
    service.app.forget()  # every load now misses Redis and folds the stream
    played = await play_out(service, GAME, match_id, players, seed=2)
    commits = await stream_commits(settings.nats_url, match_id)
    assert len(commits) == 2 + played + 1 and commits[-1].outcome is not None
