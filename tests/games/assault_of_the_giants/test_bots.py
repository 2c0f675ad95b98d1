"""Bots: the greedy bot beats two random bots; the random bot answers offers."""

from __future__ import annotations

from engine_core.bots import RandomBot, bot_for
from engine_core.bots.assault_of_the_giants import AssaultGreedy
from engine_core.games.assault_of_the_giants import GAME
from engine_core.testing import playout


def test_greedy_wins_at_least_60_percent_of_3_player_games_against_two_random_bots() -> None:
    greedy, rnd = AssaultGreedy(), RandomBot()
    wins = 0
    for seed in range(100):
        seat = seed % 3
        result = playout(GAME, 3, seed, bots={s: greedy if s == seat else rnd for s in range(3)})
        assert result.outcome is not None
        wins += result.outcome.ranks[seat] == 1
    assert wins >= 60, f"greedy won {wins} of 100"


def test_greedy_bot_is_registered() -> None:
    assert isinstance(bot_for("greedy", GAME), AssaultGreedy)


def test_random_bots_answer_trade_offers() -> None:
    answered = 0
    for seed in range(20):
        result = playout(GAME, 4, seed)
        answered += sum(1 for st in result.steps if type(st.move).__name__ == "RespondOffer")
    assert answered > 0
