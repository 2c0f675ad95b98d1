from engine_core.bots import RandomBot, bot_for
from engine_core.games.tic_tac_toe import GAME
from engine_core.testing import playout


def test_greedy_never_loses_to_random() -> None:
    greedy, rand = bot_for("greedy", GAME), RandomBot()
    for seed in range(100):
        seats = {0: greedy, 1: rand} if seed % 2 else {0: rand, 1: greedy}
        me = 0 if seed % 2 else 1
        result = playout(GAME, 2, seed, bots=seats)
        assert result.outcome is not None and result.outcome.ranks[me] == 1, seed
