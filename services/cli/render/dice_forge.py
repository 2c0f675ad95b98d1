"""Dice Forge in the terminal: each hero's reserve (with its limits), both
dice face by face with the face showing, the cards owned, the Temple's faces
with their prices and the islands' feats with cost, glory and effect; moves
and events in words. Faces, pools, slots and cards come from
``engine_core.games.dice_forge.data``."""

from __future__ import annotations

from typing import Any

from engine_core.games.dice_forge import data as D
from services.cli.render.base import Renderer, Section, listing, plural

DIE = ("light", "dark")
EFFECT = {
    "HAMMER": "gold may go on the Hammer track: {h1} glory at 15, {h2} more at 30",
    "CHEST": "reserve limits +{c0} gold, +{c1} sun, +{c2} moon",
    "HIND": "reinforcement: a minor blessing with the die you choose",
    "BEAR": "+{bear} glory each time you oust or are ousted",
    "SATYRS": "the others roll; you take two of their faces",
    "BOAR": "forge its Boar face on another hero's die; you gain when it shows",
    "FERRYMAN": "",
    "CERBERUS": "a token: repeat a blessing",
    "HELMET": "forge a x3 face",
    "CANCER": "two divine blessings",
    "SENTINEL": "two divine blessings; shards may turn into {sent} glory each",
    "HYDRA": "",
    "TYPHON": "1 glory per face you have forged over",
    "SPHINX": "four minor blessings with one die",
    "CYCLOPS": "four minor blessings; gold may turn into {cyc} glory each",
    "GORGON": "",
    "TRITON": "a token: 6 gold, 2 sun or 2 moon once",
    "MIRROR_CARD": "forge a Mirror face",
    "OWL": "reinforcement: 1 gold, 1 sun or 1 moon",
    "SHIP_CARD": "forge a Ship face",
    "MINOTAUR": "the others roll and lose what they roll",
    "SHIELD_CARD": "forge a Shield face",
    "ELDER": "reinforcement: pay {eg} gold for {ev} glory",
    "WILD_SPIRITS": "3 gold and 3 moon",
}
CONSTS = {
    "h1": D.HAMMER_PHASE_GLORY[0],
    "h2": D.HAMMER_PHASE_GLORY[1],
    "c0": D.CHEST_CAPS[0],
    "c1": D.CHEST_CAPS[1],
    "c2": D.CHEST_CAPS[2],
    "bear": D.BEAR_GLORY,
    "sent": D.SENTINEL_GLORY_PER_SHARD,
    "cyc": D.CYCLOPS_GLORY_PER_GOLD,
    "eg": D.ELDER_GOLD,
    "ev": D.ELDER_GLORY,
}
SOURCE = {
    "minor": "minor blessing",
    "divine": "blessing",
    "wild_spirits": "Wild Spirits",
}


def vec_text(v: tuple[int, ...], empty: str = "nothing") -> str:
    return listing((f"{n} {D.RESOURCES[i]}" for i, n in enumerate(v) if n), empty=empty)


def face_text(face: str) -> str:
    """``G3|V2`` -> ``3 gold or 2 glory``."""
    f = D.FACES.get(face)
    if f is None:
        return "nothing" if face == D.NONE_FACE else face
    if f.kind == D.SIMPLE:
        return " + ".join(f"{n} {D.RESOURCES[i]}" for i, n in enumerate(f.gains) if n)
    if f.kind == D.CHOICE:
        return " or ".join(vec_text(g) for _, g in f.options)
    if f.kind == D.X3:
        return "x3"
    if f.kind == D.MIRROR:
        return "mirror"
    if f.kind == D.SHIP:
        return "ship"
    if f.kind == D.SHIELD:
        return f"shield ({D.SHIELD_HIT_GLORY} glory on {D.RESOURCES[f.watched]}, else {vec_text(f.fallback)})"
    if f.kind == D.BOAR:
        return f"{f.colour} boar"
    return face


def card_effect(card_id: str) -> str:
    key = "BOAR" if card_id in D.BOAR_CARD_COLOUR else card_id
    return EFFECT.get(key, "").format(**CONSTS)


def card_text(card_id: str) -> str:
    """``Minotaur (8 glory: the others roll and lose what they roll)``."""
    c = D.CARDS.get(card_id)
    if c is None:
        return card_id
    effect = card_effect(card_id)
    return f"{c.name} ({c.glory} glory{': ' + effect if effect else ''})"


def set_name(card_set: str) -> str:
    """A card set's name (the Boar set is four coloured cards)."""
    if card_set == "BOAR":
        return "Tenacious Boar"
    return D.CARDS[card_set].name if card_set in D.CARDS else card_set


def slot_cost(slot: D.Slot) -> str:
    return vec_text((0, slot.sun, slot.moon, 0))


