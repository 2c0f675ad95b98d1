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
Every JSON text from outside passes ``check_json`` first: at most
``MAX_JSON_DEPTH`` levels of arrays and objects (``InvalidArgument
("json_too_deep")``), so a decoder never recurses into a hostile input, and at
most the caller's byte limit (``InvalidArgument("json_too_large")``).
"""

from __future__ import annotations

import re
from itertools import accumulate
from typing import Any

import msgspec

from engine_core.decider import Codec, Game
from services.common.errors import FailedPrecondition, InvalidArgument

__all__ = [
    "MAX_JSON_DEPTH",
    "check_json",
    "codec_for",
    "decode_events",
    "decode_move",
    "decode_options",
    "decode_state",
    "encode_state",
    "envelope_of",
    "json_depth",
    "peek_state_game",
    "state_from",
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


def envelope_of(data: bytes) -> _Envelope:
    """The envelope of state bytes: its game, its rules version and the
    state's own bytes (``state_from`` decodes them); INVALID_ARGUMENT
    ``corrupt_state`` if ``data`` is none."""
    if not data:
        raise InvalidArgument("corrupt_state", "the state is empty")
    try:
        return _envelope_decoder.decode(data)
    except (msgspec.DecodeError, msgspec.ValidationError) as e:
        raise InvalidArgument("corrupt_state", f"the state bytes are not a state: {e}") from None


def peek_state_game(data: bytes) -> tuple[str, str]:
    """``(game id, rules version)`` written in an envelope, without decoding the state."""
    env = envelope_of(data)
    return env.game, env.rules_version


def decode_state(game: Game, data: bytes) -> Any:
    """The state in ``data``; refuses another game's or another rules version's."""
    return state_from(game, envelope_of(data))


def state_from(game: Game, env: _Envelope) -> Any:
    """The state in an envelope (``envelope_of``), as ``decode_state``."""
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


MAX_JSON_DEPTH = 32
"""Deepest nesting of arrays and objects accepted in a JSON text from outside.
No game's move, event or options come near it; a decoder recursing into 1,000
levels would fail with ``RecursionError``."""

_JSON_STRING = re.compile(rb'"(?:[^"\\]|\\.)*"?', re.DOTALL)
_NOT_BRACKETS = bytes(b for b in range(256) if b not in b"[]{}")
_STEP = {ord("["): 1, ord("{"): 1, ord("]"): -1, ord("}"): -1}


def json_depth(data: bytes | str) -> int:
    """The nesting of ``[`` and ``{`` in a JSON text (strings skipped), exact
    when above ``MAX_JSON_DEPTH``; at or below it, an upper bound.

    Cheap: a text with no more opening brackets than the limit is not scanned
    further; the others are scanned by C loops (regex, translate, accumulate)."""
    raw = data.encode() if isinstance(data, str) else bytes(data)
    opening = raw.count(b"[") + raw.count(b"{")
    if opening <= MAX_JSON_DEPTH:
        return opening
    brackets = _JSON_STRING.sub(b"", raw).translate(None, _NOT_BRACKETS)
    return max(accumulate(map(_STEP.__getitem__, brackets)), default=0)


def check_json(what: str, data: bytes | str, max_bytes: int | None = None) -> bytes | str:
    """``data`` if it is a JSON text small and shallow enough to decode safely;
    ``InvalidArgument`` (``json_too_large`` / ``json_too_deep``) otherwise."""
    if max_bytes is not None:
        size = len(data)  # characters first (cheap), then UTF-8 bytes if needed
        if isinstance(data, str) and max_bytes >= size > max_bytes // 4:
            size = len(data.encode())
        if size > max_bytes:
            raise InvalidArgument(
                "json_too_large",
                f"the {what} JSON exceeds {max_bytes} bytes",
                field=what,
                limit=str(max_bytes),
            )
    if json_depth(data) > MAX_JSON_DEPTH:
        raise InvalidArgument(
            "json_too_deep",
            f"the {what} JSON nests deeper than {MAX_JSON_DEPTH} levels",
            field=what,
            limit=str(MAX_JSON_DEPTH),
        )
    return data


def decode_move(game: Game, data: bytes | str) -> Any:
    """A move from client JSON (``MalformedMove`` -> INVALID_ARGUMENT if bad)."""
    return codec_for(game).decode_move(check_json("move", data))


def decode_options(game: Game, data: bytes | str) -> Any:
    """Options from client JSON; empty means the defaults."""
    return codec_for(game).decode_options(check_json("options", data))


def decode_events(game: Game, texts: Any) -> list[Any]:
    """Events from JSON texts; ``InvalidArgument("malformed_event", index=i)``
    for the first that is not an event of ``game``."""
    decoder = codec_for(game).event_json
    events = []
    for i, text in enumerate(texts):
        try:
            events.append(decoder.decode(check_json("event", text)))
        except (msgspec.DecodeError, msgspec.ValidationError) as e:
            raise InvalidArgument(
                "malformed_event",
                f"event {i} is not an event of {game.name}: {e}",
                index=str(i),
            ) from None
    return events


def to_json(value: Any) -> bytes:
    """JSON of any msgspec value (moves, events, views, options)."""
    return _json.encode(value)
