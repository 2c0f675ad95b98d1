"""The conformance suite: every registered game, every player count, many seeds.

A game gets all of these checks by registering in ``default_registry()``.
``-m slow`` runs ten times the seeds.
"""

from __future__ import annotations

import json

import msgspec
import pytest

from engine_core.decider import Game, fold
from engine_core.registry import default_registry
from engine_core.testing import playout
from tests.conformance.harness import (
    DEEP_SEEDS,
    DEFAULT_PLAYOUT_SEEDS,
    PLAYOUT_SEEDS,
    check_outcome,
    deep_playout,
    same,
)

CHUNK = 50
GAMES = list(default_registry())
COUNTS = [(g, n) for g in GAMES for n in range(g.min_players, g.max_players + 1)]


def chunks(slow: bool = False) -> list:
    out = []
    for game, n in COUNTS:
        total = PLAYOUT_SEEDS.get(game.name, DEFAULT_PLAYOUT_SEEDS) * (10 if slow else 1)
        first = 1000 if slow else 0
        for lo in range(first, first + total, CHUNK):
            hi = min(lo + CHUNK, first + total)
            out.append(pytest.param(game, n, lo, hi, id=f"{game.name}-{n}p-seeds{lo}-{hi - 1}"))
    return out


def run_playouts(game: Game, players: int, lo: int, hi: int) -> None:
    bound = game.max_moves(players)
    for seed in range(lo, hi):
        result = playout(game, players, seed)
        assert len(result.steps) <= bound
        check_outcome(game, result.state, players)
        assert same(fold(game, result.events), result.state), f"seed {seed}: fold differs"


@pytest.mark.parametrize(("game", "players", "lo", "hi"), chunks())
def test_random_playouts_end_with_an_outcome(game: Game, players: int, lo: int, hi: int) -> None:
    run_playouts(game, players, lo, hi)


@pytest.mark.slow
@pytest.mark.parametrize(("game", "players", "lo", "hi"), chunks(slow=True))
def test_many_more_random_playouts(game: Game, players: int, lo: int, hi: int) -> None:
    run_playouts(game, players, lo, hi)


@pytest.mark.parametrize(
    ("game", "players", "seed"),
    [
        pytest.param(g, n, s, id=f"{g.name}-{n}p-seed{s}")
        for g, n in COUNTS
        for s in range(DEEP_SEEDS)
    ],
)
def test_every_check_at_every_step(game: Game, players: int, seed: int) -> None:
    deep_playout(game, players, seed)


@pytest.mark.parametrize("game", GAMES, ids=lambda g: g.name)
def test_same_seed_same_match(game: Game) -> None:
    a = playout(game, game.min_players, 7)
    b = playout(game, game.min_players, 7)
    enc = msgspec.msgpack.encode
    assert [enc(e) for e in a.events] == [enc(e) for e in b.events]


@pytest.mark.parametrize("game", GAMES, ids=lambda g: g.name)
def test_identity_and_schemas(game: Game) -> None:
    assert game.title and game.rules_version
    assert 1 <= game.min_players <= game.max_players
    for tp in (game.Options, game.Move, game.Event, game.View, game.State):
        schema = msgspec.json.schema(tp)
        json.dumps(schema)  # a plain JSON document
    assert game.max_moves(game.max_players) > 0
    game.Options()  # every option has a default
