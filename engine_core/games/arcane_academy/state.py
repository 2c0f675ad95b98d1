"""Arcane Academy's state: game data apart from turn bookkeeping."""

from __future__ import annotations

import msgspec

from engine_core.types import Outcome, Seat


class Options(msgspec.Struct, frozen=True, kw_only=True):
    """Arcane Academy has no variants (§3: no per-count variation)."""


class Space(msgspec.Struct, frozen=True, kw_only=True):
    """One slate space: the stack bottom-to-top (corner ids ``K1``..``K4``
    at the bottom of their spaces), each component's rotation, and whether
    the top carries the Exhaustion token."""

    stack: tuple[str, ...] = ()
    rotations: tuple[int, ...] = ()
    exhausted: bool = False


class Player(msgspec.Struct, frozen=True, kw_only=True):
    will: int
    shards: int
    slate: tuple[Space, ...]  # index y * 4 + x
    hand: tuple[str, ...] = ()  # private Assignments (secret)
    discarded: tuple[str, ...] = ()  # cards this player discarded by Rest (secret)
    spells: tuple[str, ...] = ()  # completed Spells, tucked
    items: tuple[str, ...] = ()  # completed Items, face up
    tokens: tuple[int, ...] = ()  # Prestige tokens on each Item (parallel to items)
    held: tuple[str, ...] = ()  # tiles taken this turn, placed at end of turn

    @property
    def completed(self) -> int:
        return len(self.spells) + len(self.items)


class Cast(msgspec.Struct, frozen=True, kw_only=True):
    """The cast in progress. ``current`` is the space being resolved (None:
    choosing the next linked tile); ``linked`` was fixed at activation."""

    origin: int
    linked: tuple[int, ...]
    started: tuple[int, ...] = ()
    current: int | None = None
    component: str = ""
    parts_done: tuple[bool, ...] = ()


class Effect(msgspec.Struct, frozen=True, kw_only=True):
    """A granted action in progress (a card effect or a USE ability that needs
    a choice): ``add_tile``, ``use_item`` or ``remove_token``."""

    kind: str
    source: str  # the card whose effect this is
    remaining: int = 1
    optional: bool = True
    then_shards: int = 0  # S12: Shards collected once the Add Tile is done


class State(msgspec.Struct, frozen=True, kw_only=True):
    players: tuple[Player, ...]
    first_player: Seat
    current: Seat
    phase: str = "setup"  # turn_start | resolving | choose_linked | place_tiles | end_of_turn
    turn_kind: str = "normal"  # normal | extra | final
    round: int = 0
    market: tuple[str | None, ...] = (None, None, None, None)
    bag: tuple[str, ...] = ()  # front = next draw (secret)
    public: tuple[str | None, ...] = (None, None, None, None)
    deck: tuple[str, ...] = ()  # front = top (secret)
    discard_count: int = 0
    cast: Cast | None = None
    effect: Effect | None = None
    extra_owed: int = 0
    deck_emptied_by: Seat | None = None
    pencils_down: Seat | None = None
    end_reason: str = ""  # completions | deck_out | round_limit, once triggered
    final_queue: tuple[Seat, ...] = ()
    outcome: Outcome | None = None
