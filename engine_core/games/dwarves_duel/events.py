"""Events: the facts of a match, in the past tense (spec §6-§8).

All events are public except ``CardsDrawn.cards`` (only its owner sees them)
and ``DeckShuffled.order`` (nobody sees it); ``view.redact`` removes them.
"""

from __future__ import annotations

from engine_core.games.dwarves_duel.state import Point
from engine_core.types import Event, Seat


class GameStarted(Event):
    sides: tuple[str, str]  # side of seat 0, seat 1
    first_player: Seat
    always_offer_windows: bool


class DeckShuffled(Event):
    seat: Seat
    order: tuple[str, ...]  # top card first; redacted to () for every viewer


class CardsDrawn(Event):
    seat: Seat
    count: int
    cards: tuple[str, ...]  # redacted to () for everybody but ``seat``


class TurnStarted(Event):
    seat: Seat
    turn: int


class PhaseChanged(Event):
    seat: Seat
    phase: str  # "preroll", "card" or "ending"


class DiceRolled(Event):
    seat: Seat
    faces: tuple[str, ...]  # dice d0.. in order


class DieRerolled(Event):
    seat: Seat
    die: str
    source: str
    old: str
    new: str


class DieConverted(Event):
    seat: Seat
    die: str
    old: str
    cause: str  # "king" (ALLY_KING) or "event" (EV_WILDFACE)


class CardPlayed(Event):
    """A card left its owner's hand, revealed, its cost paid."""

    seat: Seat
    card: str
    payment: tuple[str, ...]


class CardEnteredDisplay(Event):
    seat: Seat
    card: str


class CardDiscarded(Event):
    """A resolved Event or Twist went to its owner's discard pile."""

    seat: Seat
    card: str


class ExtraDicePending(Event):
    seat: Seat


class AllyActivated(Event):
    seat: Seat
    ally: str
    unit: str


class DamageDeclared(Event):
    by: Seat
    source: str
    owner: Seat
    target: str


class WindowOpened(Event):
    kind: str
    holder: Seat
    point: Point | None = None


class WindowClosed(Event):
    kind: str
    holder: Seat
    passed: bool  # False: closed by the engine (the holder had no legal Twist)


class DamageCancelled(Event):
    seat: Seat
    card: str


class CardBurned(Event):
    """The top card of ``seat``'s draw pile went face up onto the discard pile."""

    seat: Seat
    card: str


class DamageDealt(Event):
    seat: Seat
    card: str
    damage: int  # the card's damage this turn, after this point


class CardDefeated(Event):
    seat: Seat
    card: str


class DamageFizzled(Event):
    owner: Seat
    target: str


class CardRemoved(Event):
    """EV_REMOVE moved ``card`` from ``seat``'s display to ``seat``'s discard pile."""

    seat: Seat
    card: str
    by: Seat


class CardRecovered(Event):
    seat: Seat
    card: str


class WildCardTaken(Event):
    seat: Seat
    source: str  # "middle" or "opponent"


class TurnEnded(Event):
    """Dice back to the middle, every display card regenerated."""

    seat: Seat


class GameEnded(Event):
    reason: str
    emptied_by: Seat
    scores: tuple[int, int]
    winner: Seat
    tiebreak: bool
    ranks: tuple[int, int]


DwarvesEvent = (
    GameStarted
    | DeckShuffled
    | CardsDrawn
    | TurnStarted
    | PhaseChanged
    | DiceRolled
    | DieRerolled
    | DieConverted
    | CardPlayed
    | CardEnteredDisplay
    | CardDiscarded
    | ExtraDicePending
    | AllyActivated
    | DamageDeclared
    | WindowOpened
    | WindowClosed
    | DamageCancelled
    | CardBurned
    | DamageDealt
    | CardDefeated
    | DamageFizzled
    | CardRemoved
    | CardRecovered
    | WildCardTaken
    | TurnEnded
    | GameEnded
)