class DiceForgeRenderer(Renderer):
    def option_meanings(self) -> dict[str, str]:
        out = {
            "cards": "the card on every slot with two: the first-game card (base), "
            "its alternate, or a random pick per slot (a slot below may override it)",
        }
        for slot in D.SLOTS:
            if slot.base != slot.alternate:
                out[slot.id.lower()] = (
                    f"island {slot.island} ({slot_cost(slot)}): {set_name(slot.base)} (base) "
                    f"or {set_name(slot.alternate)} (alternate); null: as cards"
                )
        return out

    def face_up(self, view: Any, seat: int, die: int) -> str:
        p = view.players[seat]
        return p.dice[die][p.up[die]]

    def placing(self, view: Any) -> str:
        """The face a ForgeFace would place, from the agenda."""
        if view is None:
            return ""
        for task in [*(t for lane in view.lanes for t in lane), *view.flow]:
            if getattr(task, "face", None) and self.tag(task) == "place_face":
                return task.face
        return ""

    def caps(self, view: Any, seat: int) -> tuple[int, ...]:
        chests = view.players[seat].cards.count("CHEST")
        return tuple(b + chests * c for b, c in zip(D.BASE_CAPS, D.CHEST_CAPS, strict=True))

    def score(self, view: Any, seat: int) -> int:
        p = view.players[seat]
        return p.glory + sum(D.CARDS[c].glory for c in p.cards if c in D.CARDS)

    # ------------------------------------------------------------ moves
    def move_words(self, move: Any, view: Any) -> str:
        t, m = self.tag(move), move
        if t == "choose_mirror":
            return f"the mirror copies {face_text(m.face)}"
        if t == "choose_option":
            return f"take {m.option}"
        if t == "split_gain":
            parts = []
            if m.hammer:
                parts.append(f"{m.hammer} gold onto the Hammer")
            if m.gold_glory:
                parts.append(f"{m.gold_glory} gold as glory")
            if m.sun_glory:
                parts.append(f"{m.sun_glory} sun as glory")
            if m.moon_glory:
                parts.append(f"{m.moon_glory} moon as glory")
            return (
                ("put " + ", ".join(parts) + ", the rest in the reserve")
                if parts
                else ("keep it all in the reserve")
            )
        if t == "order_faces":
            return "use the ship first" if m.ship_first else "take the gain first, then the ship"
        if t == "ship_buy":
            cost = D.COST.get(m.face)
            return f"buy the face [{face_text(m.face)}] with the ship (price {cost}, less the discount)"
        if t == "ship_pass":
            return "do not use the ship"
        if t == "forge_face":
            new = self.placing(view)
            old = self.face_on(view, m.die, m.slot)
            what = f"[{face_text(new)}]" if new else "the face"
            return f"forge {what} on the {DIE[m.die]} die over face {m.slot + 1} [{old}]"
        if t == "use_cerberus":
            return "repeat the blessing with Cerberus" if m.use else "keep the Cerberus token"
        if t == "use_triton":
            return f"spend a Triton token for {vec_text(D.TRITON_OPTIONS[m.option])}"
        if t == "use_reinforcement":
            card = self.owned(view, m.card)
            if card == "HIND":
                return f"{D.CARDS[card].name}: a minor blessing with the {m.option} die"
            if card == "OWL":
                return f"{D.CARDS[card].name}: take 1 {m.option}"
            if card == "ELDER":
                return f"{D.CARDS[card].name}: pay {D.ELDER_GOLD} gold for {D.ELDER_GLORY} glory"
            return f"use {D.CARDS[card].name if card in D.CARDS else card}"
        if t == "end_reinforcements":
            return "no (more) reinforcements"
        if t == "buy_face":
            return f"buy the face [{face_text(m.face)}] for {D.COST.get(m.face, '?')} gold"
        if t == "finish_offering":
            return "buy no more faces"
        if t == "perform_feat":
            slot = D.SLOTS[D.SLOT_INDEX[m.slot]]
            card = self.top_card(view, m.slot)
            return f"feat on island {slot.island}: {card_text(card)} for {slot_cost(slot)}"
        if t == "end_turn":
            return "end the turn"
        if t == "choose_boar_bearer":
            return f"forge the Boar face on {self.whose(m.seat)} die"
        if t == "choose_shield":
            return f"forge the face [{face_text(m.face)}]"
        if t == "choose_satyr_faces":
            a = self.face_up(view, *m.first) if view else ""
            b = self.face_up(view, *m.second) if view else ""
            return (
                f"take {face_text(a)} ({self.whose(m.first[0])} {DIE[m.first[1]]} die) and "
                f"{face_text(b)} ({self.whose(m.second[0])} {DIE[m.second[1]]} die)"
            )
        if t == "choose_minor_die":
            return f"use the {DIE[m.die]} die"
        return super().move_words(move, view)

    def whose(self, seat: int | None) -> str:
        s = self.seat(seat)
        return "your" if s == "you" else f"{s}'s"

    def face_on(self, view: Any, die: int, slot: int) -> str:
        if view is None or self.me is None:
            return "?"
        seat = self.me
        for task in [*(t for lane in view.lanes for t in lane), *view.flow]:
            if self.tag(task) == "place_face":
                seat = task.seat
                break
        return face_text(view.players[seat].dice[die][slot])

    def owned(self, view: Any, index: int) -> str:
        if view is None or self.me is None:
            return "?"
        cards = view.players[self.me].cards
        return cards[index] if 0 <= index < len(cards) else "?"

    def top_card(self, view: Any, slot_id: str) -> str:
        i = D.SLOT_INDEX[slot_id]
        if view is not None and view.stacks[i]:
            return view.stacks[i][0]
        return view.cards[i] if view is not None else D.SLOTS[i].base

    # ----------------------------------------------------------- events
    def event_words(self, event: Any, view: Any) -> str | None:
        t, e = self.tag(event), event
        if t == "game_started":
            return f"{e.players} heroes, {e.rounds} rounds; starting gold {list(e.gold)}"
        if t == "turn_started":
            return f"── round {e.round}: {self.seat(e.seat)} ──"
        if t == "dice_rolled":
            faces = ", ".join(
                f"{DIE[d]} {face_text(f)}" for d, f in zip(e.dice, e.faces, strict=False)
            )
            why = "" if e.reason == "blessing" else f" ({e.reason})"
            return f"{self.Seat(e.seat)} rolled {faces}{why}"
        if t == "mirror_copied":
            return f"{self.whose(e.seat).capitalize()} mirror copied {face_text(e.face)}"
        if t == "resources_gained":
            got = vec_text((e.gold, e.sun, e.moon, e.glory))
            lost = vec_text((e.lost_gold, e.lost_sun, e.lost_moon, 0), empty="")
            src = SOURCE.get(e.source, e.source.replace("_", " "))
            return (
                f"{self.Seat(e.seat)} gained {got}"
                + (f" ({src})" if src else "")
                + (f"; {lost} lost over the limit" if lost else "")
            )
        if t == "resources_lost":
            return f"{self.Seat(e.seat)} lost {vec_text((e.gold, e.sun, e.moon, e.glory))}"
        if t == "resources_spent":
            return f"{self.Seat(e.seat)} spent {vec_text((e.gold, e.sun, e.moon, 0))}"
        if t == "hammer_advanced":
            bonus = f", {e.glory} glory" if e.glory else ""
            return f"{self.whose(e.seat).capitalize()} Hammer +{e.spaces} ({e.position}/{D.HAMMER_TRACK}{bonus})"
        if t == "face_bought":
            return f"{self.Seat(e.seat)} bought the face [{face_text(e.face)}] for {e.cost} gold"
        if t == "garden_face_taken":
            return f"{self.Seat(e.seat)} took the face [{face_text(e.face)}]"
        if t == "face_forged":
            return (
                f"{self.Seat(e.seat)} forged [{face_text(e.face)}] on the {DIE[e.die]} die "
                f"over [{face_text(e.replaced)}]"
            )
        if t == "extra_action_taken":
            return f"{self.Seat(e.seat)} paid {e.sun} sun for a second action"
        if t == "feat_performed":
            return (
                f"{self.Seat(e.seat)} performed a feat: {card_text(e.card)}, paying "
                f"{vec_text((0, e.sun, e.moon, 0), empty='nothing')}"
            )
        if t == "hero_ousted":
            return f"{self.Seat(e.seat)} ousted by {self.seat(e.by)}: back to the portal for a blessing"
        if t == "token_gained":
            return f"{self.Seat(e.seat)} gained a {e.token.capitalize()} token"
        if t == "token_used":
            return f"{self.Seat(e.seat)} used a {e.token.capitalize()} token"
        if t == "reinforcement_used":
            name = D.CARDS[e.card_id].name if e.card_id in D.CARDS else e.card_id
            return f"{self.Seat(e.seat)} used {name}" + (f" ({e.option})" if e.option else "")
        if t == "game_ended":
            scores = ", ".join(f"{self.seat(i)} {s:g}" for i, s in enumerate(e.scores))
            winners = [self.seat(i) for i, r in enumerate(e.ranks) if r == 1]
            return f"game over: {scores} glory; {' and '.join(winners)} first"
        if t in (
            "faces_applied",
            "hammer_token_placed",
            "pawn_moved",
            "card_taken",
            "reinforcements_ended",
            "offering_finished",
            "turn_ended",
            "round_ended",
            "agenda_changed",
        ):
            return None
        return super().event_words(event, view)

    # ------------------------------------------------------------- view
    def round(self, view: Any) -> int | None:
        return view.round

    def standing(self, view: Any) -> str:
        return (
            ", ".join(f"{self.seat(i)} {self.score(view, i)}" for i in range(len(view.players)))
            + " glory"
        )

    def task_words(self, task: Any) -> str:
        t = self.tag(task)
        return {
            "action": "an action: buy faces in the Temple or perform a feat",
            "reinforce": "reinforcements",
            "place_face": "forging a face",
            "offering": "buying faces",
            "end_of_turn": "the end of the turn",
            "choose_bearer": "who bears the Boar",
            "pick_shield": "choosing a Shield",
            "pick_satyrs": "choosing the Satyrs' faces",
            "pick_minor_die": "choosing a die",
        }.get(t, t.replace("_", " "))

    def lane_words(self, task: Any) -> str:
        """A pending part of a blessing, in words."""
        t = self.tag(task)
        if t == "bless":
            faces = ", ".join(face_text(f) for f in (task.eff or task.faces))
            return f"{self.whose(task.seat)} {task.kind} blessing ({faces})"
        if t == "gain":
            got = vec_text((task.gold, task.sun, task.moon, task.glory))
            return f"{self.seat(task.seat)} gain{'' if task.seat == self.me else 's'} {got}: how to split it"
        if t == "ship_offer":
            return f"{self.whose(task.seat)} ship: buy a face {task.discount} gold cheaper"
        if t == "boar_reward":
            return f"{self.whose(task.seat)} {task.colour} boar showed: a reward"
        if t == "cerberus_offer":
            return f"{self.seat(task.seat)} may repeat the blessing with Cerberus"
        if t == "place_face":
            return f"{self.seat(task.seat)} to forge [{face_text(task.face)}]"
        return t.replace("_", " ")

    def sections(self, view: Any) -> list[Section]:
        v = view
        n = len(v.players)
        step = ""
        if v.flow:
            step = f"; {self.task_words(v.flow[0])}"
        head = f"Round {v.round} of {v.rounds}: {self.seat(v.active)} to play{step} (* = face up)"
        pending = [self.lane_words(lane[0]) for lane in v.lanes if lane]
        lines = (head, *(f"now: {p}" for p in pending), f"Score: {self.standing(v)}")
        out = [Section("", lines)]
        order = list(range(n))
        if self.me is not None:
            order = order[self.me :] + order[: self.me]
        for seat in order:
            p = v.players[seat]
            caps = self.caps(v, seat)
            where = "on the portal" if p.pawn == 0 else f"on island {p.pawn}"
            lines = [
                f"gold {p.gold}/{caps[0]}, sun {p.sun}/{caps[1]}, moon {p.moon}/{caps[2]}, "
                f"glory {p.glory}; {where}"
                + (f"; Hammer {p.hammer_pos}/{D.HAMMER_TRACK}" if p.hammers else "")
                + (f"; Cerberus tokens {p.cerberus}" if p.cerberus else "")
                + (f"; Triton tokens {p.triton}" if p.triton else "")
            ]
            for d in (0, 1):
                faces = [
                    face_text(f) + ("*" if i == p.up[d] else "") for i, f in enumerate(p.dice[d])
                ]
                lines.append(f"{DIE[d]:>5} die: {' | '.join(faces)}")
            if p.cards:
                lines.append(f"cards: {listing(D.CARDS[c].name for c in p.cards if c in D.CARDS)}")
            out.append(Section("you" if seat == self.me else self.seat(seat), tuple(lines)))
        by_cost: dict[int, dict[str, int]] = {}
        for pool, faces in zip(D.SANCTUARY, v.sanctuary, strict=False):
            for f in faces:
                counts = by_cost.setdefault(pool.cost, {})
                counts[f] = counts.get(f, 0) + 1
        temple = [
            f"{cost:>2} gold: " + ", ".join(f"[{face_text(f)}] x{c}" for f, c in counts.items())
            for cost, counts in by_cost.items()
        ]
        out.append(Section("temple (faces for sale)", tuple(temple) or ("sold out",)))
        islands = []
        for i, slot in enumerate(D.SLOTS):
            stack = v.stacks[i]
            if not stack:
                continue
            here = [self.seat(s) for s, p in enumerate(v.players) if p.pawn == slot.island]
            islands.append(
                f"island {slot.island}, {slot_cost(slot)}: {card_text(stack[0])} "
                f"x{len(stack)}" + (f"  [{listing(here)}]" if here else "")
            )
        out.append(Section("islands", tuple(islands) or ("no feats left",)))
        return out


__all__ = ["DiceForgeRenderer", "card_text", "face_text", "plural"]
