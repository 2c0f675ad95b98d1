"""Arcane Academy's moves (commands). Spaces are ``x`` (column 0-3) and ``y``
(row 0-2); ``part`` indexes the actions of the tile being resolved."""

from __future__ import annotations

from engine_core.types import Move


class Cast(Move):
    """Activate and exhaust the top component of ``(x, y)`` (§4.1)."""

    x: int
    y: int


class Rest(Move):
    """Clear every token; optionally discard ``discard`` from the hand and draw (§4.2)."""

    discard: str | None = None


class CollectShards(Move):
    """Perform the Shard option of ``part`` (Chaos Magic: 1)."""

    part: int


class GainWill(Move):
    """Perform the Will option of ``part`` (Chaos Magic: 1)."""

    part: int


class TakeTile(Move):
    """Add Tile: take market ``slot``. ``part`` None = the Add Tile of a card effect."""

    slot: int
    part: int | None = None


class UseItem(Move):
    """Use Item: resolve ``item``'s USE ability once. ``part`` None = S09's granted use."""

    item: str
    part: int | None = None


class CompleteAssignment(Move):
    """Complete ``card`` (a public card or one in your hand) with ``part``."""

    card: str
    part: int


class SkipPart(Move):
    """Perform nothing for ``part`` of the tile being resolved."""

    part: int


class RemoveToken(Move):
    """Remove the Exhaustion token from ``(x, y)`` (S03 Mending Charm, I03 Hourglass)."""

    x: int
    y: int


class DeclineEffect(Move):
    """Decline a granted Add Tile or Use Item, or stop S03's removals early."""


class ResolveLinked(Move):
    """Start resolving the linked tile on ``(x, y)`` (§4.1 step 4)."""

    x: int
    y: int


class FinishCast(Move):
    """End the cast, leaving the linked tiles not yet started unused."""


class PlaceTile(Move):
    """Place held ``tile`` on ``(x, y)`` at ``rotation`` quarter turns clockwise (§5.7)."""

    tile: str
    x: int
    y: int
    rotation: int


ArcaneMove = (
    Cast
    | Rest
    | CollectShards
    | GainWill
    | TakeTile
    | UseItem
    | CompleteAssignment
    | SkipPart
    | RemoveToken
    | DeclineEffect
    | ResolveLinked
    | FinishCast
    | PlaceTile
)
