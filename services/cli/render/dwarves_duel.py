"""The Dwarves: The Duel in the terminal: dice, Wild Cards, both displays and
your hand by name with cost, hit points, victory points and effect; moves and
events in words. Card data comes from ``engine_core.games.dwarves_duel.data``."""

from __future__ import annotations

from typing import Any, ClassVar

from engine_core.games.dwarves_duel import data as D
from engine_core.games.dwarves_duel.data import CARDS
from services.cli.render.base import Renderer, Section, listing, plural

SIDE_NAME = {D.GOOD: "Forces of Good", D.EVIL: "Forces of Evil"}
TYPE_NAME = {
    D.ALLY: "Ally",
    D.VICTORY: "Victory",
    D.SUPPORT: "Support",
    D.EVENT: "Event",
    D.TWIST: "Twist of Fate",
}
EFFECT = {
    "ALLY_KING": "once a turn turns an unused die to W; deals no damage",
    "SUP_DICE": "+1 die at each roll",
    "SUP_DRAW": "may draw 1 more card each draw phase",
    "SUP_REROLL": "1 re-roll each dice phase",
    "EV_REMOVE": "put an opposing display card on its discard pile",
    "EV_WILDFACE": "turn one of your unused dice to W",
    "EV_TAKEWILD": "take a Wild Card (middle first, else the opponent's)",
    "EV_DRAW2": "draw 2 cards",
    "EV_RECOVER": "take a card from your discard pile into your hand",
    "TOF_EXTRADICE": "+2 dice at your next roll (on your turn)",
    "TOF_STRIKE": "deal 1 damage to their pile or a card",
    "TOF_ARMOR": "cancel 1 damage against you",
}
PHASE = {
    "draw": "draw phase",
    "preroll": "about to roll",
    "dice": "dice phase",
    "card": "card phase",
    "ending": "end of turn",
    "over": "game over",
}
WINDOW = {
    "cp1": "may answer the dice with a Twist",
    "cp2": "may answer the card with a Twist",
    "cp4": "may answer the end of turn with a Twist",
    "defend": "may defend with a Twist",
}


def cost_text(card: D.Card) -> str:
    if card.cost == D.FREE:
        return "free"
    if card.cost == D.ONE:
        return f"cost one {card.amount}"
    return f"cost {card.amount} alike"


def effect_text(card: D.Card) -> str:
    if card.type == D.ALLY and card.triggers:
        hits = "any number" if len(card.triggers) == 5 else " or ".join(card.triggers)
        return f"1 damage per {hits} spent"
    if card.type == D.VICTORY:
        return f"{card.vp} VP"
    return EFFECT.get(card.key, "")


