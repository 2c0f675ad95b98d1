"""Bot worker settings: levels and the search budget from the environment."""

from __future__ import annotations

import pytest

from services.bots.settings import BotSettings


def test_the_search_budget_and_level_come_from_the_environment() -> None:
    s = BotSettings.from_env(
        {
            "TABLETOP_BOTS_KIND": "search",
            "TABLETOP_BOTS_SEARCH_TIME_S": "0.25",
            "TABLETOP_BOTS_SEARCH_ITERATIONS": "800",
            "TABLETOP_BOTS_SEARCH_THREADS": "1",
        }
    )
    assert (s.kind, s.search_time_s, s.search_iterations, s.search_threads) == (
        "search",
        0.25,
        800,
        1,
    )


def test_an_unknown_level_is_refused_at_start_up() -> None:
    with pytest.raises(ValueError, match="TABLETOP_BOTS_KIND='expert' is not a bot level"):
        BotSettings.from_env({"TABLETOP_BOTS_KIND": "expert"})


def test_a_search_budget_must_be_positive() -> None:
    with pytest.raises(ValueError, match="positive"):
        BotSettings.from_env({"TABLETOP_BOTS_SEARCH_TIME_S": "0"})
