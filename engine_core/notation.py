"""The short text form of a move, for logs, golden files and the CLI.

``PlaceMark(cell=4)`` is written ``place_mark cell=4``. Values are JSON, except
that a string made only of ``[A-Za-z0-9_.:-]`` that does not read as another
JSON value is written bare. ``parse_move(game.Move, text)`` inverts
``move_text`` exactly (a property test pins the round trip).
"""

from __future__ import annotations

import json
import re
from typing import Any

import msgspec

from engine_core.errors import MalformedMove

_BARE = re.compile(r"^[A-Za-z_][A-Za-z0-9_.:-]*$")
_JSON_WORDS = {"true", "false", "null"}
_encode = msgspec.json.Encoder()


def _value_text(value: Any) -> str:
    if isinstance(value, str) and _BARE.match(value) and value not in _JSON_WORDS:
        return value
    return _encode.encode(value).decode()


def move_text(move: msgspec.Struct) -> str:
    """``tag field=value ...`` with the fields in declaration order."""
    data = msgspec.to_builtins(move)
    tag = data.pop("type")
    parts = [tag]
    parts.extend(f"{k}={_value_text(v)}" for k, v in data.items())
    return " ".join(parts)


_decoder = json.JSONDecoder()


def parse_move(move_type: Any, text: str) -> Any:
    """The move written by ``move_text``; ``MalformedMove`` if it is not one."""
    text = text.strip()
    if not text:
        raise MalformedMove(message="empty move text")
    tag, _, rest = text.partition(" ")
    data: dict[str, Any] = {"type": tag}
    i, n = 0, len(rest)
    while i < n:
        if rest[i] == " ":
            i += 1
            continue
        eq = rest.find("=", i)
        if eq < 0:
            raise MalformedMove(message=f"expected key=value at {rest[i:]!r}")
        key = rest[i:eq]
        j = eq + 1
        space = rest.find(" ", j)
        token = rest[j : n if space < 0 else space]
        if token in _JSON_WORDS or (token and token[0] in '"[{-0123456789'):
            try:
                value, end = _decoder.raw_decode(rest, j)
            except json.JSONDecodeError as e:
                raise MalformedMove(message=f"bad value for {key}: {e}") from None
        else:
            end, value = j + len(token), token
        data[key] = value
        i = end
    try:
        return msgspec.convert(data, move_type)
    except msgspec.ValidationError as e:
        raise MalformedMove(message=str(e)) from None