class DwarvesDuelRenderer(Renderer):
    ROUND = "turn"
    OPTIONS: ClassVar[dict[str, str]] = {
        "seat0_side": "the side seat 0 leads (seat 1 gets the other)",
        "first_player": "the seat that starts (null: drawn at random)",
        "always_offer_windows": "wait for an explicit pass in every response window, "
        "even without a Twist to play (hides whether you hold one)",
    }

    # ------------------------------------------------------------ names
    def card(self, cid: str) -> str:
        c = CARDS.get(cid)
        return c.name if c else cid

    def card_full(self, cid: str) -> str:
        """``Tungdil (Ally, cost one 5, 3 HP: 1 damage per 5 spent)``."""
        c = CARDS.get(cid)
        if c is None:
            return cid
        bits = [TYPE_NAME.get(c.type, c.type), cost_text(c)]
        if c.hp is not None:
            bits.append(f"{c.hp} HP")
        effect = effect_text(c)
        return f"{c.name} ({', '.join(bits)}{': ' + effect if effect else ''})"

    def card_short(self, cid: str) -> str:
        """``Djerůn (Ally, cost one 3)``: the menu form (the hand shows the rest)."""
        c = CARDS.get(cid)
        if c is None:
            return cid
        return f"{c.name} ({TYPE_NAME.get(c.type, c.type)}, {cost_text(c)})"

    def owner(self, view: Any, cid: str) -> int | None:
        c = CARDS.get(cid)
        if c is None or view is None:
            return None
        for seat, p in enumerate(view.players):
            if p.side == c.side:
                return seat
        return None

    def whose(self, seat: int | None) -> str:
        s = self.seat(seat)
        return "your" if s == "you" else f"{s}'s"

    def target(self, view: Any, target: str, by: int | None) -> str:
        if target == D.PILE:
            victim = None if by is None else 1 - by
            return f"{self.whose(victim)} draw pile"
        return f"{self.whose(self.owner(view, target))} {self.card(target)}"

    def die(self, view: Any, die: str) -> str:
        face = ""
        if view is not None and die in D.DIE_INDEX:
            face = view.dice[D.DIE_INDEX[die]].face
        return f"{die} ({face})" if face else die

    def unit(self, view: Any, unit: str) -> str:
        return "a Wild Card" if unit == D.WILD else self.die(view, unit)

    def payment(self, view: Any, units: tuple[str, ...]) -> str:
        return listing((self.unit(view, u) for u in units), empty="nothing")

    # ------------------------------------------------------------ moves
    def move_words(self, move: Any, view: Any) -> str:
        t = self.tag(move)
        if t == "draw_cards":
            return f"draw {plural(move.count, 'card')}"
        if t == "roll_dice":
            return "roll the dice"
        if t == "reroll_die":
            return f"re-roll {self.die(view, move.die)} with {self.card(move.source)}"
        if t == "end_dice_phase":
            return "keep these dice (go on to the card phase)"
        if t == "play_card":
            text = f"play {self.card_short(move.card)}"
            if move.payment:
                text += f", paying {self.payment(view, move.payment)}"
            if move.target:
                text += f", removing {self.target(view, move.target, self.me)}"
            if move.die:
                text += f", turning {self.die(view, move.die)} to W"
            if move.pick:
                text += f", taking back {self.card(move.pick)}"
            return text
        if t == "play_twist":
            c = CARDS.get(move.card)
            text = f"play {self.card(move.card)}"
            if move.target:
                return f"{text}: 1 damage to {self.target(view, move.target, self.me)}"
            return f"{text}: {effect_text(c)}" if c else text
        if t == "activate_ally":
            return (
                f"{self.card(move.ally)} deals 1 damage to "
                f"{self.target(view, move.target, self.me)}, spending {self.unit(view, move.unit)}"
            )
        if t == "king_convert":
            return f"turn {self.die(view, move.die)} to W (the king's power)"
        if t == "pass":
            if view is not None and view.windows:
                return "pass (play no Twist)"
            return "pass"
        if t == "end_turn":
            return "end your turn"
        return super().move_words(move, view)

    def played_words(self, seat: int | None, move: Any, view: Any) -> str:
        text = self.move_words(move, view)
        text = text.replace("your turn", "the turn")
        return f"{self.Seat(seat)}: {text}"

    # ----------------------------------------------------------- events
    def event_words(self, event: Any, view: Any) -> str | None:
        t = self.tag(event)
        e = event
        if t == "game_started":
            a, b = (SIDE_NAME.get(s, s) for s in e.sides)
            return (
                f"{self.Seat(0)} lead{'' if self.me == 0 else 's'} the {a}, "
                f"{self.seat(1)} the {b}; {self.seat(e.first_player)} start"
                f"{'' if e.first_player == self.me else 's'}"
            )
        if t == "cards_drawn":
            if e.cards:
                return f"{self.Seat(e.seat)} drew {listing(self.card_full(c) for c in e.cards)}"
            return f"{self.Seat(e.seat)} drew {plural(e.count, 'card')}"
        if t == "turn_started":
            return f"── turn {e.turn}: {self.seat(e.seat)} ──"
        if t == "dice_rolled":
            return f"{self.Seat(e.seat)} rolled {' '.join(e.faces)}"
        if t == "die_rerolled":
            return (
                f"{self.Seat(e.seat)} re-rolled {e.die} from {e.old} to {e.new} "
                f"({self.card(e.source)})"
            )
        if t == "die_converted":
            cause = "the king" if e.cause == "king" else "an Event"
            return f"{self.Seat(e.seat)} turned {e.die} from {e.old} to W ({cause})"
        if t == "card_played":
            paid = f", paying {self.payment(view, e.payment)}" if e.payment else ""
            return f"{self.Seat(e.seat)} played {self.card_full(e.card)}{paid}"
        if t == "extra_dice_pending":
            return f"{self.Seat(e.seat)} will roll 2 more dice next time"
        if t == "damage_declared":
            return (
                f"{self.card(e.source)} strikes {self.target(view, e.target, e.by)}"
                if e.target == D.PILE
                else f"{self.card(e.source)} strikes {self.whose(e.owner)} {self.card(e.target)}"
            )
        if t == "damage_cancelled":
            return f"{self.card(e.card)} cancelled the damage"
        if t == "card_burned":
            return f"{self.Seat(e.seat)} lost the top card of the pile: {self.card(e.card)}"
        if t == "damage_dealt":
            c = CARDS.get(e.card)
            hp = f"/{c.hp}" if c and c.hp is not None else ""
            return f"{self.whose(e.seat).capitalize()} {self.card(e.card)} took damage ({e.damage}{hp})"
        if t == "card_defeated":
            return f"{self.whose(e.seat).capitalize()} {self.card(e.card)} was defeated"
        if t == "damage_fizzled":
            return "the damage fizzled (its target left play)"
        if t == "card_removed":
            return f"{self.Seat(e.by)} removed {self.whose(e.seat)} {self.card(e.card)}"
        if t == "card_recovered":
            return f"{self.Seat(e.seat)} took {self.card(e.card)} back into the hand"
        if t == "wild_card_taken":
            where = "the middle" if e.source == "middle" else "the opponent"
            return f"{self.Seat(e.seat)} took a Wild Card from {where}"
        if t == "game_ended":
            a, b = e.scores
            tie = " on the tiebreak" if e.tiebreak else ""
            return (
                f"game over ({e.reason.replace('_', ' ')}): {a}-{b} VP, "
                f"{self.seat(e.winner)} win{'' if e.winner == self.me else 's'}{tie}"
            )
        if t in (
            "deck_shuffled",
            "phase_changed",
            "card_entered_display",
            "card_discarded",
            "ally_activated",
            "window_opened",
            "window_closed",
            "turn_ended",
        ):
            return None
        return super().event_words(event, view)

    # ------------------------------------------------------------- view
    def scores(self, view: Any) -> tuple[int, int]:
        return tuple(sum(CARDS[dc.card].vp for dc in p.display) for p in view.players)  # type: ignore[return-value]

    def round(self, view: Any) -> int | None:
        return view.turn

    def standing(self, view: Any) -> str:
        s = self.scores(view)
        return ", ".join(
            f"{self.seat(i)} {s[i]} VP (pile {p.pile_count})" for i, p in enumerate(view.players)
        )

    def sections(self, view: Any) -> list[Section]:
        v = view
        awaited = listing((self.seat(s) for s in v.awaiting), empty="nobody")
        head = (
            f"Turn {v.turn}: {self.seat(v.active)} ({SIDE_NAME.get(v.players[v.active].side)}), "
            f"{PHASE.get(v.phase, v.phase)}; waiting for {awaited}"
        )
        dice = [
            f"{D.DICE[i]} {d.face}{' (spent)' if d.used else ''}"
            for i, d in enumerate(v.dice)
            if d.face
        ]
        wild = ", ".join(
            [f"middle {v.middle_wild}"]
            + [f"{self.seat(i)} {p.wild_cards}" for i, p in enumerate(v.players)]
        )
        table = [
            f"Dice: {listing(dice, empty='all in the middle')}",
            f"Wild Cards: {wild}",
            f"Score: {self.standing(v)}",
        ]
        out = [Section("", (head,)), Section("table", tuple(table))]
        order = [self.me, 1 - self.me] if self.me in (0, 1) else [0, 1]
        for seat in order:
            p = v.players[seat]
            top = f", top {self.card(p.discard[-1])}" if p.discard else ""
            hand = f"hand {p.hand_count}"
            if p.hand is None and p.known_hand:
                hand += f" (known: {listing(self.card(c) for c in p.known_hand)})"
            lines = [
                f"{SIDE_NAME.get(p.side, p.side)}: pile {p.pile_count}, {hand}, "
                f"discard {len(p.discard)}{top}; display:"
            ]
            for dc in p.display:
                c = CARDS.get(dc.card)
                dmg = f" [damage {dc.damage}/{c.hp}]" if c and c.hp and dc.damage else ""
                lines.append(f"  {self.card_full(dc.card)}{dmg}")
            if not p.display:
                lines.append("  (empty)")
            title = "you" if seat == self.me else self.seat(seat)
            out.append(Section(title, tuple(lines)))
            if p.hand is not None:
                hand_lines = tuple(f"  {self.card_full(c)}" for c in p.hand) or ("  (empty)",)
                out.append(Section("your hand" if seat == self.me else "hand", hand_lines))
        if v.windows:
            lines = []
            for w in v.windows:
                text = f"{self.Seat(w.holder)} {WINDOW.get(w.kind, w.kind)}"
                if w.point is not None:
                    text += (
                        f" ({self.card(w.point.source)} strikes "
                        f"{self.target(v, w.point.target, w.point.by)}"
                        f"{', cancelled' if w.point.cancelled else ''})"
                    )
                lines.append(text)
            out.append(Section("windows", tuple(lines)))
        return out
