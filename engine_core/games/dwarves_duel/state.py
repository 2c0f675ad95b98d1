"""The full state of a match (never sent to clients as is: see ``view.py``)."""

from __future__ import annotations

from typing import Literal

import msgspec

from engine_core.types import Outcome, Seat

# Turn phases. ``ending`` is the moment between EndTurn and the next turn
# (the CP4 window); ``over`` once the game has ended.
DRAW, PREROLL, DICE_PHASE, CARD, ENDING, OVER = "draw", "preroll", "dice", "card", "ending", "over"
Phase = Literal["draw", "preroll", "dice", "card", "ending", "over"]

# Window kinds (spec §5.6): checkpoints for the non-active player, and the
# defender window of a pending damage point.
CP1, CP2, CP4, DEFEND = "cp1", "cp2", "cp4", "defend"
WindowKind = Literal["cp1", "cp2", "cp4", "defend"]


class DisplayCard(msgspec.Struct, frozen=True, kw_only=True):
    """A card face up in a display, with this turn's damage."""

    card: str
    damage: int = 0


class Player(msgspec.Struct, frozen=True, kw_only=True):
    side: str
    pile: tuple[str, ...] = ()  # draw pile, top card first; hidden from everybody
    hand: tuple[str, ...] = ()  # hidden from the other seat
    known: tuple[str, ...] = ()  # hand cards whose identity is public (taken by EV_RECOVER)
    display: tuple[DisplayCard, ...] = ()
    discard: tuple[str, ...] = ()  # bottom first, the top card last
    wild: int = 0  # Wild Cards in this player's display
    pending_extra_dice: int = 0  # TOF_EXTRADICE cards played since the last dice phase


class Die(msgspec.Struct, frozen=True, kw_only=True):
    """One die: ``face`` is "" while it lies in the middle."""

    face: str = ""
    used: bool = False


class Point(msgspec.Struct, frozen=True, kw_only=True):
    """A declared point of damage waiting in its defender window."""

    by: Seat  # who deals it
    source: str  # the Ally or Twist card that deals it
    owner: Seat  # whose pile or card it targets
    target: str  # "PILE" or a card id in the owner's display
    cancelled: bool = False


class Window(msgspec.Struct, frozen=True, kw_only=True):
    kind: WindowKind
    holder: Seat
    point: Point | None = None


class State(msgspec.Struct, frozen=True, kw_only=True):
    players: tuple[Player, Player]
    first_player: Seat
    active: Seat
    phase: Phase
    turn: int = 0
    dice: tuple[Die, ...] = (Die(),) * 6
    middle_wild: int = 3
    rerolls_used: tuple[str, ...] = ()  # SUP_REROLL cards used in this dice phase
    king_used: bool = False  # ALLY_KING conversion used this turn
    spent_unit: bool = False  # a die or Wild Card was spent this turn
    windows: tuple[Window, ...] = ()  # the window stack, the top last
    always_offer_windows: bool = False
    outcome: Outcome | None = None
