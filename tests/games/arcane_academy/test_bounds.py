"""The pieces of ``max_moves``: moves per turn and turns per player."""

from __future__ import annotations

from collections import Counter

from engine_core.bots import RandomBot, bot_for
from engine_core.games.arcane_academy import GAME
from engine_core.games.arcane_academy.events import TurnStarted
from engine_core.games.arcane_academy.game import (
    MAX_EXTRA_TURNS,
    MAX_MOVES_PER_TURN,
    MAX_NORMAL_TURNS,
)
from engine_core.testing import playout


def test_turns_and_moves_per_turn_stay_within_the_stated_bound() -> None:
    greedy = bot_for("greedy", GAME)
    for players in (2, 3, 4):
        for seed in range(20):
            bots = greedy if seed % 2 else RandomBot()
            result = playout(GAME, players, seed, bots=bots)
            per_turn = moves = 0
            turns: Counter = Counter()
            extra = 0
            for e in result.setup_events:
                if isinstance(e, TurnStarted):
                    turns[e.seat] += 1
            for step in result.steps:
                moves += 1
                per_turn = max(per_turn, moves)
                for e in step.events:
                    if isinstance(e, TurnStarted):
                        moves = 0
                        if e.kind == "extra":
                            extra += 1
                        else:
                            turns[e.seat] += 1
            assert per_turn <= MAX_MOVES_PER_TURN
            assert max(turns.values()) <= MAX_NORMAL_TURNS
            assert extra <= MAX_EXTRA_TURNS
            assert len(result.steps) <= GAME.max_moves(players)
