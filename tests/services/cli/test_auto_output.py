"""What ``--auto`` prints: a line per round and the result, for whole seeded
matches of every game fed through the CLI's match log as WatchMatch commits."""

from __future__ import annotations

import io

import pytest
from rich.console import Console

from engine_core.bots import bot_for
from engine_core.registry import default_registry
from engine_core.testing import playout
from services.cli import main
from services.cli.render import renderer_for
from tabletop.match.v1 import match_pb2

GAMES = default_registry().names()


def commits(game, players: int, seed: int, seat: int):
    codec = game.codec()
    enc = codec.json_encoder
    from engine_core.decider import fold, start
    from engine_core.testing import setup_entropy

    result = playout(game, players, seed, bots=bot_for("greedy", game))
    state, _ = start(game, players, None, setup_entropy(seed))
    for step in result.steps:
        state = fold(game, step.events, state)
        events = [e for e in (game.redact(e, seat) for e in step.events) if e is not None]
        c = match_pb2.MatchCommit(
            version=step.index + 1,
            events_json=[enc.encode(e).decode() for e in events],
            view_json=enc.encode(game.view(state, seat)).decode(),
        )
        c.seat = step.seat
        yield c


@pytest.mark.parametrize("name", GAMES)
def test_auto_play_prints_a_few_lines_per_match(name: str, monkeypatch) -> None:
    out = io.StringIO()
    monkeypatch.setattr(main, "console", Console(file=out, width=80))
    game = default_registry().get(name)
    log = main.MatchLog(renderer_for(game, me=0), full=False, summary=True, quiet=False)
    n = 0
    for c in commits(game, game.max_players if name == "assault_of_the_giants" else 2, 5, 0):
        log.commit(c)
        n += 1
    printed = out.getvalue().splitlines()
    assert len(printed) >= log.lines
    assert len(printed) <= 100, f"{n} commits printed {len(printed)} lines"
    if name == "tic_tac_toe":  # no rounds: a line per move and the end
        assert len(printed) == n + 1
    else:
        assert len(printed) < n / 2


@pytest.mark.parametrize("name", GAMES)
def test_interactive_play_describes_every_commit_in_words(name: str, monkeypatch) -> None:
    out = io.StringIO()
    monkeypatch.setattr(main, "console", Console(file=out, width=80))
    game = default_registry().get(name)
    log = main.MatchLog(renderer_for(game, me=0), full=False, summary=False, quiet=False)
    for i, c in enumerate(commits(game, game.min_players, 9, 0)):
        log.commit(c)
        if i % 25 == 0:
            log.board(c.view_json, game.title)
    text = out.getvalue()
    assert text.strip()
    assert "{" not in text, "no JSON reaches the player"
