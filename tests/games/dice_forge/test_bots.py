from engine_core.bots import RandomBot, bot_for
from engine_core.bots.dice_forge import DiceForgeGreedy
from engine_core.games.dice_forge import GAME
from engine_core.rng import Rng
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


def test_a_shared_greedy_bot_plays_as_a_fresh_one() -> None:
    """The bot memoises per-player values: asked about another state in between
    (as search rollouts and other matches do), it still chooses what a fresh
    bot chooses in the same state with the same entropy."""
    shared = DiceForgeGreedy()
    probes = _states(3, 7)
    probe, probe_seat = probes[len(probes) // 2]
    for players in (2, 4):
        for before, seat in _states(players, players):
            fresh = DiceForgeGreedy().choose(GAME, before, seat, Rng(b"same"))
            shared.choose(GAME, probe, probe_seat, Rng(b"probe"))
            assert shared.choose(GAME, before, seat, Rng(b"same")) == fresh


def _states(players: int, seed: int) -> list:
    """(state, seat to move) before every step of a greedy game."""
    seen: list = []
    playout(
        GAME,
        players,
        seed,
        bots=DiceForgeGreedy(),
        on_step=lambda before, step, _after: seen.append((before, step.seat)),
    )
    assert len(seen) > 20
    return seen
