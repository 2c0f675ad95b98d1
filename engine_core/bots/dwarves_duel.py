"""A greedy bot for The Dwarves: The Duel.

It scores each legal move with a few rules of thumb and plays the best one:
put Victory Points, Allies and Supports into the display; remove or finish
the opponent's most valuable cards; burn the opponent's pile with spare dice
(and end the game when that wins it); spend wild faces and Wild Cards last.
In response windows it cancels points that would defeat a card of its own,
throws a Strike when that defeats a card or wins the game, and passes
otherwise.
"""

from __future__ import annotations

from engine_core.games.dwarves_duel.data import (
    ALLY,
    CARDS,
    PILE,
    SUPPORT,
    VICTORY,
    WILD,
    WILD_FACE,
)
from engine_core.games.dwarves_duel.moves import (
    ActivateAlly,
    DrawCards,
    EndDicePhase,
    EndTurn,
    Pass,
    PlayCard,
    PlayTwist,
    RerollDie,
    RollDice,
)
from engine_core.games.dwarves_duel.rules import DEFEND, free_dice, legal_moves, scores
from engine_core.games.dwarves_duel.state import DisplayCard, State
from engine_core.rng import Rng
from engine_core.types import Seat


def _card_value(card_id: str) -> int:
    card = CARDS[card_id]
    if card.type == VICTORY:
        return 10 * card.vp
    if card.type == ALLY:
        return 8 + card.hp if card.triggers else 12
    if card.type == SUPPORT:
        return 9
    return 0


