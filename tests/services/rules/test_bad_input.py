"""Bad input gets the documented status and reason, and the server keeps serving.

Each case runs against the real service process; after every test the
health check must still answer SERVING.
"""

import json

import grpc
import msgspec
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from engine_core.decider import apply, start
from engine_core.errors import EngineError
from engine_core.registry import default_registry
from services.common.codecs import codec_for, encode_state
from services.common.errors import error_info, status_of
from tabletop.rules.v1 import rules_pb2

from .conftest import assert_serving

TTT = default_registry().get("tic_tac_toe")
FAST = settings(
    max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=8),
    lambda inner: (
        st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner, max_size=4)
    ),
    max_leaves=12,
)


@pytest.fixture(autouse=True)
def _still_serving(health):
    yield
    assert_serving(health)


def _fails(call, request, code: grpc.StatusCode, reason: str | None = None):
    with pytest.raises(grpc.RpcError) as e:
        call(request, timeout=5)
    assert e.value.code() == code, e.value.details()
    info = error_info(e.value)
    assert info is not None and info.domain == "tabletop"
    if reason is not None:
        assert info.reason == reason, (info.reason, e.value.details())
    return info


def _ttt_state(moves=()):
    state, _ = start(TTT, 2, None, b"e")
    for i, cell in enumerate(moves):
        state, _ = apply(TTT, state, i % 2, TTT.Move(cell=cell), b"e")
    return state


START = encode_state(TTT, _ttt_state())


PLACE_4 = json.dumps({"type": "place_mark", "cell": 4})


def _every_state_call(stub, game: str, state: bytes, seat: int = 0):
    """(rpc, request) for each RPC that reads a state."""
    move = PLACE_4
    return [
        (stub.ApplyMove, rules_pb2.ApplyMoveRequest(game=game, state=state, seat=seat, move=move)),
        (stub.LegalMoves, rules_pb2.LegalMovesRequest(game=game, state=state, seat=seat)),
        (stub.View, rules_pb2.ViewRequest(game=game, state=state, seat=seat)),
        (stub.View, rules_pb2.ViewRequest(game=game, state=state)),
        (stub.Outcome, rules_pb2.OutcomeRequest(game=game, state=state)),
    ]


# ------------------------------------------------------------------- states
@FAST
@given(data=st.binary(max_size=300))
def test_random_bytes_as_state_are_invalid_argument(stub, data):
    for rpc, request in _every_state_call(stub, "tic_tac_toe", data):
        _fails(rpc, request, grpc.StatusCode.INVALID_ARGUMENT, "corrupt_state")


def test_state_of_another_game_is_refused(stub):
    class Envelope(msgspec.Struct):
        game: str
        rules_version: str
        state: msgspec.Raw

    env = msgspec.msgpack.decode(START, type=Envelope)
    foreign = [msgspec.msgpack.encode(msgspec.structs.replace(env, game="other_game"))]
    # and every other registered game's real state
    for game in default_registry():
        if game.name != "tic_tac_toe":
            state, _ = start(game, game.min_players, None, b"e")
            foreign.append(encode_state(game, state))
    for data in foreign:
        for rpc, request in _every_state_call(stub, "tic_tac_toe", data):
            info = _fails(rpc, request, grpc.StatusCode.INVALID_ARGUMENT, "state_of_another_game")
            assert info.metadata["expected"] == "tic_tac_toe"


def test_state_of_other_rules_is_failed_precondition(stub):
    env = msgspec.msgpack.decode(START)
    env["rules_version"] = "0-older"
    data = msgspec.msgpack.encode(env)
    for rpc, request in _every_state_call(stub, "tic_tac_toe", data):
        _fails(rpc, request, grpc.StatusCode.FAILED_PRECONDITION, "rules_version_mismatch")


# -------------------------------------------------------------------- moves
def _expected(state, seat: int, move_json: str):
    """What the engine itself says: ("ok", events) or (status, reason)."""
    try:
        move = codec_for(TTT).decode_move(move_json)
        _, events = apply(TTT, state, seat, move, b"x")
    except EngineError as e:
        code, reason, _, _ = status_of(e)
        return code, reason
    return "ok", [json.loads(msgspec.json.encode(e)) for e in events]


@FAST
@given(
    text=st.one_of(
        st.text(max_size=60),
        json_values.map(json.dumps),
        st.builds(
            lambda cell, extra: json.dumps({"type": "place_mark", "cell": cell, **extra}),
            json_values,
            st.dictionaries(st.sampled_from(["x", "seat"]), json_values, max_size=1),
        ),
        st.builds(lambda t: json.dumps({"type": t, "cell": 4}), st.text(max_size=12)),
    ),
    seat=st.integers(0, 3),
    placed=st.lists(st.integers(0, 8), unique=True, max_size=4),
)
def test_garbage_moves_get_the_engines_answer(stub, text, seat, placed):
    state = _ttt_state(placed)
    request = rules_pb2.ApplyMoveRequest(
        game="tic_tac_toe", state=encode_state(TTT, state), seat=seat, move=text, entropy=b"x"
    )
    expected = _expected(state, seat, text)
    if expected[0] == "ok":
        reply = stub.ApplyMove(request, timeout=5)
        assert [json.loads(e) for e in reply.events] == expected[1]
    else:
        code, reason = expected
        if reason == "malformed_move":
            assert code == grpc.StatusCode.INVALID_ARGUMENT
        _fails(stub.ApplyMove, request, code, reason)


