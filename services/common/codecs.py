"""Wire codecs shared by the services.

States travel between services as opaque bytes: a msgpack map
``{"game": id, "rules_version": v, "state": <the game's State as msgpack>}``.
Decoding checks the tag before it reads the state, so a state of another game
or of other rules is refused, never misread:

* bytes that are not such an envelope, or whose state does not decode as the
  game's ``State`` -> ``InvalidArgument("corrupt_state")``;
* a state of another game -> ``InvalidArgument("state_of_another_game")``;
* a state of the same game under another rules version ->
  ``FailedPrecondition("rules_version_mismatch")`` (the bytes are fine, this
  replica's rules are not the ones that made them: e.g. during a rolling deploy).

Moves, events, options and views are JSON (msgspec) that clients read directly.
"""

from __future__ import annotations

from typing import Any

import msgspec

from engine_core.decider import Codec, Game
from services.common.errors import FailedPrecondition, InvalidArgument

__all__ = [
    "codec_for",
    "decode_move",
    "decode_options",
    "decode_state",
    "encode_state",
    "peek_state_game",
    "to_json",
]


class _Envelope(msgspec.Struct, frozen=True):
    game: str
    rules_version: str
    state: msgspec.Raw


_envelope_decoder = msgspec.msgpack.Decoder(_Envelope)
_msgpack = msgspec.msgpack.Encoder()
_json = msgspec.json.Encoder()
_codecs: dict[tuple[str, str], Codec] = {}


def codec_for(game: Game) -> Codec:
    """The (cached) JSON/msgpack codec of a game's types."""
    key = (game.name, game.rules_version)
    codec = _codecs.get(key)
    if codec is None:
        codec = Codec(game.Move, game.Event, game.State, game.View, game.Options)
        _codecs[key] = codec
    return codec


def encode_state(game: Game, state: Any) -> bytes:
    """The envelope bytes of ``state``, tagged with the game and rules version."""
    return _msgpack.encode(
        _Envelope(game.name, game.rules_version, msgspec.Raw(_msgpack.encode(state)))
    )


def _envelope(data: bytes) -> _Envelope:
    if not data:
        raise InvalidArgument("corrupt_state", "the state is empty")
    try:
        return _envelope_decoder.decode(data)
    except (msgspec.DecodeError, msgspec.ValidationError) as e:
        raise InvalidArgument("corrupt_state", f"the state bytes are not a state: {e}") from None


def peek_state_game(data: bytes) -> tuple[str, str]:
    """``(game id, rules version)`` written in an envelope, without decoding the state."""
    env = _envelope(data)
    return env.game, env.rules_version


def decode_state(game: Game, data: bytes) -> Any:
    """The state in ``data``; refuses another game's or another rules version's."""
    env = _envelope(data)
    if env.game != game.name:
        raise InvalidArgument(
            "state_of_another_game",
            f"the state belongs to {env.game!r}, not {game.name!r}",
            expected=game.name,
            actual=env.game,
        )
    if env.rules_version != game.rules_version:
        raise FailedPrecondition(
            "rules_version_mismatch",
            f"the state was made by {game.name} rules version {env.rules_version!r}; "
            f"this server runs version {game.rules_version!r}",
            expected=game.rules_version,
            actual=env.rules_version,
        )
    try:
        return codec_for(game).state_msgpack.decode(env.state)
    except (msgspec.DecodeError, msgspec.ValidationError) as e:
        raise InvalidArgument(
            "corrupt_state", f"the state does not decode as a {game.name} state: {e}"
        ) from None


def decode_move(game: Game, data: bytes | str) -> Any:
    """A move from client JSON (``MalformedMove`` -> INVALID_ARGUMENT if bad)."""
    return codec_for(game).decode_move(data)


def decode_options(game: Game, data: bytes | str) -> Any:
    """Options from client JSON; empty means the defaults."""
    return codec_for(game).decode_options(data)


def to_json(value: Any) -> bytes:
    """JSON of any msgspec value (moves, events, views, options)."""
    return _json.encode(value)
