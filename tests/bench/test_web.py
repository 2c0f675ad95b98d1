"""The browser's path benchmark plays through the whole stack and counts
what each move asks of the rules service."""

from __future__ import annotations

import pytest

from bench import web

pytestmark = pytest.mark.timeout(240)


def test_the_browsers_path_plays_on_its_socket_with_no_fold_and_no_get_match() -> None:
    (row,) = web.run(loops=(1,), seconds=1.0)
    assert row["moves"] >= 9 and row["moves"] % 9 == 0  # whole 9-move games
    calls = row["rules_calls_per_move"]
    assert calls["ApplyMove"] == pytest.approx(1.0)
    # each commit's view once per watching page
    assert calls["View"] == pytest.approx(2 * 10 / 9)
    # a live commit's state comes from the projection in memory: a fold only
    # when a watcher got to a commit after the next one was applied (a race
    # the turn order makes rare); before, two folds a move (one a watcher)
    assert calls.get("Fold", 0.0) < 0.2
    # the turn comes with the commit (include_turn): the legal moves once per
    # move, for the seat to move, and no GetMatch per commit and page
    assert calls["LegalMoves"] == pytest.approx(1.0)
    match_calls = row["match_calls_per_move"]
    assert "GetMatch" not in match_calls
    # the moves go on the gateway's PlayMatch streams (one per page and game),
    # none by SubmitMove
    assert "SubmitMove" not in match_calls
    assert match_calls["PlayMatch"] == pytest.approx(2 / 9)
    assert row["cpu_ms_per_move"]["gateway"] > 0 and row["cpu_ms_per_move"]["match"] > 0
