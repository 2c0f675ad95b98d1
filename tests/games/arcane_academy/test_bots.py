from engine_core.bots import RandomBot, bot_for
from engine_core.decider import fold
from engine_core.games.arcane_academy import GAME
from engine_core.testing import playout


def test_greedy_wins_at_least_70_percent_of_2_player_games_against_random() -> None:
    greedy, rand = bot_for("greedy", GAME), RandomBot()
    assert greedy.name == "greedy"
    wins = 0
    for seed in range(200):
        me = seed % 2  # the greedy bot takes each seat in half of the games
        result = playout(GAME, 2, seed, bots={me: greedy, 1 - me: rand})
        assert result.outcome is not None
        wins += result.outcome.winners == (me,)
    assert wins >= 140, f"greedy won {wins} of 200"


def test_greedy_self_play_finishes_at_every_player_count() -> None:
    greedy = bot_for("greedy", GAME)
    for players in (2, 3, 4):
        for seed in range(3):
            result = playout(GAME, players, seed, bots=greedy)
            assert result.outcome is not None
            assert fold(GAME, result.events) == result.state
