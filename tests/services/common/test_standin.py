"""The move the server makes for a seat nobody plays: legal, and never
chosen on information the seat could not see."""

from __future__ import annotations

import pytest

from engine_core.bots import LEVELS
from engine_core.decider import start
from engine_core.errors import NotYourTurn
from engine_core.registry import default_registry
from engine_core.rng import Rng
from services.common.errors import InvalidArgument
from services.common.standin import stand_in_move
from tests.services.match.secret_game import GAME as SECRET_GAME

GAMES = list(default_registry())


@pytest.mark.parametrize("game", GAMES, ids=lambda g: g.name)
@pytest.mark.parametrize("bot", ["", *LEVELS])
def test_the_stand_in_move_is_legal(game, bot) -> None:
    state, _ = start(game, game.min_players, game.Options(), b"\x01" * 32)
    seat = game.awaiting(state)[0]
    move = stand_in_move(game, state, seat, bot, b"\x02" * 32)
    assert move in game.legal_moves(state, seat)


def test_a_bot_decides_on_the_view_alone() -> None:
    """Two deals that look the same to the seat get the same move from it."""
    game = default_registry().get("dwarves_duel")
    a, _ = start(game, 2, game.Options(), b"\x01" * 32)
    seat = game.awaiting(a)[0]
    view = game.view(a, seat)
    b = game.sample_state(view, seat, Rng(b"another deal"))
    assert b != a and game.view(b, seat) == view
    for bot in ("random", "greedy"):
        assert stand_in_move(game, a, seat, bot, b"\x05" * 32) == stand_in_move(
            game, b, seat, bot, b"\x05" * 32
        )


def test_a_game_that_cannot_deal_from_a_view_gets_its_default_move() -> None:
    game = SECRET_GAME  # secrets, and no sample_state
    state, _ = start(game, 2, game.Options(), b"\x01" * 32)
    for bot in LEVELS:
        assert stand_in_move(game, state, 0, bot, b"") == game.default_move(state, 0)


def test_a_seat_not_awaited_or_an_unknown_bot_is_refused() -> None:
    game = default_registry().get("tic_tac_toe")
    state, _ = start(game, 2, game.Options(), b"\x01" * 32)
    with pytest.raises(NotYourTurn):
        stand_in_move(game, state, 1, "", b"")
    with pytest.raises(InvalidArgument):
        stand_in_move(game, state, 0, "grandmaster", b"")
