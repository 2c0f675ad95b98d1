"""A greedy Dice Forge bot: each move is scored by a simple glory-equivalent estimate.

Faces are worth what they yield per roll times the rolls left in the game; feats are
worth their printed glory plus a rough value of their effect; gold goes onto the
Hammer, Sentinel/Cyclops conversions are taken late, Cerberus is always used.
"""

from __future__ import annotations

import functools
from typing import Any

from engine_core.games.dice_forge import data
from engine_core.games.dice_forge.moves import (
    BuyFace,
    ChooseBoarBearer,
    ChooseMinorDie,
    ChooseMirror,
    ChooseOption,
    ChooseSatyrFaces,
    ChooseShield,
    ForgeFace,
    OrderFaces,
    PerformFeat,
    ShipBuy,
    SplitGain,
    UseCerberus,
    UseReinforcement,
    UseTriton,
)
from engine_core.games.dice_forge.rules import caps, score, seat_task, up_face
from engine_core.games.dice_forge.state import Bless, BoarReward, State
from engine_core.rng import Rng
from engine_core.types import Seat

RES_VALUE = (0.45, 1.4, 1.2, 1.0)  # gold, sun, moon, glory in glory-equivalents
SPECIAL = {data.X3: 2.5, data.MIRROR: 2.0, data.SHIP: 1.5, data.SHIELD: 2.5, data.BOAR: 0.5}
FEAT_BONUS = {
    "HAMMER": 6.0, "CHEST": 2.0, "HIND": 4.0, "OWL": 3.0, "ELDER": 3.0, "BEAR": 3.0,
    "SATYRS": 4.0, "CERBERUS": 3.0, "TRITON": 3.0, "HELMET": 5.0, "CANCER": 5.0,
    "SENTINEL": 6.0, "SPHINX": 5.0, "CYCLOPS": 5.0, "MIRROR_CARD": 3.0, "SHIP_CARD": 2.0,
    "SHIELD_CARD": 3.0, "WILD_SPIRITS": 4.0, "MINOTAUR": 2.0,
}  # fmt: skip


def vec_value(vec) -> float:
    return sum(a * v for a, v in zip(vec, RES_VALUE, strict=True))


@functools.cache
def face_value(face: str) -> float:
    """What a face yields per roll in glory-equivalents (a pure function of the
    game's data, so computed once per face)."""
    f = data.FACES.get(face)
    if f is None:
        return 0.0
    if f.kind == data.SIMPLE:
        return vec_value(f.gains)
    if f.kind == data.CHOICE:
        return max(vec_value(v) for _, v in f.options)
    return SPECIAL[f.kind]


class DiceForgeGreedy:
    name = "greedy"
    _memo_worst: tuple[Any, float] | None = None  # (player, its worst face's value)
    standing_scale = 8.0  # a lead of this much in standing is a clear one

    def standing(self, state: State) -> tuple[float, ...]:
        """Each seat's score now (glory, the feats' glory included)."""
        return tuple(float(score(state, s)) for s in range(len(state.players)))

    def choose(self, game: Any, state: State, seat: Seat, rng: Rng) -> Any:
        moves = game.legal_moves(state, seat)
        task = seat_task(state, seat)
        values = [self.value(state, seat, task, m) for m in moves]
        best = max(values)
        top = [m for m, v in zip(moves, values, strict=True) if v >= best - 1e-9]
        return top[0] if len(top) == 1 else rng.choice(top)

    def rolls_left(self, state: State) -> float:
        n = len(state.players)
        per_round = n * (2 if n == 2 else 1)
        left = state.rounds - state.round + (0.5 if state.active == 0 else 0.0)
        return max(0.0, left) * per_round / 6.0

    def worst_face(self, state: State, seat: Seat) -> float:
        p = state.players[seat]
        memo = self._memo_worst
        if memo is not None and memo[0] is p:
            return memo[1]
        worst = min(face_value(f) for die in p.dice for f in die if data.FACES[f].kind != data.BOAR)
        self._memo_worst = (p, worst)  # replaced whole: safe for a bot shared by threads
        return worst

    def value(self, state: State, seat: Seat, task: Any, move: Any) -> float:
        p = state.players[seat]
        late = state.round >= state.rounds - 1
        match move:
            case BuyFace(face=f):
                gain = (face_value(f) - self.worst_face(state, seat)) * self.rolls_left(state)
                extra = 3.0 if getattr(task, "extra", False) else 0.0
                return gain - extra
            case PerformFeat(slot=slot):
                card = state.stacks[data.SLOT_INDEX[slot]][0]
                v = data.CARDS[card].glory + FEAT_BONUS.get(card, 0.0) * (0.3 if late else 1.0)
                if card == "TYPHON":
                    v += len(p.discard)
                extra = 3.0 if getattr(task, "extra", False) else 0.0
                return v - extra
            case ShipBuy(face=f):
                return 1.0 + face_value(f) * self.rolls_left(state)
            case ForgeFace(die=d, slot=s):
                return -face_value(p.dice[d][s]) - 0.01 * d
            case ChooseOption(option=o):
                if isinstance(task, BoarReward):
                    return vec_value(data.BOAR_OWNER_OPTIONS[o])
                if isinstance(task, Bless):
                    room = dict(zip(("gold", "sun", "moon"), caps(p), strict=True))
                    have = {"gold": p.gold, "sun": p.sun, "moon": p.moon}
                    if o in room and have[o] >= room[o]:
                        return 0.0
                    return RES_VALUE[data.RES_INDEX[o]]
                return 0.0
            case ChooseMirror(face=f):
                return face_value(f)
            case SplitGain(hammer=h, gold_glory=gg, sun_glory=sg, moon_glory=mg):
                conv = (gg + sg + mg) * (1.0 if late else -0.1)
                return h * 1.0 + conv
            case OrderFaces(ship_first=first):
                return 0.1 if first and p.gold >= 6 else 0.0
            case UseCerberus(use=use):
                return 1.0 if use else 0.0
            case UseTriton():
                return -1.0
            case UseReinforcement(card=i):
                return {"ELDER": 2.0, "OWL": 1.0, "HIND": 1.5}.get(p.cards[i], 0.0)
            case ChooseBoarBearer(seat=s):
                return -score(state, s)
            case ChooseShield(face=f):
                return {"SHIELD_GLORY": 3, "SHIELD_SUN": 2, "SHIELD_MOON": 1}.get(f, 0)
            case ChooseSatyrFaces(first=a, second=b):
                pl = state.players
                fa, fb = up_face(pl[a[0]], a[1]), up_face(pl[b[0]], b[1])
                if fa == "X3":
                    return 3 * face_value(fb)
                if fb == "X3":
                    return 3 * face_value(fa)
                return face_value(fa) + face_value(fb)
            case ChooseMinorDie(die=d):
                return sum(face_value(f) for f in p.dice[d])
            case _:
                return 0.0
