"""The state of a Dice Forge match: players, Temple, islands, and the agenda.

The agenda is the explicit state machine of the turn (see ``rules.py``):

* ``flow`` is the queue of turn steps (phase 1 blessings, reinforcements, the
  action, a feat's effects, the end of the turn), front first; its head is
  either worked off automatically or waits for the decision of its ``seat``;
* ``lanes`` hold, per seat, the pending parts of blessings that seat is
  resolving (mirror targets, choice faces, gold allocation, ships, Boar
  rewards, Cerberus). Lanes are worked off before the flow moves on. Every
  seat whose lane waits for a decision is awaited at the same time; steps
  whose result depends on other seats (a Mirror target, a Ship purchase and
  its forge) wait until every seat before it in ``lane_order`` is done.
"""

from __future__ import annotations

import msgspec

from engine_core.types import Outcome, snake_case


class Player(msgspec.Struct, frozen=True, kw_only=True):
    gold: int = 0
    sun: int = 0
    moon: int = 0
    glory: int = 0
    dice: tuple[tuple[str, ...], tuple[str, ...]]
    up: tuple[int, int] = (0, 0)
    """Index of the face showing on each die."""
    discard: tuple[str, ...] = ()
    """Faces removed from this player's dice by forging (Typhon counts them)."""
    cards: tuple[str, ...] = ()
    """Card ids owned, in the order taken (``card`` of ``UseReinforcement`` indexes this)."""
    hammers: int = 0
    """Hammer tokens still on the track (unfinished Hammer cards)."""
    hammer_pos: int = 0
    """Position of the current Hammer token, 0..29 (15..29 = phase II)."""
    cerberus: int = 0
    triton: int = 0
    pawn: int = 0
    """0 = own start portal, 1..7 = island."""


# ------------------------------------------------------------------ tasks
class Task(msgspec.Struct, frozen=True, kw_only=True, tag_field="task", tag=snake_case):
    seat: int


# Lane tasks (parts of a blessing)
class Bless(Task):
    """A blessing being resolved: ``faces`` as rolled (or chosen, for Satyrs)."""

    faces: tuple[str, ...]
    kind: str  # divine | minor | satyrs | minotaur
    mod: str = ""  # "" | sentinel | cyclops
    cerberus: bool = False  # a Cerberus repeat may follow
    eff: tuple[str, ...] = ()  # the faces with Mirrors replaced once chosen
    picks: tuple[str, ...] = ()  # option chosen per face ("" = none yet)


class Gain(Task):
    gold: int = 0
    sun: int = 0
    moon: int = 0
    glory: int = 0
    mod: str = ""
    source: str = ""


class Lose(Task):
    gold: int = 0
    sun: int = 0
    moon: int = 0
    glory: int = 0


class BoarReward(Task):
    colour: str


class CerberusOffer(Task):
    faces: tuple[str, ...]
    kind: str
    mod: str = ""


class ShipOrder(Task):
    span: int  # the next ``span`` lane tasks: one Gain, then the ShipOffers


class ShipOffer(Task):
    discount: int


class PlaceFace(Task):
    """A face that ``seat`` must forge now (bought, from a Garden, or a Boar)."""

    face: str


# Flow tasks (the turn)
class BlessAll(Task):
    pass


class BlessSeat(Task):
    mod: str = ""


class MinorBless(Task):
    die: int
    mod: str = ""


class Reinforce(Task):
    used: tuple[int, ...] = ()


class Action(Task):
    extra: bool = False


class Offering(Task):
    bought: tuple[str, ...]


class TakeCard(Task):
    slot: int


class ChooseBearer(Task):
    colour: str


class PickShield(Task):
    pass


class PickSatyrs(Task):
    pass


class PickMinorDie(Task):
    mod: str = ""


class EndOfTurn(Task):
    pass


AnyTask = (
    Bless | Gain | Lose | BoarReward | CerberusOffer | ShipOrder | ShipOffer | PlaceFace
    | BlessAll | BlessSeat | MinorBless | Reinforce | Action | Offering | TakeCard
    | ChooseBearer | PickShield | PickSatyrs | PickMinorDie | EndOfTurn
)  # fmt: skip


class State(msgspec.Struct, frozen=True, kw_only=True):
    players: tuple[Player, ...]
    rounds: int
    round: int = 1
    active: int = 0
    cards: tuple[str, ...]
    """The card set chosen for each slot, in ``data.SLOTS`` order."""
    stacks: tuple[tuple[str, ...], ...]
    """Cards left on each slot, top first."""
    sanctuary: tuple[tuple[str, ...], ...]
    gardens: tuple[tuple[str, ...], ...]
    removed: tuple[str, ...] = ()
    """Faces removed from the Sanctuary at setup (2 players)."""
    lanes: tuple[tuple[AnyTask, ...], ...] = ()
    lane_order: tuple[int, ...] = ()
    flow: tuple[AnyTask, ...] = ()
    outcome: Outcome | None = None
