"""``sample_state`` and the bots that decide on views, over every registered game.

* A sampled state is consistent with the view it came from:
  ``view(sample, seat) == view(state, seat)``, for every seat at every step
  of seeded playouts, and the awaited seat has the same legal moves in it.
* The search bot (and any bot through ``choose_from_view``) decides on the
  seat's view alone: its move does not change when only hidden information
  changes, and it is always legal.
* The search bot is deterministic for a given ``rng`` stream.
"""

from __future__ import annotations

import pytest

from engine_core.bots import LEVELS, bot_for, choose_from_view, greedy_bots
from engine_core.bots.search import SearchBot, seat_rewards
from engine_core.decider import Game
from engine_core.registry import default_registry
from engine_core.rng import Rng
from engine_core.testing import playout
from engine_core.types import Outcome

GAMES = list(default_registry())
COUNTS = [(g, n) for g in GAMES for n in range(g.min_players, g.max_players + 1)]
HIDDEN = [g for g in GAMES if g.View is not g.State]


def ids(param) -> str:
    game, n = param
    return f"{game.name}-{n}p"


def _states(game: Game, players: int, seed: int, every: int = 1) -> list:
    """The states of a greedy playout (after each ``every``-th step)."""
    out: list = []

    def keep(_before, step, after) -> None:
        if step.index % every == 0 and game.outcome(after) is None:
            out.append(after)

    playout(game, players, seed, bots=greedy_bots().get(game.name), on_step=keep)
    return out


@pytest.mark.parametrize("param", COUNTS, ids=ids)
def test_a_sample_is_consistent_with_the_view_it_came_from(param) -> None:
    game, players = param
    for seed in range(2):
        for k, state in enumerate(_states(game, players, seed)):
            for seat in range(game.seats(state)):
                view = game.view(state, seat)
                sample = game.sample_state(view, seat, Rng(bytes([seed, seat, k % 256])))
                assert game.view(sample, seat) == view, f"seed {seed} step {k} seat {seat}"
                if seat in game.awaiting(state):
                    assert game.legal_moves(sample, seat) == game.legal_moves(state, seat)


@pytest.mark.parametrize("game", HIDDEN, ids=lambda g: g.name)
def test_samples_deal_the_hidden_information_differently(game: Game) -> None:
    """Not the real state handed back: over a few draws the hidden parts vary."""
    state = _states(game, game.min_players, 3)[5]
    view = game.view(state, 0)
    secrets = {
        tuple(sorted(map(str, game.secrets(game.sample_state(view, 0, Rng(bytes([i]))))[None])))
        for i in range(5)
    }
    orders = {
        tuple(game.secrets(game.sample_state(view, 0, Rng(bytes([i]))))[None]) for i in range(5)
    }
    assert len(orders) > 1 or len(secrets) > 1


@pytest.mark.parametrize("game", HIDDEN, ids=lambda g: g.name)
def test_a_hidden_information_game_refuses_another_seats_view(game: Game) -> None:
    state = _states(game, game.min_players, 1)[3]
    with pytest.raises(ValueError):
        game.sample_state(game.view(state, 1), 0, Rng(b"x"))


def _decision_points(game: Game, players: int, seed: int, want: int) -> list:
    """States where the awaited seat has a real choice."""
    out = []
    for state in _states(game, players, seed, every=7):
        seat = game.awaiting(state)[0]
        if len(game.legal_moves(state, seat)) > 1:
            out.append((state, seat))
        if len(out) >= want:
            break
    return out


@pytest.mark.parametrize("param", COUNTS, ids=ids)
def test_the_search_bot_ignores_hidden_information_and_plays_legal_moves(param) -> None:
    game, players = param
    bot = SearchBot(iterations=6, rollout_moves=20)
    for state, seat in _decision_points(game, players, seed=7, want=3):
        view = game.view(state, seat)
        other = game.sample_state(view, seat, Rng(b"another deal"))
        move = bot.choose(game, state, seat, Rng(b"bot"))
        assert move in game.legal_moves(state, seat)
        assert bot.choose(game, other, seat, Rng(b"bot")) == move
        assert bot.choose_view(game, view, seat, Rng(b"bot")) == move


@pytest.mark.parametrize("game", HIDDEN, ids=lambda g: g.name)
@pytest.mark.parametrize("level", LEVELS)
def test_every_level_decides_on_a_view_alone(game: Game, level: str) -> None:
    bot = bot_for(level, game, iterations=4)
    for state, seat in _decision_points(game, game.min_players, seed=11, want=2):
        view = game.view(state, seat)
        other = game.sample_state(view, seat, Rng(b"another deal"))
        a = choose_from_view(bot, game, view, seat, Rng(b"same"))
        b = choose_from_view(bot, game, game.view(other, seat), seat, Rng(b"same"))
        assert a == b
        assert a in game.legal_moves(state, seat)


@pytest.mark.parametrize("game", GAMES, ids=lambda g: g.name)
def test_the_search_bot_is_deterministic_for_a_seed(game: Game) -> None:
    (state, seat), *_ = _decision_points(game, game.min_players, seed=5, want=1)
    runs = [SearchBot(iterations=10, rollout_moves=30) for _ in range(2)]
    moves = [b.choose(game, state, seat, Rng(b"seed")) for b in runs]
    assert moves[0] == moves[1]
    assert runs[0].last == runs[1].last
    assert runs[0].last.iterations == 10


def test_a_time_budget_stops_the_search_on_the_callers_clock() -> None:
    game = default_registry().get("dwarves_duel")
    (state, seat), *_ = _decision_points(game, 2, seed=5, want=1)
    ticks = iter(range(1000))
    bot = SearchBot(iterations=1000, time_s=3, clock=lambda: float(next(ticks)))
    bot.choose(game, state, seat, Rng(b"t"))
    assert bot.last.iterations == 3  # the clock read once at the start, then once per iteration


def test_a_time_budget_needs_a_clock() -> None:
    with pytest.raises(ValueError):
        SearchBot(time_s=0.5)


def test_search_plays_a_whole_game_of_every_registered_game_to_its_end() -> None:
    for game in GAMES:
        result = playout(game, game.min_players, 2, bots=SearchBot(iterations=2, rollout_moves=10))
        assert result.outcome is not None


def test_seat_rewards_count_the_seats_beaten_ties_half() -> None:
    assert seat_rewards(Outcome(ranks=(1, 2), scores=(1, 0), reason="x")) == (1.0, 0.0)
    assert seat_rewards(Outcome(ranks=(1, 1), scores=(0, 0), reason="x")) == (0.5, 0.5)
    assert seat_rewards(Outcome(ranks=(2, 1, 2, 4), scores=(0,) * 4, reason="x")) == (
        0.5,
        1.0,
        0.5,
        0.0,
    )


def test_unknown_levels_are_refused() -> None:
    with pytest.raises(ValueError, match="unknown bot level"):
        bot_for("expert", GAMES[0])


def test_the_stand_in_plays_every_level_by_name_on_the_seats_view() -> None:
    from services.common.standin import known_bot, stand_in_move

    assert all(known_bot(level) for level in LEVELS) and not known_bot("expert")
    game = default_registry().get("arcane_academy")
    (state, seat), *_ = _decision_points(game, 2, seed=9, want=1)
    for level in LEVELS:
        assert stand_in_move(game, state, seat, level, b"e" * 32) in game.legal_moves(state, seat)
