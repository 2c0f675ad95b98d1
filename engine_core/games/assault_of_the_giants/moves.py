"""Moves (imperative intents). Units and regions are indices into the tables
of ``data.py``; resource cards are named by kind (``food``, ``rune_haug``,
``armament``: the engine takes the first such card of the owner's area);
spells by their card id (``sp07``)."""

from __future__ import annotations

from engine_core.types import Move


class ClaimEvent(Move):
    event: str  # H1 .. T3, U01 .. U12
    payment: str  # a rune kind, "free", or "food" (U12: four Food)
    remove: int = -1  # unit returned to supply to make room (R2, T2)


class PlayCommand(Move):
    command: str


class Maneuver(Move):
    unit: int
    to: int


class MoveLyn(Move):
    to: int


class PayToll(Move):
    card: str  # a resource kind, or "wound"


class EndMove(Move):
    pass


class DeclareBattle(Move):
    target: int


class AddAttacker(Move):
    unit: int


class StartBattle(Move):
    pass


class Reroll(Move):
    dice: tuple[int, ...]  # pool positions, ascending


class ConvertArcane(Move):
    into: str  # "block" (Magic / NPC) or "hits" (Attack)
    dice: tuple[int, ...]  # one pool position per converted arcane symbol, ascending
    # (a die showing two arcane symbols may appear twice)


class CastSpell(Move):
    spell: str
    # Fortune: the pool positions to re-roll; Arcane Surge: one pool position per
    # arcane symbol to turn into a hit (as in ``ConvertArcane``)
    dice: tuple[int, ...] = ()


class PlayArmament(Move):
    effect: str  # "hit" or "block"


class FinalizeRoll(Move):
    pass


class AssignCasualty(Move):
    unit: int


class CastMend(Move):
    spell: str
    unit: int


class PassMend(Move):
    pass


class Advance(Move):
    unit: int


class EndAdvance(Move):
    pass


class EndAttack(Move):
    pass


class Recruit(Move):
    kind: str  # regular, elite, champion, leader, hekaton, vonindod
    remove: int = -1


class EndRecruit(Move):
    pass


class StartTrade(Move):
    mode: str  # deck, forced, offer
    partner: int = -1  # a seat (forced, offer)


class GiveCard(Move):
    card: str  # resource kind


class RequestCard(Move):
    card: str  # resource kind from the partner's area


class ConfirmTrade(Move):
    take: str = ""  # deck trade: a kind to take from the discard pile, or ""


class ReturnCard(Move):
    card: str  # forced trade: the partner returns one card (kind)


class RespondOffer(Move):
    accept: bool


class EndTrade(Move):
    pass


class LeaderAbility(Move):
    lyn_to: int = -1  # Sansuri: where Lyn Armaal goes afterwards (-1 = stays)


class LeaderReturn(Move):
    remove: int = -1


class LeaderPass(Move):
    pass


class DiscardSpell(Move):
    spell: str


class Plunder(Move):
    region: int


class EndPlunder(Move):
    pass


class HealUnit(Move):
    unit: int
    food: bool = False  # pay one Food (only once the free heals are used up)


class EndHeal(Move):
    pass


class GsRecruit(Move):
    region: int  # the lowest-numbered off-board giantslayer is placed


class GsMove(Move):
    slayer: int
    to: int


class GsAttack(Move):
    region: int
    slayers: tuple[int, ...]


class EndRest(Move):
    pass


AssaultMove = (
    ClaimEvent | PlayCommand | Maneuver | MoveLyn | PayToll | EndMove | DeclareBattle
    | AddAttacker | StartBattle | Reroll | ConvertArcane | CastSpell | PlayArmament
    | FinalizeRoll | AssignCasualty | CastMend | PassMend | Advance | EndAdvance | EndAttack
    | Recruit | EndRecruit | StartTrade | GiveCard | RequestCard | ConfirmTrade | ReturnCard
    | RespondOffer | EndTrade | LeaderAbility | LeaderReturn | LeaderPass | DiscardSpell
    | Plunder | EndPlunder | HealUnit | EndHeal | GsRecruit | GsMove | GsAttack | EndRest
)  # fmt: skip
