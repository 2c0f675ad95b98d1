"""Arcane Academy's events (facts, past tense). Spaces are ``(x, y)`` pairs."""

from __future__ import annotations

from engine_core.types import Event, Seat

XYPair = tuple[int, int]


# ------------------------------------------------------------------- setup
class GameStarted(Event):
    players: int
    first_player: Seat


class BagShuffled(Event):
    """The bag order, front first. Hidden from everybody (``tiles`` redacted)."""

    count: int
    tiles: tuple[str, ...] | None = None


class DeckShuffled(Event):
    """The deck order, top first. Hidden from everybody (``cards`` redacted)."""

    count: int
    cards: tuple[str, ...] | None = None


class TileDrawn(Event):
    """The bag's front tile went to market ``slot``."""

    slot: int
    tile: str


class CardRevealed(Event):
    """The deck's top card went face up to public ``slot``."""

    slot: int
    card: str


class CardDrawn(Event):
    """The deck's top card went to ``seat``'s hand (``card`` redacted for others)."""

    seat: Seat
    card: str | None = None


# -------------------------------------------------------------------- turns
class TurnStarted(Event):
    seat: Seat
    kind: str  # normal | extra | final
    round: int


class Rested(Event):
    """Every Exhaustion token left ``seat``'s slate (``spaces`` had one)."""

    seat: Seat
    spaces: tuple[XYPair, ...]


class CardDiscarded(Event):
    """A hand card went face down to the discard pile (``card`` redacted for others)."""

    seat: Seat
    card: str | None = None


class TileActivated(Event):
    """``seat`` cast ``(x, y)``: its top ``component`` got a token; ``linked``
    is the fixed linked set (§4.1 step 2)."""

    seat: Seat
    x: int
    y: int
    component: str
    linked: tuple[XYPair, ...]


class LinkedTileStarted(Event):
    seat: Seat
    x: int
    y: int
    component: str


class PartPerformed(Event):
    """``part`` of the tile being resolved was performed as ``action``."""

    seat: Seat
    part: int
    action: str


class PartSkipped(Event):
    seat: Seat
    part: int


class TileResolved(Event):
    """Every part of the tile on ``(x, y)`` is done."""

    seat: Seat
    x: int
    y: int


class CastFinished(Event):
    seat: Seat


# ---------------------------------------------------------------- resources
class WillGained(Event):
    """``amount`` Will added; ``lost`` more was over the cap of 9."""

    seat: Seat
    amount: int
    lost: int = 0


class ShardsCollected(Event):
    seat: Seat
    amount: int


class ResourcesSpent(Event):
    """A USE ability's payment."""

    seat: Seat
    will: int = 0
    shards: int = 0


# -------------------------------------------------------------------- tiles
class TileTaken(Event):
    """Market ``slot``'s ``tile`` is now held by ``seat``."""

    seat: Seat
    slot: int
    tile: str


class TilePlaced(Event):
    """Held ``tile`` went on ``(x, y)`` at ``rotation``, covering ``covered``
    (if any); ``exhausted`` tells whether a token rose onto it."""

    seat: Seat
    tile: str
    x: int
    y: int
    rotation: int
    covered: str | None = None
    exhausted: bool = False


class TokensRemoved(Event):
    seat: Seat
    spaces: tuple[XYPair, ...]


# -------------------------------------------------------------- assignments
class AssignmentCompleted(Event):
    """``card`` (from public ``slot``, or the hand when ``slot`` is None) was
    paid and is now ``seat``'s (a Spell tucked, an Item face up)."""

    seat: Seat
    card: str
    slot: int | None
    will_paid: int = 0
    shards_paid: int = 0


class ItemUsed(Event):
    seat: Seat
    item: str


class PrestigeTokenAdded(Event):
    seat: Seat
    item: str
    value: int = 1


class EffectPending(Event):
    """A granted action waits for ``seat``'s choice (see ``Effect``)."""

    seat: Seat
    kind: str
    source: str
    remaining: int = 1
    optional: bool = True
    then_shards: int = 0


class EffectEnded(Event):
    seat: Seat


class ExtraTurnGranted(Event):
    seat: Seat


class ExtraTurnCancelled(Event):
    seat: Seat
    count: int


# ----------------------------------------------------------------- the end
class DeckEmptied(Event):
    """``seat`` took the deck's last card (§6.2)."""

    seat: Seat


class PencilsDown(Event):
    """``seat`` took the Pencils Down card; ``final_order`` are the final turns."""

    seat: Seat
    reason: str  # completions | deck_out | round_limit
    final_order: tuple[Seat, ...]


class GameEnded(Event):
    ranks: tuple[int, ...]
    scores: tuple[float, ...]
    prestige: tuple[int, ...]
    completed: tuple[int, ...]
    reason: str


ArcaneEvent = (
    GameStarted
    | BagShuffled
    | DeckShuffled
    | TileDrawn
    | CardRevealed
    | CardDrawn
    | TurnStarted
    | Rested
    | CardDiscarded
    | TileActivated
    | LinkedTileStarted
    | PartPerformed
    | PartSkipped
    | TileResolved
    | CastFinished
    | WillGained
    | ShardsCollected
    | ResourcesSpent
    | TileTaken
    | TilePlaced
    | TokensRemoved
    | AssignmentCompleted
    | ItemUsed
    | PrestigeTokenAdded
    | EffectPending
    | EffectEnded
    | ExtraTurnGranted
    | ExtraTurnCancelled
    | DeckEmptied
    | PencilsDown
    | GameEnded
)
