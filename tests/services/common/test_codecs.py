import msgspec
import pytest
from hypothesis import given
from hypothesis import strategies as st

from engine_core.decider import start
from engine_core.games.tic_tac_toe import GAME as TTT
from services.common.codecs import decode_state, encode_state, peek_state_game
from services.common.errors import FailedPrecondition, InvalidArgument


class _Other(msgspec.Struct):
    game: str
    rules_version: str
    state: msgspec.Raw


def _retag(data: bytes, **changes: str) -> bytes:
    env = msgspec.msgpack.decode(data, type=_Other)
    return msgspec.msgpack.encode(msgspec.structs.replace(env, **changes))


def _state():
    state, _ = start(TTT, 2, None, b"seed")
    return state


def test_state_round_trips_through_the_envelope():
    state = _state()
    data = encode_state(TTT, state)
    assert decode_state(TTT, data) == state
    assert peek_state_game(data) == ("tic_tac_toe", TTT.rules_version)
    assert msgspec.msgpack.decode(data)["game"] == "tic_tac_toe"


def test_state_of_another_game_is_refused():
    data = _retag(encode_state(TTT, _state()), game="dice_forge")
    with pytest.raises(InvalidArgument) as e:
        decode_state(TTT, data)
    assert e.value.reason == "state_of_another_game"
    assert e.value.metadata == {"expected": "tic_tac_toe", "actual": "dice_forge"}


def test_state_of_other_rules_is_refused():
    data = _retag(encode_state(TTT, _state()), rules_version="0-old")
    with pytest.raises(FailedPrecondition) as e:
        decode_state(TTT, data)
    assert e.value.reason == "rules_version_mismatch"


def test_well_tagged_envelope_with_a_foreign_state_is_corrupt():
    env = _Other("tic_tac_toe", TTT.rules_version, msgspec.Raw(msgspec.msgpack.encode({"x": 1})))
    with pytest.raises(InvalidArgument) as e:
        decode_state(TTT, msgspec.msgpack.encode(env))
    assert e.value.reason == "corrupt_state"


@given(st.binary(max_size=200))
def test_random_bytes_are_corrupt_not_a_crash(data):
    with pytest.raises(InvalidArgument) as e:
        decode_state(TTT, data)
    assert e.value.reason == "corrupt_state"
