"""D&D Assault of the Giants: each lord's race, Ordning points, resources and
armies by region; units, regions, events and spells by name. Tables come from
``engine_core.games.assault_of_the_giants.data``."""

from __future__ import annotations

from collections import Counter
from typing import Any

from engine_core.games.assault_of_the_giants import data as D
from services.cli.render.base import Renderer, Section, listing

REGION_FIELDS = {"to", "region", "target", "from_region", "to_region", "lyn_to", "island"}
UNIT_FIELDS = {"unit", "remove", "slayer"}


def unit_name(i: int) -> str:
    if not 0 <= i < D.N_UNITS:
        return str(i)
    u = D.UNITS[i]
    if u.kind == "leader":
        return D.LEADER_NAME.get(u.race, "leader")
    return D.UNIT_IDS[i].replace("_", " ")


def region_name(i: int) -> str:
    return D.REGIONS[i] if 0 <= i < len(D.REGIONS) else str(i)


def resource_name(kind: str) -> str:
    return kind.replace("rune_", "rune ").replace("_", " ")


class AssaultRenderer(Renderer):
    def value(self, name: str, value: Any) -> str:
        if isinstance(value, bool):
            return super().value(name, value)
        if isinstance(value, str) and value in D.RESOURCE_KIND:
            return resource_name(D.RESOURCE_KIND[value])
        if isinstance(value, str) and value in D.SPELL_KIND:
            return D.SPELL_KIND[value].replace("_", " ")
        if name in REGION_FIELDS and isinstance(value, int):
            return region_name(value)
        if name in UNIT_FIELDS and isinstance(value, int):
            return unit_name(value)
        if name in ("units", "attackers", "casualties") and isinstance(value, list | tuple):
            return listing(unit_name(u) for u in value if isinstance(u, int))
        if name in ("partner", "seat", "by", "defender", "attacker") and isinstance(value, int):
            return self.seat(value)
        if name == "event" and isinstance(value, str):
            return f"{D.EVENT_NAME.get(value, value)} ({D.EVENT_OP.get(value, 0)} OP)"
        if name == "spell" and isinstance(value, str):
            return D.SPELL_KIND.get(value, value).replace("_", " ")
        if name in ("card", "payment", "take") and isinstance(value, str):
            return resource_name(D.RESOURCE_KIND.get(value, value))
        return super().value(name, value)

    def move_words(self, move: Any, view: Any) -> str:
        t, m = self.tag(move), move
        if t == "play_command":
            return f"command: {m.command}"
        if t == "maneuver":
            return f"move {unit_name(m.unit)} to {region_name(m.to)}"
        if t == "declare_battle":
            return f"attack {region_name(m.target)}"
        if t == "recruit":
            where = f" (returning {unit_name(m.remove)})" if m.remove >= 0 else ""
            return f"recruit a {m.kind}{where}"
        if t == "claim_event":
            return (
                f"claim {D.EVENT_NAME.get(m.event, m.event)} ({D.EVENT_OP.get(m.event, 0)} OP), "
                f"paying {resource_name(m.payment)}"
                + (f", returning {unit_name(m.remove)}" if m.remove >= 0 else "")
            )
        return super().move_words(move, view)

    def event_words(self, event: Any, view: Any) -> str | None:
        t = self.tag(event)
        if t in ("dice_rolled_detail", "agenda_changed"):
            return None
        if t == "turn_began":
            return f"── round {event.round}: {self.seat(event.seat)} ──"
        return super().event_words(event, view)

    def round(self, view: Any) -> int | None:
        return view.round

    def standing(self, view: Any) -> str:
        return "OP " + ", ".join(
            f"{self.seat(i)} {op}" for i, op in enumerate(view.op[: len(view.seat_races)])
        )

    def sections(self, view: Any) -> list[Section]:
        v = view
        head = (
            f"Round {v.round}: {self.seat(v.active)}, {v.phase}"
            + (f" ({v.command})" if v.command else "")
            + f"; {self.standing(v)}"
        )
        out = [Section("", (head,))]
        for seat, race in enumerate(v.seat_races):
            ri = D.RACE_INDEX[race]
            armies: dict[int, Counter[str]] = {}
            for u in D.RACE_UNITS[ri]:
                loc = v.unit_loc[u]
                if loc >= 0:
                    kind = D.UNITS[u].kind + (" (wounded)" if v.unit_wounded[u] else "")
                    armies.setdefault(loc, Counter())[kind] += 1
            res = Counter(resource_name(D.RESOURCE_KIND.get(r, r)) for r in v.resources[seat])
            lines = [
                f"{race} giants, {D.LEADER_NAME[race]}: {v.op[seat]} OP; resources: "
                + listing(f"{n} {k}" for k, n in res.items()),
                *(
                    f"  {region_name(g)}: " + listing(f"{n} {k}" for k, n in c.items())
                    for g, c in sorted(armies.items())
                ),
            ]
            out.append(Section("you" if seat == self.me else self.seat(seat), tuple(lines)))
        if v.draft:
            out.append(
                Section(
                    "events",
                    tuple(f"{D.EVENT_NAME.get(e, e)} ({D.EVENT_OP.get(e, 0)} OP)" for e in v.draft),
                )
            )
        return out