def test_moves_out_of_turn_illegal_and_after_the_end(stub):
    def move(state, seat, cell):
        return rules_pb2.ApplyMoveRequest(
            game="tic_tac_toe",
            state=encode_state(TTT, state),
            seat=seat,
            move=json.dumps({"type": "place_mark", "cell": cell}),
        )

    _fails(
        stub.ApplyMove,
        move(_ttt_state(), 1, 4),
        grpc.StatusCode.FAILED_PRECONDITION,
        "not_your_turn",
    )
    _fails(
        stub.ApplyMove,
        move(_ttt_state([4]), 1, 4),
        grpc.StatusCode.FAILED_PRECONDITION,
        "cell_taken",
    )
    won = _ttt_state([0, 3, 1, 4, 2])
    _fails(stub.ApplyMove, move(won, 1, 8), grpc.StatusCode.FAILED_PRECONDITION, "game_over")
    reply = stub.Outcome(rules_pb2.OutcomeRequest(game="tic_tac_toe", state=encode_state(TTT, won)))
    assert list(reply.status.outcome.ranks) == [1, 2]
    assert reply.status.outcome.reason == "three_in_a_row"


def test_unknown_move_type_and_wrong_field_types(stub):
    for text in ('{"type": "castle"}', '{"type": "place_mark", "cell": "four"}', "{", ""):
        request = rules_pb2.ApplyMoveRequest(game="tic_tac_toe", state=START, seat=0, move=text)
        _fails(stub.ApplyMove, request, grpc.StatusCode.INVALID_ARGUMENT, "malformed_move")


# ---------------------------------------------------------------- oversized
def test_oversized_json_is_refused(stub):
    big = json.dumps({"type": "place_mark", "cell": 4, "pad": "x" * 70_000})
    request = rules_pb2.ApplyMoveRequest(game="tic_tac_toe", state=START, seat=0, move=big)
    _fails(stub.ApplyMove, request, grpc.StatusCode.INVALID_ARGUMENT, "json_too_large")
    request = rules_pb2.NewGameRequest(game="tic_tac_toe", players=2, options=big)
    _fails(stub.NewGame, request, grpc.StatusCode.INVALID_ARGUMENT, "json_too_large")


def test_oversized_message_is_resource_exhausted(stub):
    huge = "x" * (5 * 1024 * 1024)
    request = rules_pb2.ApplyMoveRequest(game="tic_tac_toe", state=START, seat=0, move=huge)
    with pytest.raises(grpc.RpcError) as e:
        stub.ApplyMove(request, timeout=10)
    assert e.value.code() == grpc.StatusCode.RESOURCE_EXHAUSTED


@FAST
@given(options=st.one_of(st.text(max_size=40), json_values.map(json.dumps)))
def test_garbage_options(stub, options):
    request = rules_pb2.NewGameRequest(game="tic_tac_toe", players=2, options=options)
    try:
        codec_for(TTT).decode_options(options)
    except EngineError:
        _fails(stub.NewGame, request, grpc.StatusCode.INVALID_ARGUMENT, "malformed_options")
    else:
        assert stub.NewGame(request, timeout=5).status.awaiting == [0]


# ------------------------------------------------------------ games, seats
@FAST
@given(name=st.text(min_size=1, max_size=30).filter(lambda n: n not in default_registry()))
def test_unknown_games_are_not_found(stub, name):
    calls = [
        *_every_state_call(stub, name, START),
        (stub.NewGame, rules_pb2.NewGameRequest(game=name, players=2)),
    ]
    for rpc, request in calls:
        info = _fails(rpc, request, grpc.StatusCode.NOT_FOUND, "unknown_game")
        assert info.metadata["game"] == name


@pytest.mark.parametrize("state", [b"", b"\x00not a state"])
def test_an_unknown_game_is_not_found_whatever_its_state(stub, state):
    """The game named is looked up before the state is read: a client that
    names a game we do not have learns that, not that its bytes are bad."""
    for rpc, request in _every_state_call(stub, "chess", state):
        _fails(rpc, request, grpc.StatusCode.NOT_FOUND, "unknown_game")


@FAST
@given(seat=st.integers(2, 2**32 - 1))
def test_unknown_seats_are_invalid_argument(stub, seat):
    for rpc, request in _every_state_call(stub, "tic_tac_toe", START, seat):
        if isinstance(request, rules_pb2.OutcomeRequest) or (
            isinstance(request, rules_pb2.ViewRequest) and not request.HasField("seat")
        ):
            continue
        _fails(rpc, request, grpc.StatusCode.INVALID_ARGUMENT, "unknown_seat")


