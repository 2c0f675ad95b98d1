"""Every registered game, every player count: a random game played only
through gRPC ends exactly as the same seed played in-process."""

import json

import pytest

from engine_core.registry import default_registry
from engine_core.rng import Rng, derive
from engine_core.testing import move_entropy, playout, seed_bytes, setup_entropy
from services.common.codecs import decode_state, to_json
from services.rules.client import RulesClient

SEED = 11
CASES = [
    pytest.param(game.name, players, id=f"{game.name}-{players}p")
    for game in default_registry()
    for players in range(game.min_players, game.max_players + 1)
]


@pytest.mark.parametrize(("name", "players"), CASES)
async def test_random_game_over_grpc_matches_in_process(rules_address, name, players):
    game = default_registry().get(name)
    expected = playout(game, players, SEED)
    # The same decisions as engine_core.testing.playout's random bots, but every
    # legal move list, state and event comes from the service.
    bot_rng = Rng(derive(seed_bytes(SEED), "bots"))
    events: list[str] = []
    redacted: list[list[str | None]] = [[] for _ in range(players + 1)]  # seats, spectator
    async with RulesClient(rules_address, timeout=10) as rules:
        played = await rules.new_game(name, players, entropy=setup_entropy(SEED))
        events.extend(played.events)
        for row, got in zip(redacted, played.redacted, strict=True):
            row.extend(got)
        k = 0
        while not played.status.over:
            assert k < game.max_moves(players)
            waiting = played.status.awaiting
            seat = waiting[0] if len(waiting) == 1 else bot_rng.choice(waiting)
            legal = await rules.legal_moves(name, played.state, seat)
            move = bot_rng.choice(legal.moves)
            played = await rules.apply_move(
                name, played.state, seat, move, entropy=move_entropy(SEED, k)
            )
            events.extend(played.events)
            for row, got in zip(redacted, played.redacted, strict=True):
                row.extend(got)
            k += 1
        final = await rules.outcome(name, played.state)
        # the event log alone rebuilds the state, without deciding anything again
        folded, folded_status = await rules.fold(name, None, events)
    assert k == len(expected.steps)
    assert played.status.outcome == expected.outcome
    assert final.outcome == expected.outcome
    assert decode_state(game, played.state) == expected.state
    assert [json.loads(e) for e in events] == [json.loads(to_json(e)) for e in expected.events]
    assert decode_state(game, folded) == expected.state
    assert folded_status.outcome == expected.outcome
    for index, seat in enumerate([*range(players), None]):
        want = []
        for e in expected.events:
            shown = game.redact(e, seat)
            want.append(None if shown is None else json.loads(to_json(shown)))
        assert [None if e is None else json.loads(e) for e in redacted[index]] == want
