"""``check_request``: the first field out of bounds, named as a client sees
it (nested fields by their path, a repeated field's value by its index)."""

from __future__ import annotations

import pytest

from services.common.auth import MAX_PLAYER_ID_CHARS
from services.common.bounds import DEFAULT_STRING_CHARS, Limits, check_request
from services.common.errors import InvalidArgument
from tabletop.match.v1 import match_pb2


def refusal(message, limits: Limits | None = None) -> tuple[str, dict[str, str]]:
    with pytest.raises(InvalidArgument) as e:
        check_request(message, *([limits] if limits else []))
    return e.value.reason, dict(e.value.metadata)


def test_a_request_in_bounds_passes_and_passes_again() -> None:
    request = match_pb2.CreateMatchRequest(game="tic_tac_toe", players=["a", "b"])
    check_request(request)
    check_request(request)  # the rules learnt the first time give the same answer


def test_a_string_too_long_names_its_field_and_limit() -> None:
    request = match_pb2.CreateMatchRequest(game="g" * (DEFAULT_STRING_CHARS + 1))
    assert refusal(request) == (
        "field_too_long",
        {"field": "game", "limit": str(DEFAULT_STRING_CHARS)},
    )
    check_request(match_pb2.CreateMatchRequest(game="g" * DEFAULT_STRING_CHARS))


def test_a_repeated_value_too_long_names_its_index() -> None:
    request = match_pb2.CreateMatchRequest(players=["a", "p" * (MAX_PLAYER_ID_CHARS + 1)])
    assert refusal(request) == (
        "field_too_long",
        {"field": "players", "limit": str(MAX_PLAYER_ID_CHARS), "index": "1"},
    )


def test_too_many_values() -> None:
    request = match_pb2.CreateMatchRequest(players=["a"] * 65)
    assert refusal(request) == ("too_many_values", {"field": "players", "limit": "64"})


def test_a_nested_field_is_named_by_its_path() -> None:
    request = match_pb2.PlayRequest(move=match_pb2.PlayMove(ref="r" * 300))
    assert refusal(request)[1]["field"] == "move.ref"
    # JSON fields have their own (larger) backstop
    check_request(match_pb2.PlayRequest(move=match_pb2.PlayMove(move_json="x" * 10_000)))


def test_limits_are_per_limits_object() -> None:
    request = match_pb2.CreateMatchRequest(game="ten chars!")
    check_request(request)
    tight = Limits({"game": 4})
    assert refusal(request, tight) == ("field_too_long", {"field": "game", "limit": "4"})
    assert (
        refusal(match_pb2.CreateMatchRequest(players=["a"] * 3), Limits(counts={"players": 2}))[0]
        == "too_many_values"
    )
    check_request(request)  # the default limits are untouched


def test_a_map_is_not_checked() -> None:
    check_request(match_pb2.PlayError(metadata={"k" * 1000: "v" * 1000}))


def test_the_size_shortcut_never_passes_a_request_out_of_bounds() -> None:
    # A request no larger than the smallest limit passes on its size alone;
    # the smallest breach of each kind is larger, for any limits.
    assert Limits().floor == 64
    tight = Limits({"game": 1}, {"players": 1})
    assert tight.floor == 1
    assert refusal(match_pb2.CreateMatchRequest(game="ab"), tight)[0] == "field_too_long"
    two_empty = match_pb2.CreateMatchRequest(players=["", ""])
    assert refusal(two_empty, tight)[0] == "too_many_values"
    assert refusal(match_pb2.CreateMatchRequest(players=[""] * 65))[0] == "too_many_values"
    check_request(match_pb2.CreateMatchRequest(players=[""] * 32))  # 64 bytes: at the floor