@pytest.mark.parametrize("players", [0, 1, 3, 1000])
def test_bad_player_counts(stub, players):
    request = rules_pb2.NewGameRequest(game="tic_tac_toe", players=players)
    info = _fails(stub.NewGame, request, grpc.StatusCode.INVALID_ARGUMENT, "bad_player_count")
    assert info.metadata["min_players"] == "2"


def test_oversized_entropy(stub):
    request = rules_pb2.NewGameRequest(game="tic_tac_toe", players=2, entropy=b"e" * 2000)
    _fails(stub.NewGame, request, grpc.StatusCode.INVALID_ARGUMENT, "entropy_too_large")


# ------------------------------------------------------------ hostile JSON
DEEP = "[" * 1000 + "]" * 1000
DEEP_OBJECT = '{"a":' * 1000 + "1" + "}" * 1000


def test_deeply_nested_json_is_invalid_argument_everywhere(stub):
    for deep in (DEEP, DEEP_OBJECT, '{"type":"place_mark","cell":' + DEEP + "}"):
        move = rules_pb2.ApplyMoveRequest(game="tic_tac_toe", state=START, seat=0, move=deep)
        info = _fails(stub.ApplyMove, move, grpc.StatusCode.INVALID_ARGUMENT, "json_too_deep")
        assert info.metadata["field"] == "move"
        options = rules_pb2.NewGameRequest(game="tic_tac_toe", players=2, options=deep)
        _fails(stub.NewGame, options, grpc.StatusCode.INVALID_ARGUMENT, "json_too_deep")
        fold = rules_pb2.FoldRequest(game="tic_tac_toe", state=START, events=[deep])
        _fails(stub.Fold, fold, grpc.StatusCode.INVALID_ARGUMENT, "json_too_deep")


def test_nesting_at_the_limit_gets_the_engines_answer(stub):
    from services.common.codecs import MAX_JSON_DEPTH

    shallow = "[" * MAX_JSON_DEPTH + "]" * MAX_JSON_DEPTH
    move = rules_pb2.ApplyMoveRequest(game="tic_tac_toe", state=START, seat=0, move=shallow)
    _fails(stub.ApplyMove, move, grpc.StatusCode.INVALID_ARGUMENT, "malformed_move")
    # brackets inside strings are not nesting
    text = json.dumps({"type": "place_mark", "cell": 4, "note": "[" * 5000})
    move = rules_pb2.ApplyMoveRequest(game="tic_tac_toe", state=START, seat=0, move=text)
    assert stub.ApplyMove(move, timeout=5).status.awaiting == [1]


def test_long_strings_are_refused_and_never_echoed(stub):
    long_name = "g" * 100_000
    for rpc, request in (
        (stub.NewGame, rules_pb2.NewGameRequest(game=long_name, players=2)),
        (stub.ApplyMove, rules_pb2.ApplyMoveRequest(game=long_name, state=START, move="{}")),
        (stub.Fold, rules_pb2.FoldRequest(game="tic_tac_toe", events=["x" * 2_000_000])),
    ):
        with pytest.raises(grpc.RpcError) as e:
            rpc(request, timeout=5)
        assert e.value.code() == grpc.StatusCode.INVALID_ARGUMENT, e.value.details()
        assert error_info(e.value).reason == "field_too_long"
        assert len(e.value.details()) <= 512


def test_a_state_no_game_reaches_is_invalid_argument_not_internal(stub):
    short = msgspec.structs.replace(_ttt_state(), board=(-1, -1, -1))  # 3 cells, not 9
    data = encode_state(TTT, short)
    move = '{"type": "place_mark", "cell": 7}'
    for rpc, request in (
        (stub.ApplyMove, rules_pb2.ApplyMoveRequest(state=data, seat=0, move=move)),
        (stub.LegalMoves, rules_pb2.LegalMovesRequest(state=data, seat=0)),
    ):
        info = _fails(rpc, request, grpc.StatusCode.INVALID_ARGUMENT, "unprocessable_input")
        assert info.metadata["error"] == "IndexError"


@pytest.mark.parametrize(
    "raw", [b"\xff\xff\xff", b"\x0a\x03\xff\xfe\xfd", b"\x0a\x80", b"\x12\x05abc"]
)
def test_bytes_that_are_no_request_are_invalid_argument(channel, raw):
    call = channel.unary_unary(
        "/tabletop.rules.v1.RulesService/NewGame",
        request_serializer=lambda b: b,
        response_deserializer=lambda b: b,
    )
    with pytest.raises(grpc.RpcError) as e:
        call(raw, timeout=5)
    assert e.value.code() == grpc.StatusCode.INVALID_ARGUMENT, e.value.details()
    assert error_info(e.value).reason == "malformed_request"
