"""``legal_moves`` is exactly the set of moves ``decide`` accepts.

Along seeded playouts, random candidate moves are drawn from a space much wider
than the legal one (any card, any units in any order, any target); ``decide``
must accept a candidate if and only if ``legal_moves`` lists it.
"""

from __future__ import annotations

import msgspec
import pytest

from engine_core.bots import RandomBot
from engine_core.errors import EngineError
from engine_core.games.dwarves_duel import GAME
from engine_core.games.dwarves_duel.data import CARDS, DICE, PILE, WILD
from engine_core.games.dwarves_duel.moves import (
    ActivateAlly,
    DrawCards,
    EndDicePhase,
    EndTurn,
    KingConvert,
    Pass,
    PlayCard,
    PlayTwist,
    RerollDie,
    RollDice,
)
from engine_core.rng import Rng
from engine_core.testing import playout

ALL_CARDS = tuple(CARDS)
SIMPLE = (RollDice(), EndDicePhase(), Pass(), EndTurn())


def candidate(state, seat, rng: Rng):
    me, opp = state.players[seat], state.players[1 - seat]
    near = (
        list(me.hand)
        + [dc.card for dc in me.display]
        + [dc.card for dc in opp.display]
        + list(me.discard)
        + [rng.choice(ALL_CARDS)]
    )
    targets = ["", PILE, rng.choice(near)]
    dice = [*DICE, "", "x"]
    kind = rng.below(10)
    if kind >= 8:
        return near_legal(state, seat, rng, near, dice)
    if kind == 0:
        return SIMPLE[rng.below(len(SIMPLE))]
    if kind == 1:
        return DrawCards(count=rng.between(-1, 4))
    if kind == 2:
        return RerollDie(die=rng.choice(dice), source=rng.choice(near))
    if kind == 3:
        return KingConvert(die=rng.choice(dice))
    if kind == 4:
        return PlayTwist(card=rng.choice(near), target=rng.choice(targets))
    if kind == 5:
        return ActivateAlly(
            ally=rng.choice(near), unit=rng.choice([*dice, WILD]), target=rng.choice(targets)
        )
    units = rng.sample([*DICE, WILD, WILD, WILD], rng.below(5))
    if rng.below(2):
        units = tuple(sorted(units, key=lambda u: (u == WILD, u)))
    return PlayCard(
        card=rng.choice(near),
        payment=tuple(units),
        target=rng.choice(targets) if rng.below(3) == 0 else "",
        die=rng.choice(dice) if rng.below(3) == 0 else "",
        pick=rng.choice(near) if rng.below(3) == 0 else "",
    )


def near_legal(state, seat, rng: Rng, near, dice):
    """A legal move, or one with a single field nudged."""
    move = rng.choice(GAME.legal_moves(state, seat))
    fields = move.__struct_fields__
    if not fields or rng.below(3) == 0:
        return move
    field = rng.choice(fields)
    value = getattr(move, field)
    if field == "payment":
        units = list(value)
        choice = rng.below(3)
        if choice == 0 and len(units) > 1:
            new = rng.shuffle(units)
        elif choice == 1 and units:
            new = tuple(units[:-1])
        else:
            new = (*units, rng.choice([*DICE, WILD]))
        return msgspec.structs.replace(move, payment=tuple(new))
    if field == "count":
        return msgspec.structs.replace(move, count=value + rng.choice((-1, 1)))
    if field in ("die", "unit"):
        return msgspec.structs.replace(move, **{field: rng.choice([*dice, WILD])})
    return msgspec.structs.replace(move, **{field: rng.choice([*near, PILE, ""])})


@pytest.mark.parametrize("seed", range(4))
def test_decide_accepts_exactly_the_legal_moves(seed):
    rng = Rng(seed.to_bytes(2, "big") + b"candidates")
    enc = msgspec.msgpack.encode
    checked = accepted = 0

    def check(before, step, after):
        nonlocal checked, accepted
        seat = GAME.awaiting(before)[0]
        legal = {enc(m) for m in GAME.legal_moves(before, seat)}
        for _ in range(60):
            move = candidate(before, seat, rng)
            try:
                GAME.decide(before, seat, move, b"e")
                ok = True
            except EngineError:
                ok = False
            assert ok == (enc(move) in legal), (move, ok)
            checked += 1
            accepted += ok

    playout(GAME, 2, seed, bots=RandomBot(), on_step=check)
    assert checked > 1000 and accepted > 50
