"""The match service's rules client sends its service token, so a match plays
through a rules service that requires one."""

from __future__ import annotations

import pytest

from services.match.server import make_rules
from services.rules.server import build_server
from services.rules.settings import RulesSettings


@pytest.fixture
async def guarded_rules(settings):
    server = build_server(
        RulesSettings(
            host="127.0.0.1",
            port=0,
            grace_seconds=0.1,
            require_service_token=True,
            auth=settings.auth,
        )
    )
    await server.start()
    yield f"127.0.0.1:{server.port}"
    await server.stop(0.1)


async def test_a_match_plays_through_a_rules_service_that_requires_tokens(
    start_service, settings, guarded_rules
) -> None:
    remote = settings.with_(rules_addr=guarded_rules)
    service = await start_service(rules=make_rules(remote), rules_addr=guarded_rules)
    alice, bob = service.player("alice"), service.player("bob")
    match_id = await alice.create("tic_tac_toe", ["alice", "bob"])
    for player, cell in ((alice, 0), (bob, 4), (alice, 8)):
        await player.submit(match_id, f'{{"type":"place_mark","cell":{cell}}}')
    got = await bob.get(match_id)  # legal moves come from the rules service too
    assert got.version == 3 and got.legal_moves_json
