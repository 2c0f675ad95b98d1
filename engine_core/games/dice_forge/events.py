"""Dice Forge events: facts a client can animate."""

from __future__ import annotations

from engine_core.games.dice_forge.state import AnyTask
from engine_core.types import Event


class GameStarted(Event):
    players: int
    rounds: int
    cards: tuple[str, ...]
    """The card set on each slot, in slot order M1..M8, F7, F5, F6, F3, F4, F1, F2."""
    sanctuary: tuple[tuple[str, ...], ...]
    removed: tuple[str, ...]
    gold: tuple[int, ...]


class TurnStarted(Event):
    seat: int
    round: int


class DiceRolled(Event):
    seat: int
    dice: tuple[int, ...]
    slots: tuple[int, ...]
    faces: tuple[str, ...]
    reason: str  # blessing | ousted | cancer | minor | satyrs | minotaur


class MirrorCopied(Event):
    seat: int
    face: str


class FacesApplied(Event):
    """A blessing's faces are applied: ``faces`` as resolved (Mirrors replaced by what they
    copied, ``NONE`` if nothing), ``options`` chosen per face ("" where none), ``kind``:
    divine | minor | satyrs | minotaur (applied as losses)."""

    seat: int
    faces: tuple[str, ...]
    options: tuple[str, ...]
    kind: str


class ResourcesGained(Event):
    seat: int
    gold: int = 0
    sun: int = 0
    moon: int = 0
    glory: int = 0
    lost_gold: int = 0
    lost_sun: int = 0
    lost_moon: int = 0
    source: str = ""


class ResourcesLost(Event):
    seat: int
    gold: int = 0
    sun: int = 0
    moon: int = 0
    glory: int = 0
    source: str = ""


class ResourcesSpent(Event):
    seat: int
    gold: int = 0
    sun: int = 0
    moon: int = 0
    reason: str = ""


class HammerAdvanced(Event):
    seat: int
    spaces: int
    position: int
    completed: int
    glory: int


class HammerTokenPlaced(Event):
    seat: int


class FaceBought(Event):
    seat: int
    face: str
    pool: str
    cost: int


class GardenFaceTaken(Event):
    seat: int
    face: str
    pool: str


class FaceForged(Event):
    seat: int
    die: int
    slot: int
    face: str
    replaced: str


class ExtraActionTaken(Event):
    seat: int
    sun: int


class FeatPerformed(Event):
    seat: int
    slot: str
    card: str
    sun: int
    moon: int


class PawnMoved(Event):
    seat: int
    island: int


class HeroOusted(Event):
    seat: int
    by: int


class CardTaken(Event):
    seat: int
    slot: str
    card: str


class TokenGained(Event):
    seat: int
    token: str  # cerberus | triton


class TokenUsed(Event):
    seat: int
    token: str


class ReinforcementUsed(Event):
    seat: int
    card: int
    card_id: str
    option: str


class ReinforcementsEnded(Event):
    seat: int


class OfferingFinished(Event):
    seat: int


class TurnEnded(Event):
    seat: int


class RoundEnded(Event):
    round: int


class GameEnded(Event):
    ranks: tuple[int, ...]
    scores: tuple[float, ...]
    reason: str


class AgendaChanged(Event):
    """The decisions now pending (the state machine); clients show whose input is needed."""

    lanes: tuple[tuple[AnyTask, ...], ...]
    lane_order: tuple[int, ...]
    flow: tuple[AnyTask, ...]


DiceForgeEvent = (
    GameStarted | TurnStarted | DiceRolled | MirrorCopied | FacesApplied | ResourcesGained
    | ResourcesLost | ResourcesSpent | HammerAdvanced | HammerTokenPlaced | FaceBought
    | GardenFaceTaken | FaceForged | ExtraActionTaken | FeatPerformed | PawnMoved | HeroOusted | CardTaken | TokenGained
    | TokenUsed | ReinforcementUsed | ReinforcementsEnded | OfferingFinished | TurnEnded
    | RoundEnded | GameEnded | AgendaChanged
)  # fmt: skip