class DwarvesDuelGreedy:
    name = "greedy"
    # One-entry memos of what every move of a decision asks about the same
    # state (replaced whole, so a bot shared by threads stays correct).
    _memo_faces: tuple[State, dict[str, str]] | None = None
    _memo_units: tuple[State, Seat, int] | None = None
    standing_scale = 3.0  # a lead of this much in standing is a clear one

    def standing(self, state: State) -> tuple[float, ...]:
        """Each seat's standing for a search cut short: the Victory Points in
        its display, a VP card counted down by half the share of its HP already
        lost (damage is progress towards defeating it), plus half a point per
        two HP of Allies left and half a point per Support (they deal damage
        and draw cards in the turns to come) and a fifth per Wild Card."""
        out = []
        for p in state.players:
            v = 0.2 * p.wild
            for dc in p.display:
                card = CARDS[dc.card]
                if card.type == VICTORY:
                    v += card.vp * (1.0 - 0.5 * dc.damage / card.hp)
                elif card.type == ALLY:
                    v += 0.25 * (card.hp - dc.damage)
                elif card.type == SUPPORT:
                    v += 0.5
            out.append(v)
        return tuple(out)

    def choose(self, game, state: State, seat: Seat, rng: Rng):
        moves = legal_moves(state, seat)
        best, best_score = moves[0], float("-inf")
        for move in moves:
            score = self.score(state, seat, move)
            if score > best_score:
                best, best_score = move, score
        return best

    # ------------------------------------------------------------- scoring
    def score(self, s: State, seat: Seat, move) -> float:
        match move:
            case Pass() | EndTurn() | EndDicePhase() | RollDice():
                return 0.0
            case DrawCards(count=k):
                return self._draw(s, seat, k)
            case RerollDie():
                return -1.0
            case PlayTwist():
                return self._twist(s, seat, move)
            case PlayCard():
                return self._play(s, seat, move)
            case ActivateAlly():
                return self._activate(s, seat, move)
            case _:
                return -5.0  # KingConvert, and anything new

    def _ahead(self, s: State, seat: Seat) -> bool:
        sc = scores(s)
        return sc[seat] > sc[1 - seat]

    def _draw(self, s: State, seat: Seat, k: int) -> float:
        pile = len(s.players[seat].pile)
        if k >= pile:  # this draw ends the game: only if it wins
            return 100.0 if self._ahead(s, seat) else -100.0
        return float(k)

    def _finishes(self, s: State, seat: Seat, target: str) -> bool:
        dc = self._opp_card(s, seat, target)
        return dc is not None and CARDS[dc.card].hp - dc.damage <= 1

    def _opp_card(self, s: State, seat: Seat, target: str) -> DisplayCard | None:
        for dc in s.players[1 - seat].display:
            if dc.card == target:
                return dc
        return None

    def _pile_hit(self, s: State, seat: Seat) -> float:
        opp_pile = len(s.players[1 - seat].pile)
        if opp_pile <= 1:
            return 200.0 if self._ahead(s, seat) else -200.0
        return 10.0

    def _twist(self, s: State, seat: Seat, move: PlayTwist) -> float:
        key = CARDS[move.card].key
        if key == "TOF_EXTRADICE":
            return 30.0
        if key == "TOF_ARMOR":
            window = s.windows[-1]
            point = window.point
            if window.kind != DEFEND or point is None:
                return -1.0
            if point.target == PILE:
                return 40.0 if len(s.players[seat].pile) <= 2 else -1.0
            for dc in s.players[seat].display:
                if dc.card == point.target and CARDS[dc.card].hp - dc.damage <= 1:
                    return 5.0 + _card_value(dc.card)
            return -1.0
        # TOF_STRIKE
        if move.target == PILE:
            return self._pile_hit(s, seat) if len(s.players[1 - seat].pile) <= 1 else -1.0
        if self._finishes(s, seat, move.target):
            return 20.0 + _card_value(move.target)
        return -1.0

    def _payment_cost(self, s: State, payment: tuple[str, ...]) -> float:
        cost = 0.0
        faces = self._faces(s)
        for u in payment:
            cost += 6.0 if u == WILD else (2.0 if faces.get(u) == WILD_FACE else 1.0)
        return cost

    def _play(self, s: State, seat: Seat, move: PlayCard) -> float:
        card = CARDS[move.card]
        pay = self._payment_cost(s, move.payment)
        p = s.players[seat]
        if card.type in (VICTORY, ALLY, SUPPORT):
            base = {VICTORY: 100.0, ALLY: 70.0, SUPPORT: 60.0}[card.type]
            return base + _card_value(move.card) - pay
        key = card.key
        if key == "EV_REMOVE":
            return 50.0 + 2 * _card_value(move.target) - pay
        if key == "EV_TAKEWILD":
            return 50.0 if p.wild < 3 else -1.0
        if key == "EV_DRAW2":
            return 40.0 if len(p.pile) > 2 or self._ahead(s, seat) else -1.0
        if key == "EV_RECOVER":
            return 20.0 + _card_value(move.pick) - pay
        return -1.0  # EV_WILDFACE: only worth it as part of a plan

    def _activate(self, s: State, seat: Seat, move: ActivateAlly) -> float:
        face = self._faces(s).get(move.unit)
        unit_cost = 6.0 if move.unit == WILD else (2.0 if face == WILD_FACE else 0.0)
        if move.target == PILE:
            return self._pile_hit(s, seat) - unit_cost
        dc = self._opp_card(s, seat, move.target)
        assert dc is not None
        remaining = CARDS[dc.card].hp - dc.damage
        if remaining <= self._units_for(s, seat):
            return 15.0 + 2 * _card_value(dc.card) / remaining - unit_cost
        return -1.0

    def _faces(self, s: State) -> dict[str, str]:
        """The free dice's faces by die id (computed once per state: every
        move of one decision asks)."""
        memo = self._memo_faces
        if memo is not None and memo[0] is s:
            return memo[1]
        faces = dict(free_dice(s))
        self._memo_faces = (s, faces)
        return faces

    def _units_for(self, s: State, seat: Seat) -> int:
        """How many points this seat can still deal with its Allies this turn
        (computed once per state and seat)."""
        memo = self._memo_units
        if memo is not None and memo[0] is s and memo[1] == seat:
            return memo[2]
        units = self._count_units(s, seat)
        self._memo_units = (s, seat, units)
        return units

    def _count_units(self, s: State, seat: Seat) -> int:
        p = s.players[seat]
        triggers = set()
        for dc in p.display:
            triggers.update(CARDS[dc.card].triggers)
        return p.wild + sum(1 for _, f in free_dice(s) if f == WILD_FACE or f in triggers)
