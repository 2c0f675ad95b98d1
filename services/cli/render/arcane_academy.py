"""Arcane Academy: each slate as a 4x3 grid of actions and connectors, Will,
Shards and prestige, the market and the assignments by name with cost,
prestige and effect. Components and cards come from
``engine_core.games.arcane_academy.data``."""

from __future__ import annotations

import re
from typing import Any

from engine_core.games.arcane_academy import data as D
from services.cli.render.base import Renderer, Section, listing

_CARD = re.compile(r"^[SI]\d\d[ab]$")
_COMPONENT = re.compile(r"^(T\d\d|K\d)$")
ACTION = {
    D.SHARD: "collect Shards",
    D.WILL: "gain Will",
    D.ADD_TILE: "add a tile",
    D.USE_ITEM: "use an item",
    D.COMPLETE: "complete an assignment",
}


ABBREV = {
    "Complete Assignment": "assign",
    "Use Item": "item",
    "Add Tile": "tile",
    "Chaos": "chaos",
    **{f"Shard {n}": f"{n}sh" for n in range(1, 4)},
    **{f"Will {n}": f"{n}wi" for n in range(1, 4)},
}
SHORT = re.compile("|".join(sorted(map(re.escape, ABBREV), key=len, reverse=True)))


def card_text(card: str) -> str:
    """``Fireball (Spell, 5 Will, 3 PP)`` with the ability when it has one."""
    d = D.design(card)
    if d not in D.NAME:
        return card
    if D.KIND[d] == D.SPELL:
        effect = next(s[4] for s in D.SPELLS if s[0] == d)
        cost = f"Spell, {D.COST[d]} Will"
    else:
        effect = next(i[5] for i in D.ITEMS if i[0] == d)
        cost = f"Item, {D.COST[d]} Shards"
    effect = "" if effect in ("None.", "No ability.") else f": {effect.rstrip('.')}"
    return f"{D.NAME[d]} ({cost}, {D.PP[d]} PP{effect})"


def component_text(component: str) -> str:
    return D.ACTIONS_TEXT.get(component, component)


class ArcaneAcademyRenderer(Renderer):
    def value(self, name: str, value: Any) -> str:
        if isinstance(value, str) and _CARD.match(value):
            return card_text(value)
        if isinstance(value, str) and _COMPONENT.match(value):
            return f"tile [{component_text(value)}]"
        if name == "action" and value in ACTION:
            return ACTION[value]
        return super().value(name, value)

    def space(self, view: Any, x: int, y: int) -> str:
        if view is None or self.me is None:
            return f"({x},{y})"
        sp = view.players[self.me].slate[y * D.COLS + x]
        top = sp.stack[-1] if sp.stack else ""
        return f"({x},{y})" + (f" [{component_text(top)}]" if top else "")

    def part(self, view: Any, part: int) -> str:
        cast = view.cast if view is not None else None
        if cast is None or not cast.component:
            return f"part {part + 1}"
        parts = D.PARTS.get(cast.component, ())
        if part < len(parts):
            return " / ".join(f"{ACTION[a]}{f' {n}' if n else ''}" for a, n in parts[part])
        return f"part {part + 1}"

    def move_words(self, move: Any, view: Any) -> str:
        t, m = self.tag(move), move
        if t == "cast":
            return f"cast from {self.space(view, m.x, m.y)}"
        if t == "rest":
            return "rest" + (f", discarding {card_text(m.discard)}" if m.discard else "")
        if t == "collect_shards":
            return f"collect Shards ({self.part(view, m.part)})"
        if t == "gain_will":
            return f"gain Will ({self.part(view, m.part)})"
        if t == "take_tile":
            tile = view.market[m.slot] if view is not None and m.slot < len(view.market) else None
            return f"take tile [{component_text(tile or '?')}] from the market"
        if t == "use_item":
            return f"use {card_text(m.item)}"
        if t == "complete_assignment":
            return f"complete {card_text(m.card)}"
        if t == "skip_part":
            return f"skip {self.part(view, m.part)}"
        if t == "remove_token":
            return f"remove the Exhaustion token at {self.space(view, m.x, m.y)}"
        if t == "decline_effect":
            return "decline the effect"
        if t == "resolve_linked":
            return f"resolve the linked tile at {self.space(view, m.x, m.y)}"
        if t == "finish_cast":
            return "finish casting"
        if t == "place_tile":
            return (
                f"place [{component_text(m.tile)}] at ({m.x},{m.y}), "
                f"turned {m.rotation * 90} degrees"
            )
        return super().move_words(move, view)

    def event_words(self, event: Any, view: Any) -> str | None:
        t = self.tag(event)
        if t in (
            "bag_shuffled",
            "deck_shuffled",
            "part_performed",
            "tile_resolved",
            "effect_ended",
            "tile_drawn",
            "card_revealed",
        ):
            return None
        if t == "turn_started":
            return f"── round {event.round}: {self.seat(event.seat)} ({event.kind} turn) ──"
        if t == "game_ended":
            scores = ", ".join(f"{self.seat(i)} {p} PP" for i, p in enumerate(event.prestige))
            winners = [self.seat(i) for i, r in enumerate(event.ranks) if r == 1]
            return f"game over: {scores}; {' and '.join(winners)} first"
        return super().event_words(event, view)

    def round(self, view: Any) -> int | None:
        return view.round

    def standing(self, view: Any) -> str:
        return ", ".join(
            f"{self.seat(p.seat)} {p.prestige} PP ({p.completed} done)" for p in view.players
        )

    def slate(self, p: Any) -> list[str]:
        cells = []
        for sp in p.slate:
            if not sp.stack:
                cells.append("·")
                continue
            text = SHORT.sub(lambda m: ABBREV[m.group(0)], component_text(sp.stack[-1]))
            text = text.replace(" + ", "+").replace(" / ", "/")
            cells.append(f"{text} {sp.connectors.replace(',', '')}{'*' if sp.exhausted else ''}")
        width = max(len(c) for c in cells)
        return [
            "  ".join(c.ljust(width) for c in cells[r * D.COLS : (r + 1) * D.COLS]).rstrip()
            for r in range(D.ROWS)
        ]

    def sections(self, view: Any) -> list[Section]:
        v = view
        head = (
            f"Round {v.round}: {self.seat(v.current)} ({v.turn_kind} turn, {v.phase}); "
            f"Score: {self.standing(v)}"
        )
        out = [Section("", (head,))]
        order = [p.seat for p in v.players]
        if self.me is not None:
            order = order[self.me :] + order[: self.me]
        for seat in order:
            p = v.players[seat]
            lines = [
                f"Will {p.will}/{D.WILL_CAP}, Shards {p.shards}, prestige {p.prestige}, "
                f"hand {p.hand_count}",
                *self.slate(p),
                "(sh Shards, wi Will, * exhausted, NESW connectors)",
            ]
            if p.spells or p.items:
                lines.append(f"completed: {listing(card_text(c) for c in (*p.spells, *p.items))}")
            out.append(Section("you" if seat == self.me else self.seat(seat), tuple(lines)))
            if p.hand is not None:
                out.append(
                    Section("your hand", tuple(f"  {card_text(c)}" for c in p.hand) or ("  -",))
                )
        out.append(
            Section(
                "market",
                (
                    "tiles: " + listing(f"[{component_text(t)}]" for t in v.market if t),
                    "assignments: " + listing(card_text(c) for c in v.public if c),
                ),
            )
        )
        return out
