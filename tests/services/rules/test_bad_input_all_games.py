"""Bad input against every registered game: the documented status, never an
internal error, and the server keeps serving."""

import json

import grpc
import msgspec
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from engine_core.registry import default_registry
from engine_core.testing import playout
from services.common.codecs import encode_state, to_json
from services.common.errors import error_info
from tabletop.rules.v1 import rules_pb2

from .conftest import assert_serving

GAMES = [pytest.param(g.name, id=g.name) for g in default_registry()]
ACCEPTED = {grpc.StatusCode.INVALID_ARGUMENT, grpc.StatusCode.FAILED_PRECONDITION}


@pytest.fixture(autouse=True)
def _still_serving(health):
    yield
    assert_serving(health)


def _positions(name: str, count: int = 12):
    """(state, awaited seats, legal moves per awaited seat) along a seeded random game."""
    game = default_registry().get(name)
    out = []

    def keep(before, step, _after):
        if step.index % 3 == 0 and len(out) < count:
            waiting = game.awaiting(before)
            out.append((before, {s: game.legal_moves(before, s) for s in waiting}))

    playout(game, game.min_players, 5, on_step=keep)
    return game, out


def _refusal(call, request):
    with pytest.raises(grpc.RpcError) as e:
        call(request, timeout=5)
    return e.value.code(), error_info(e.value)


@pytest.mark.parametrize("name", GAMES)
def test_out_of_turn_unknown_seat_and_garbage(stub, name):
    game, positions = _positions(name)
    for state, legal in positions:
        data = encode_state(game, state)
        seats = game.seats(state)
        awaited = sorted(legal)
        idle = [s for s in range(seats) if s not in legal]
        move = next(m for s in awaited for m in legal[s])
        if idle:  # a legal move of an awaited seat, sent by a seat not awaited
            request = rules_pb2.ApplyMoveRequest(
                game=name, state=data, seat=idle[0], move=to_json(move).decode()
            )
            code, info = _refusal(stub.ApplyMove, request)
            assert (code, info.reason) == (grpc.StatusCode.FAILED_PRECONDITION, "not_your_turn")
        for request, call in (
            (rules_pb2.LegalMovesRequest(game=name, state=data, seat=seats), stub.LegalMoves),
            (rules_pb2.ViewRequest(game=name, state=data, seat=seats), stub.View),
            (
                rules_pb2.ApplyMoveRequest(
                    game=name, state=data, seat=seats, move=to_json(move).decode()
                ),
                stub.ApplyMove,
            ),
        ):
            code, info = _refusal(call, request)
            assert (code, info.reason) == (grpc.StatusCode.INVALID_ARGUMENT, "unknown_seat")
        for text in ('{"type": "no_such_move"}', "[]", "{", '{"type": 7}'):
            request = rules_pb2.ApplyMoveRequest(game=name, state=data, seat=awaited[0], move=text)
            code, info = _refusal(stub.ApplyMove, request)
            assert (code, info.reason) == (grpc.StatusCode.INVALID_ARGUMENT, "malformed_move")
        bad = data[:-3] + b"\xc1\xc1\xc1"  # msgpack's never-used byte
        code, info = _refusal(stub.Outcome, rules_pb2.OutcomeRequest(game=name, state=bad))
        assert (code, info.reason) == (grpc.StatusCode.INVALID_ARGUMENT, "corrupt_state")


def _mutations(value):
    """Values of the same JSON shape, and out-of-range ones, for a move field."""
    if isinstance(value, bool):
        return st.booleans() | st.integers(-2, 2)
    if isinstance(value, int):
        return st.integers(-3, 60) | st.integers(-(2**63), 2**63 - 1)
    if isinstance(value, str):
        return st.text(max_size=12) | st.sampled_from(["", "none", value + "x"])
    if isinstance(value, list):
        return st.lists(st.integers(-3, 60) | st.text(max_size=6), max_size=len(value) + 2)
    return st.none() | st.integers() | st.text(max_size=6)


@pytest.mark.parametrize("name", GAMES)
@settings(
    max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(data=st.data())
def test_mutated_legal_moves_are_accepted_or_refused_never_internal(stub, name, data):
    game, positions = _cached_positions(name)
    state, legal = data.draw(st.sampled_from(positions))
    seat = data.draw(st.sampled_from(sorted(legal)))
    if not legal[seat]:
        return
    move = msgspec.to_builtins(data.draw(st.sampled_from(legal[seat])))
    fields = [k for k in move if k != "type"]
    if fields:
        key = data.draw(st.sampled_from(fields))
        move[key] = data.draw(_mutations(move[key]))
    request = rules_pb2.ApplyMoveRequest(
        game=name, state=encode_state(game, state), seat=seat, move=json.dumps(move)
    )
    try:
        stub.ApplyMove(request, timeout=5)
    except grpc.RpcError as e:
        assert e.code() in ACCEPTED, (e.code(), e.details(), move)
        assert error_info(e) is not None


_cache: dict = {}


def _cached_positions(name: str):
    if name not in _cache:
        _cache[name] = _positions(name)
    return _cache[name]
