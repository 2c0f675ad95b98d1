"""default_move: what a timed-out player does must be legal and not harmful."""

from __future__ import annotations

from msgspec.structs import replace

from engine_core.games.arcane_academy import GAME
from engine_core.games.arcane_academy.moves import Cast, PlaceTile
from tests.games.arcane_academy.helpers import blank, play, put, set_player, space


def test_default_move_places_a_held_tile_on_an_empty_space() -> None:
    # Given a timed-out player holds T05 and the slate has empty spaces
    s = replace(set_player(blank(), 0, held=("T05",)), phase="place_tiles")
    move = GAME.default_move(s, 0)
    # Then the default covers nothing (never a printed corner such as K1)
    assert isinstance(move, PlaceTile) and move in GAME.legal_moves(s, 0)
    assert space(s, 0, move.x, move.y).stack == ()


def test_default_move_places_legally_on_a_full_slate() -> None:
    s = blank()
    for i in range(12):
        x, y = i % 4, i // 4
        if not space(s, 0, x, y).stack:
            s = put(s, 0, "T01" if i % 2 else "T02", x, y)
    s = replace(set_player(s, 0, held=("T05",)), phase="place_tiles")
    assert GAME.default_move(s, 0) in GAME.legal_moves(s, 0)


def test_default_move_takes_free_resources_before_skipping() -> None:
    # Given a timed-out player resolving T22 (Will 2 + Shard 2)
    s = put(set_player(blank(), 0, will=5, shards=1), 0, "T22", 1, 1)
    s, _ = play(s, 0, Cast(x=1, y=1))
    for _ in range(2):
        s, _ = play(s, 0, GAME.default_move(s, 0))
    # Then both free gains were taken
    assert (s.players[0].will, s.players[0].shards) == (7, 3)
