from engine_core.bots import RandomBot, bot_for
from engine_core.bots.dice_forge import DiceForgeGreedy
from engine_core.games.dice_forge import GAME
from engine_core.testing import playout


def test_greedy_beats_random_in_80_percent_of_two_player_games() -> None:
    greedy, rand = bot_for("greedy", GAME), RandomBot()
    assert isinstance(greedy, DiceForgeGreedy)
    wins = 0
    for seed in range(200):
        me = seed % 2
        result = playout(GAME, 2, seed, bots={me: greedy, 1 - me: rand})
        assert result.outcome is not None
        wins += result.outcome.ranks[me] == 1 and result.outcome.ranks[1 - me] == 2
    assert wins >= 160, f"greedy won {wins} of 200"


def test_greedy_plays_every_player_count() -> None:
    greedy = bot_for("greedy", GAME)
    for players in (2, 3, 4):
        for seed in range(3):
            assert playout(GAME, players, seed, bots=greedy).outcome is not None
