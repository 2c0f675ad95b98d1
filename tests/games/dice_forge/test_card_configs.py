"""The conformance checks again, with the alternate and the random card configurations
(the shared suite plays the default, first-game cards only)."""

from __future__ import annotations

import pytest

from engine_core.games.dice_forge import Options
from engine_core.games.dice_forge.game import DiceForge
from engine_core.testing import playout
from tests.conformance.harness import deep_playout


def configured(cards: str) -> DiceForge:
    class Configured(DiceForge):
        pass

    Configured.Options = staticmethod(lambda: Options(cards=cards))  # type: ignore[assignment]
    return Configured()


@pytest.mark.parametrize("players", [2, 3, 4])
@pytest.mark.parametrize("cards", ["alternate", "random"])
@pytest.mark.parametrize("seed", [0, 1])
def test_every_check_at_every_step_with_other_cards(players: int, cards: str, seed: int) -> None:
    deep_playout(configured(cards), players, seed)


@pytest.mark.parametrize("players", [2, 3, 4])
def test_alternate_cards_playouts_end(players: int) -> None:
    game = configured("alternate")
    for seed in range(60):
        p = playout(game, players, seed, options=Options(cards="alternate"))
        assert p.outcome is not None


@pytest.mark.slow
@pytest.mark.parametrize("players", [2, 3, 4])
@pytest.mark.parametrize("cards", ["alternate", "random"])
def test_many_playouts_with_other_cards(players: int, cards: str) -> None:
    for seed in range(20):
        deep_playout(configured(cards), players, 100 + seed)
    for seed in range(2000):
        assert playout(configured(cards), players, seed).outcome is not None


def test_random_config_is_drawn_from_the_entropy() -> None:
    game = DiceForge()
    configs = {game.setup(2, Options(cards="random"), bytes([i]) * 32)[0].cards for i in range(20)}
    assert len(configs) > 1
    base = game.setup(2, Options(), b"x" * 32)[0].cards
    assert base[2:5] == ("HIND", "SATYRS", "FERRYMAN")
    alt = game.setup(2, Options(cards="alternate", m3="base"), b"x" * 32)[0].cards
    assert alt[2:5] == ("HIND", "BOAR", "CERBERUS")
