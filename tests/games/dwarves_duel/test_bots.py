"""The greedy bot beats the random bot, and answers response windows sensibly."""

from __future__ import annotations

from engine_core.bots import RandomBot, bot_for
from engine_core.bots.dwarves_duel import DwarvesDuelGreedy
from engine_core.games.dwarves_duel import GAME
from engine_core.games.dwarves_duel.moves import ActivateAlly, Pass, PlayCard, PlayTwist
from engine_core.rng import Rng
from engine_core.testing import playout
from tests.games.dwarves_duel.helpers import E, G, make_state, play, with_damage

GREEDY = DwarvesDuelGreedy()


def test_greedy_is_registered():
    assert isinstance(bot_for("greedy", GAME), DwarvesDuelGreedy)


def test_greedy_wins_at_least_70_percent_against_random_over_200_seeds():
    wins = 0
    for seed in range(200):
        g = seed % 2  # the greedy bot takes each seat half of the time
        result = playout(GAME, 2, seed, bots={g: GREEDY, 1 - g: RandomBot()})
        wins += result.outcome.ranks[g] == 1
    assert wins >= 140, f"greedy won {wins} of 200"


def test_greedy_against_itself_finishes():
    for seed in range(10):
        assert playout(GAME, 2, seed, bots=GREEDY).outcome is not None


def test_greedy_saves_a_damaged_card_from_its_last_point():
    s = make_state(active=E, dice="1", e_display=["E01"], g_display=["G16"], g_hand=["G34"])
    s = with_damage(s, G, "G16", 3)  # HP 4: the next point defeats it
    s, _ = play(s, E, ActivateAlly(ally="E01", unit="d0", target="G16"))
    assert GREEDY.choose(GAME, s, G, Rng(b"")) == PlayTwist(card="G34")


def test_greedy_armor_and_pass_choices():
    # a point that would defeat G10 (HP 1): cancel it
    s = make_state(active=E, dice="1", e_display=["E01"], g_display=["G10"], g_hand=["G34"])
    s, _ = play(s, E, ActivateAlly(ally="E01", unit="d0", target="G10"))
    assert GREEDY.choose(GAME, s, G, Rng(b"")) == PlayTwist(card="G34")
    # a point at a big pile: keep the Chain Mail
    s = make_state(active=E, dice="1", e_display=["E01"], g_hand=["G34"], g_pile=20)
    s, _ = play(s, E, ActivateAlly(ally="E01", unit="d0", target="PILE"))
    assert GREEDY.choose(GAME, s, G, Rng(b"")) == Pass()


def test_greedy_snipes_the_king_in_its_checkpoint():
    s = make_state(active=E, dice="331", e_hand=["E09"], g_hand=["G32"])
    s, _ = play(s, E, PlayCard(card="E09", payment=("d0", "d1")))
    assert GAME.awaiting(s) == (G,)
    assert GREEDY.choose(GAME, s, G, Rng(b"")) == PlayTwist(card="G32", target="E09")


def test_standing_counts_points_damage_and_allies():
    """The search bot's cut-off evaluation: VP in the display, less for a VP
    card already damaged, more for Allies still standing."""
    bare = make_state(g_display=["G16"], e_display=["E16"])  # VP 4 (HP 4) each
    assert GREEDY.standing(bare)[G] == GREEDY.standing(bare)[E] == 4.0
    hurt = with_damage(bare, E, "E16", 2)
    assert GREEDY.standing(hurt)[E] < GREEDY.standing(hurt)[G]
    allied = make_state(g_display=["G16", "G04"], e_display=["E16"])  # G04: an Ally
    assert GREEDY.standing(allied)[G] > GREEDY.standing(allied)[E]
    assert GREEDY.standing(make_state())[G] == 0.0


def test_a_shared_greedy_bot_plays_as_a_fresh_one():
    """The bot memoises per-state values: asked about another state in between
    (as search rollouts and other matches do), it still chooses the moves a
    fresh bot chose in the same states."""
    shared = DwarvesDuelGreedy()
    probe = make_state(active=G, dice="13W", g_display=["G01"], e_display=["E16"])
    for seed in range(3):
        seen = _steps(seed)
        assert len(seen) > 50
        for before, step in seen:
            shared.choose(GAME, probe, G, Rng(b""))
            assert shared.choose(GAME, before, step.seat, Rng(b"")) == step.move


def _steps(seed: int) -> list:
    """(state, step) before every step of a greedy game."""
    seen: list = []
    playout(GAME, 2, seed, bots=DwarvesDuelGreedy(), on_step=lambda b, st, _a: seen.append((b, st)))
    return seen
