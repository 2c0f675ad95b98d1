from __future__ import annotations

import pytest

from engine_core.decider import apply, start
from engine_core.errors import GameOver, IllegalMove, MalformedMove, NotYourTurn, UnknownSeat
from engine_core.flow import Pending, Phase, Phases, ResponseWindow, next_seat, seats_from
from engine_core.games.tic_tac_toe import GAME, TicTacToe
from engine_core.games.tic_tac_toe.game import PlaceMark
from engine_core.registry import Registry, UnknownGame, default_registry
from engine_core.types import Move, ranks_from_keys


def test_ranks_share_placings() -> None:
    assert ranks_from_keys([10, 7, 10, 3]) == (1, 3, 1, 4)
    assert ranks_from_keys([(5, 1), (5, 2), (5, 1)]) == (2, 1, 2)
    assert ranks_from_keys([1, 1]) == (1, 1)


def test_registry_is_explicit_and_refuses_duplicates() -> None:
    reg = Registry()
    reg.register(GAME)
    with pytest.raises(ValueError, match="already registered"):
        reg.register(TicTacToe())
    with pytest.raises(UnknownGame, match="known games: tic_tac_toe"):
        reg.get("chess")
    with pytest.raises(TypeError):
        reg.register(object())  # type: ignore[arg-type]
    assert "tic_tac_toe" in default_registry()


def test_typed_rejections() -> None:
    state, _ = start(GAME, 2, None, b"")
    with pytest.raises(NotYourTurn):
        GAME.decide(state, 1, PlaceMark(cell=0), b"")
    with pytest.raises(UnknownSeat):
        GAME.decide(state, 2, PlaceMark(cell=0), b"")

    class Other(Move):
        pass

    with pytest.raises(MalformedMove):
        GAME.decide(state, 0, Other(), b"")
    state, _ = apply(GAME, state, 0, PlaceMark(cell=4), b"")
    with pytest.raises(IllegalMove) as info:
        GAME.decide(state, 1, PlaceMark(cell=4), b"")
    assert info.value.code == "cell_taken"
    with pytest.raises(IllegalMove, match="player_count"):
        start(GAME, 3, None, b"")


def test_finished_game_refuses_moves() -> None:
    state, _ = start(GAME, 2, None, b"")
    for seat, cell in [(0, 0), (1, 3), (0, 1), (1, 4), (0, 2)]:
        state, _ = apply(GAME, state, seat, PlaceMark(cell=cell), b"")
    assert state.outcome is not None and state.outcome.ranks == (1, 2)
    with pytest.raises(GameOver):
        GAME.decide(state, 1, PlaceMark(cell=8), b"")


def test_seat_order() -> None:
    assert next_seat(3, 4) == 0
    assert seats_from(2, 4) == (2, 3, 0, 1)


def test_pending_and_response_window() -> None:
    p = Pending(kind="choose_face", seats=(2, 0, 1))
    assert p.first == 2 and p.owes(0)
    p = p.answered(0)
    assert p.seats == (2, 1) and not p.done
    with pytest.raises(IllegalMove):
        p.answered(0)
    assert p.answered(2).answered(1).done
    w = ResponseWindow(kind="twist", order=(1, 2))
    assert w.current == 1
    w2 = w.passed()
    assert w2 is not None and w2.current == 2
    assert w2.passed() is None


def test_phase_table() -> None:
    phases = Phases(Phase("play", frozenset({"place_mark"}), next="end"), Phase("end", frozenset()))
    phases.check("play", PlaceMark(cell=1))
    with pytest.raises(IllegalMove, match="wrong_phase"):
        phases.check("end", PlaceMark(cell=1))
    assert phases.next("play") == "end"
