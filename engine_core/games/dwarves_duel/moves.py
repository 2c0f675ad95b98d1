"""Moves: the commands a seat sends (spec §8).

Card, die and target parameters are strings: card ids (``"G07"``), die ids
(``"d0"``..``"d5"``), ``"WILD"`` for a Wild Card unit and ``"PILE"`` for the
opponent's draw pile. A parameter a move does not need is ``""``.
"""

from __future__ import annotations

from engine_core.types import Move


class DrawCards(Move):
    """Draw phase: draw ``count`` cards (1 + one per SUP_DRAW in display, at most)."""

    count: int


class RollDice(Move):
    """Pre-roll step: roll the dice (the engine computes how many)."""


class RerollDie(Move):
    """Dice phase: re-roll ``die`` with the SUP_REROLL card ``source``."""

    die: str
    source: str


class EndDicePhase(Move):
    """Dice phase: stop re-rolling and go on to the card phase."""


class PlayCard(Move):
    """Card phase: play a non-Twist card from hand.

    ``payment``: die ids in ascending order, then ``"WILD"`` once per Wild
    Card. ``target``: EV_REMOVE's opponent display card. ``die``: EV_WILDFACE's
    die. ``pick``: EV_RECOVER's card from the own discard pile.
    """

    card: str
    payment: tuple[str, ...] = ()
    target: str = ""
    die: str = ""
    pick: str = ""


class PlayTwist(Move):
    """Play a Twist of Fate while holding the decision; ``target`` for TOF_STRIKE."""

    card: str
    target: str = ""


class ActivateAlly(Move):
    """Card phase: spend ``unit`` (a die id or ``"WILD"``) on ``ally`` for 1 damage at ``target``."""

    ally: str
    unit: str
    target: str


class KingConvert(Move):
    """Card phase, once per turn with ALLY_KING in display: turn ``die`` to W."""

    die: str


class Pass(Move):
    """Close the window you hold."""


class EndTurn(Move):
    """Card phase: end the turn."""


DwarvesMove = (
    DrawCards
    | RollDice
    | RerollDie
    | EndDicePhase
    | PlayCard
    | PlayTwist
    | ActivateAlly
    | KingConvert
    | Pass
    | EndTurn
)
