"""Bounds on every request, checked once at the edge before any handler runs.

Every string field of every request (nested messages included) is at most
``DEFAULT_STRING_CHARS`` characters (player ids: ``MAX_PLAYER_ID_CHARS``, as a match and a
ticket accept them), except the JSON fields, which may hold
up to ``JSON_STRING_CHARS`` (their byte size, 64 KiB by default, and their
nesting are checked where they are decoded: ``services.common.codecs.check_json``). A repeated
string field holds at most ``DEFAULT_REPEATED`` values (``events`` more).
Beyond that a call fails with ``INVALID_ARGUMENT``:

* ``field_too_long`` (metadata ``field``, ``limit``, and ``index`` in a
  repeated field): a string too long;
* ``too_many_values`` (metadata ``field``, ``limit``): a repeated field too long;
* ``malformed_request``: bytes that are not the request message at all
  (corrupt wire format, a string field that is not UTF-8), which gRPC itself
  would answer with UNKNOWN.

So no id, name or key of unbounded size reaches a store, a log line or an
error message, whatever the RPC (a handler reading a request stream checks
each message with ``check_message``). The server's ``RpcInterceptor``
(``services.common.interceptor``) checks them last, after the guards, inside
its error mapping, so its refusals become rich statuses.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from google.protobuf.descriptor import Descriptor, FieldDescriptor
from google.protobuf.message import Message

from services.common.auth import MAX_PLAYER_ID_CHARS
from services.common.errors import InvalidArgument

__all__ = [
    "DEFAULT_REPEATED",
    "DEFAULT_STRING_CHARS",
    "JSON_STRING_CHARS",
    "Limits",
    "check_message",
    "check_request",
]

DEFAULT_STRING_CHARS = 256
JSON_STRING_CHARS = 1024 * 1024
"""A backstop only: the services refuse JSON over their own (smaller) byte
limits with ``json_too_large`` where they decode it."""
DEFAULT_REPEATED = 64
TOKEN_CHARS = 8 * 1024

_JSON_FIELDS = ("move_json", "options_json", "move", "options", "events")
_PLAYER_FIELDS = ("players", "party", "player", "player_id", "leader")


class Limits:
    """Per-field-name limits: characters of a string, values of a repeated field."""

    def __init__(
        self,
        chars: Mapping[str, int] | None = None,
        counts: Mapping[str, int] | None = None,
        *,
        default_chars: int = DEFAULT_STRING_CHARS,
        default_count: int = DEFAULT_REPEATED,
    ) -> None:
        self.chars = (
            {name: JSON_STRING_CHARS for name in _JSON_FIELDS}
            | {"party_tokens": TOKEN_CHARS}
            | {name: MAX_PLAYER_ID_CHARS for name in _PLAYER_FIELDS}
            | dict(chars or {})
        )
        self.counts = {"events": 1_000_000} | dict(counts or {})
        self.default_chars = default_chars
        self.default_count = default_count
        self.floor = min(
            [*self.chars.values(), *self.counts.values(), default_chars, default_count]
        )
        """No request of at most this many bytes can break a limit: a string
        has no more characters than bytes, and a repeated field takes at least
        a byte per value. ``check_request`` passes such a request (a move on
        a stream, most calls) after one size read, without walking its fields."""
        self._plans: dict[Descriptor, tuple[_Rule, ...]] = {}
        """What ``check_request`` checks of each message type met so far:
        its string and message fields (by number), each with its kind, its
        limit of characters and its limit of values. Numbers, bytes, enums
        and maps are not looked at."""

    def _plan(self, descriptor: Descriptor) -> tuple[_Rule, ...]:
        plan = []
        for field in sorted(descriptor.fields, key=lambda f: f.number):
            chars = self.chars.get(field.name, self.default_chars)
            count = self.counts.get(field.name, self.default_count)
            repeated = _is_repeated(field)
            if field.type == _STRING:
                kind = _STRINGS if repeated else _ONE_STRING
            elif field.type == _MESSAGE and not field.message_type.GetOptions().map_entry:
                kind = _MESSAGES if repeated else _ONE_MESSAGE
            else:
                continue  # numbers, bytes, enums; and maps (no request has one)
            plan.append((field.name, kind, chars, count))
        out = self._plans[descriptor] = tuple(plan)
        return out


_STRING = FieldDescriptor.TYPE_STRING
_MESSAGE = FieldDescriptor.TYPE_MESSAGE
_ONE_STRING, _STRINGS, _ONE_MESSAGE, _MESSAGES = range(4)
_Rule = tuple[str, int, int, int]
"""A field's name, kind, limit of characters and limit of values."""


def _is_repeated(field: FieldDescriptor) -> bool:
    is_repeated = getattr(field, "is_repeated", None)  # newer protobuf
    if is_repeated is not None:
        return bool(is_repeated)
    return field.label == FieldDescriptor.LABEL_REPEATED  # type: ignore[attr-defined]


DEFAULT_LIMITS = Limits()


def check_request(message: Message, limits: Limits = DEFAULT_LIMITS, prefix: str = "") -> None:
    """Raise ``InvalidArgument`` for the first field of ``message`` out of bounds."""
    if not prefix and message.ByteSize() <= limits.floor:
        return
    descriptor = message.DESCRIPTOR
    plan = limits._plans.get(descriptor)
    if plan is None:
        plan = limits._plan(descriptor)
    for name, kind, chars, count in plan:
        if kind == _ONE_STRING:
            if len(getattr(message, name)) > chars:
                raise _too_long(f"{prefix}{name}", chars)
        elif kind == _STRINGS:
            value = getattr(message, name)
            if len(value) > count:
                name = f"{prefix}{name}"
                raise InvalidArgument(
                    "too_many_values",
                    f"{name} holds at most {count} values",
                    field=name,
                    limit=str(count),
                )
            for i, v in enumerate(value):
                if len(v) > chars:
                    raise _too_long(f"{prefix}{name}", chars, index=str(i))
        elif kind == _ONE_MESSAGE:
            if message.HasField(name):
                check_request(getattr(message, name), limits, f"{prefix}{name}.")
        else:
            for sub in getattr(message, name):
                check_request(sub, limits, f"{prefix}{name}.")


def _too_long(name: str, chars: int, **where: str) -> InvalidArgument:
    return InvalidArgument(
        "field_too_long",
        f"{name} is limited to {chars} characters",
        field=name,
        limit=str(chars),
        **where,
    )


class _Undecodable:
    """What the request deserializer gives for bytes that are not the message
    (corrupt wire format, a string that is not UTF-8): the handler then
    answers INVALID_ARGUMENT ``malformed_request`` instead of gRPC's UNKNOWN."""

    def __init__(self, error: Exception) -> None:
        self.error = error


def _safe(deserializer: Callable[[bytes], Any] | None) -> Callable[[bytes], Any] | None:
    if deserializer is None:
        return None

    def deserialize(data: bytes) -> Any:
        try:
            return deserializer(data)
        except Exception as e:  # DecodeError, UnicodeDecodeError, ...
            return _Undecodable(e)

    return deserialize


def check_message(request: Any, limits: Limits = DEFAULT_LIMITS) -> None:
    """What the interceptor checks of a request, for a handler that reads a
    stream of them (the interceptor checks no message of a request stream:
    the handler decides what a bad one ends, ``PlayMatch`` its one move)."""
    _checked(request, limits)


def _checked(request: Any, limits: Limits) -> None:
    if isinstance(request, _Undecodable):
        raise InvalidArgument(
            "malformed_request",
            f"the request is not a valid message: {type(request.error).__name__}",
        )
    if isinstance(request, Message):
        check_request(request, limits)
