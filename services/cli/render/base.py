"""What every game's renderer shares: decoding, sections, the diff between
two views, and words for moves and events with empty fields left out.

A renderer turns a seat's view into ``Section``s (a title and a few short
lines); the CLI prints them in a panel, and between two commits only the
sections whose text changed. Moves and events become one line of words.
A game's renderer overrides ``sections``, ``move_words``, ``event_words``
and the small naming hooks; what it does not override reads generically
(the tag in words and the non-empty fields), so a new game is readable on
day one and never raises.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, ClassVar

import msgspec

from engine_core.decider import Game


@dataclass(frozen=True)
class Section:
    title: str
    lines: tuple[str, ...]

    @property
    def text(self) -> str:
        return "\n".join(self.lines)


def words(tag: str) -> str:
    """``play_card`` -> ``play card``."""
    return tag.replace("_", " ")


def is_empty(value: Any) -> bool:
    return value in ("", None, -1) or (isinstance(value, list | tuple | dict) and not value)


def plural(n: int, one: str, many: str | None = None) -> str:
    return f"{n} {one if n == 1 else (many or one + 's')}"


def listing(items: Iterable[str], empty: str = "none") -> str:
    items = [i for i in items if i]
    return ", ".join(items) if items else empty


@dataclass
class Renderer:
    """The generic renderer; subclasses are per game."""

    game: Game
    seat_names: dict[int, str] = field(default_factory=dict)
    me: int | None = None

    # ---------------------------------------------------------- decoding
    def view(self, view_json: str | bytes) -> Any:
        """The typed view (a dict if it does not decode as the game's view)."""
        if not view_json:
            return None
        try:
            return self.game.codec().view_json.decode(view_json)
        except (msgspec.DecodeError, msgspec.ValidationError):
            return json.loads(view_json)

    def event(self, event_json: str | bytes) -> Any:
        try:
            return self.game.codec().event_json.decode(event_json)
        except (msgspec.DecodeError, msgspec.ValidationError):
            return json.loads(event_json)

    def move(self, move_json: str | bytes) -> Any:
        try:
            return self.game.codec().move_json.decode(move_json)
        except (msgspec.DecodeError, msgspec.ValidationError):
            return json.loads(move_json)

    # ------------------------------------------------------------- names
    def seat(self, seat: int | None) -> str:
        """``you`` for our seat, the seat's label otherwise."""
        if seat is None:
            return "the game"
        if seat == self.me:
            return "you"
        return self.seat_names.get(seat, f"seat {seat}")

    def Seat(self, seat: int | None) -> str:
        s = self.seat(seat)
        return s[:1].upper() + s[1:]

    def value(self, name: str, value: Any) -> str:
        """A field's value in words (games name their cards, faces, places)."""
        if isinstance(value, bool):
            return "yes" if value else "no"
        if isinstance(value, list | tuple):
            return listing((self.value(name, v) for v in value), empty="none")
        if isinstance(value, msgspec.Struct):
            return self.fields_text(msgspec.to_builtins(value))
        if isinstance(value, dict):
            return self.fields_text(value)
        return str(value)

    def fields_text(self, data: Mapping[str, Any], skip: Sequence[str] = ()) -> str:
        parts = [
            f"{words(k)} {self.value(k, v)}"
            for k, v in data.items()
            if k != "type" and k not in skip and not is_empty(v)
        ]
        return ", ".join(parts)

    # ----------------------------------------------------- moves, events
    def tag(self, obj: Any) -> str:
        if isinstance(obj, dict):
            return str(obj.get("type", "?"))
        return obj.__struct_config__.tag if isinstance(obj, msgspec.Struct) else type(obj).__name__

    def data(self, obj: Any) -> dict[str, Any]:
        return dict(obj) if isinstance(obj, dict) else msgspec.structs.asdict(obj)

    def move_words(self, move: Any, view: Any) -> str:
        """A legal move as a menu line (the generic form: tag and fields)."""
        rest = self.fields_text(self.data(move))
        return words(self.tag(move)) + (f": {rest}" if rest else "")

    def event_words(self, event: Any, view: Any) -> str | None:
        """An event as a line of words, or None for bookkeeping not worth a line."""
        data = self.data(event)
        if self.tag(event) == "game_ended" and isinstance(data.get("ranks"), list | tuple):
            first = [self.seat(i) for i, r in enumerate(data["ranks"]) if r == 1]
            how = words(str(data.get("reason", "")))
            if len(first) == len(data["ranks"]):
                return f"game over ({how}): a draw"
            return f"game over ({how}): {' and '.join(first)} first"
        who = data.pop("seat", None)
        lead = f"{self.Seat(who)}: " if isinstance(who, int) else ""
        rest = self.fields_text(data)
        return lead + words(self.tag(event)) + (f" ({rest})" if rest else "")

    def played_words(self, seat: int | None, move: Any, view: Any) -> str:
        """What a seat did, for the log of the match (``Seat 1 played ...``)."""
        return f"{self.Seat(seat)}: {self.move_words(move, view)}"

    # ------------------------------------------------------------- views
    def sections(self, view: Any) -> list[Section]:
        """The view in sections; the generic form: one per top-level field."""
        data = view if isinstance(view, dict) else msgspec.to_builtins(view)
        out = []
        for k, v in data.items():
            if is_empty(v):
                continue
            if isinstance(v, list) and v and isinstance(v[0], dict):
                lines = tuple(self.fields_text(item) or "-" for item in v)
            else:
                lines = (self.value(k, v),)
            out.append(Section(words(k), lines))
        return out

    ROUND: ClassVar[str] = "round"
    """What the game calls the unit of ``round`` (a Dwarves Duel turn)."""

    def round(self, view: Any) -> int | None:
        """The round (or turn) a view is in, for one summary line per round in auto play."""
        return None

    def standing(self, view: Any) -> str:
        """The scores or the race in one line."""
        return ""

    OPTIONS: ClassVar[Mapping[str, str]] = {}
    """What each of the game's options means, in words."""

    def options(self) -> list[tuple[str, str]]:
        """The game's options, ``(name, meaning)``, for ``tabletop games``."""
        schema = msgspec.json.schema(self.game.Options)
        return option_lines(schema, self.option_meanings())

    def option_meanings(self) -> Mapping[str, str]:
        return self.OPTIONS


def changed(before: Sequence[Section], after: Sequence[Section]) -> list[Section]:
    """The sections of ``after`` whose title is new or whose text changed."""
    old = {s.title: s.text for s in before}
    return [s for s in after if old.get(s.title) != s.text]


def option_lines(schema: Mapping[str, Any], described: Mapping[str, str]) -> list[tuple[str, str]]:
    """A game's options (its JSON schema) as ``(name, "meaning; values, default")``;
    ``described`` gives the meaning of the fields a game explains in words."""
    defs = schema.get("$defs", {})
    ref = schema.get("$ref", "")
    body = defs.get(ref.rsplit("/", 1)[-1], schema) if ref else schema
    out = []
    for name, prop in body.get("properties", {}).items():
        values = prop.get("enum") or next(
            (p.get("enum") for p in prop.get("anyOf", ()) if p.get("enum")), None
        )
        kinds = values and " | ".join(json.dumps(v) for v in values)
        if not kinds:
            types = [p.get("type") for p in prop.get("anyOf", [prop]) if p.get("type")]
            kinds = " | ".join(str(t) for t in types) or "value"
        default = json.dumps(prop.get("default")) if "default" in prop else "required"
        meaning = described.get(name, "")
        out.append((name, f"{meaning + '; ' if meaning else ''}{kinds}, default {default}"))
    return out
