"""What each seat may see (§7): other seats' hands and discards are counts;
the bag and the deck are counts for everybody."""

from __future__ import annotations

from collections.abc import Collection, Mapping

import msgspec
from msgspec.structs import replace

from engine_core.games.arcane_academy import data
from engine_core.games.arcane_academy.events import (
    ArcaneEvent,
    BagShuffled,
    CardDiscarded,
    CardDrawn,
    DeckShuffled,
)
from engine_core.games.arcane_academy.rules import prestige
from engine_core.games.arcane_academy.state import Cast, Effect, Player, Space, State
from engine_core.rng import Rng
from engine_core.types import Outcome, Seat

XYPair = tuple[int, int]


class SpaceView(msgspec.Struct, frozen=True, kw_only=True):
    x: int
    y: int
    stack: tuple[str, ...]  # bottom to top; corners K1-K4 at the bottom
    rotations: tuple[int, ...]
    exhausted: bool
    connectors: str  # the top's connectors as placed, e.g. "N,E"


class PlayerView(msgspec.Struct, frozen=True, kw_only=True):
    seat: Seat
    will: int
    shards: int
    slate: tuple[SpaceView, ...]  # index y * 4 + x
    hand: tuple[str, ...] | None  # only for the owner
    hand_count: int
    discarded: tuple[str, ...] | None  # only for the owner
    spells: tuple[str, ...]
    items: tuple[str, ...]
    tokens: tuple[int, ...]
    held: tuple[str, ...]
    completed: int
    prestige: int  # as it would score now


class CastView(msgspec.Struct, frozen=True, kw_only=True):
    origin: XYPair
    linked: tuple[XYPair, ...]
    started: tuple[XYPair, ...]
    current: XYPair | None
    component: str
    parts_done: tuple[bool, ...]


class View(msgspec.Struct, frozen=True, kw_only=True):
    viewer: Seat | None
    players: tuple[PlayerView, ...]
    first_player: Seat
    current: Seat
    phase: str
    turn_kind: str
    round: int
    market: tuple[str | None, ...]
    public: tuple[str | None, ...]
    bag_count: int
    deck_count: int
    discard_count: int
    cast: CastView | None
    effect: Effect | None
    extra_owed: int
    pencils_down: Seat | None
    final_queue: tuple[Seat, ...]
    outcome: Outcome | None


def _space_view(i: int, sp: Space) -> SpaceView:
    x, y = data.XY[i]
    conn = data.CONNECTORS[sp.stack[-1]][sp.rotations[-1]] if sp.stack else 0
    return SpaceView(
        x=x,
        y=y,
        stack=sp.stack,
        rotations=sp.rotations,
        exhausted=sp.exhausted,
        connectors=data.mask_text(conn),
    )


def _player_view(seat: Seat, p: Player, viewer: Seat | None) -> PlayerView:
    mine = viewer == seat
    return PlayerView(
        seat=seat,
        will=p.will,
        shards=p.shards,
        slate=tuple(_space_view(i, sp) for i, sp in enumerate(p.slate)),
        hand=p.hand if mine else None,
        hand_count=len(p.hand),
        discarded=p.discarded if mine else None,
        spells=p.spells,
        items=p.items,
        tokens=p.tokens,
        held=p.held,
        completed=p.completed,
        prestige=prestige(p),
    )


def _cast_view(c: Cast) -> CastView:
    xy = data.XY
    return CastView(
        origin=xy[c.origin],
        linked=tuple(xy[i] for i in c.linked),
        started=tuple(xy[i] for i in c.started),
        current=None if c.current is None else xy[c.current],
        component=c.component,
        parts_done=c.parts_done,
    )


def view(state: State, seat: Seat | None) -> View:
    return View(
        viewer=seat,
        players=tuple(_player_view(s, p, seat) for s, p in enumerate(state.players)),
        first_player=state.first_player,
        current=state.current,
        phase=state.phase,
        turn_kind=state.turn_kind,
        round=state.round,
        market=state.market,
        public=state.public,
        bag_count=len(state.bag),
        deck_count=len(state.deck),
        discard_count=state.discard_count,
        cast=None if state.cast is None else _cast_view(state.cast),
        effect=state.effect,
        extra_owed=state.extra_owed,
        pencils_down=state.pencils_down,
        final_queue=state.final_queue,
        outcome=state.outcome,
    )


def redact(event: ArcaneEvent, seat: Seat | None) -> ArcaneEvent:
    match event:
        case BagShuffled():
            return replace(event, tiles=None)
        case DeckShuffled():
            return replace(event, cards=None)
        case CardDrawn() | CardDiscarded():
            return event if event.seat == seat else replace(event, card=None)
        case _:
            return event


def secrets(state: State) -> Mapping[Seat | None, Collection[str]]:
    out: dict[Seat | None, Collection[str]] = {
        s: p.hand + p.discarded for s, p in enumerate(state.players)
    }
    out[None] = state.bag + state.deck
    return out


def _index(xy: XYPair) -> int:
    return xy[1] * data.COLS + xy[0]


def sample_state(v: View, seat: Seat, rng: Rng) -> State:
    """A full state consistent with seat ``seat``'s view (for search bots).

    The Assignments the viewer cannot see (the deck, the other seats' hands
    and Rest discards) are dealt at random from the cards not in sight, and
    the bag from the tiles not in sight. The view does not say which other
    seat discarded how many cards; they are spread in seat order. Two public
    facts the view leaves out are inferred: whether the deck ran out (an
    empty deck) and why pencils went down (the first of deck out,
    completions, round limit that holds now).
    """
    me = v.players[seat]
    if me.hand is None or me.discarded is None:
        raise ValueError(f"the view is not seat {seat}'s")
    on_slates = {t for p in v.players for sp in p.slate for t in sp.stack}
    seen_tiles = on_slates | {t for t in v.market if t} | {t for p in v.players for t in p.held}
    bag = rng.shuffle([t for t in data.TILE_IDS if t not in seen_tiles])
    if len(bag) != v.bag_count:
        raise ValueError(f"{len(bag)} unseen tiles for a bag of {v.bag_count}")
    seen_cards = (
        {c for c in v.public if c}
        | set(me.hand)
        | set(me.discarded)
        | {c for p in v.players for c in (*p.spells, *p.items)}
    )
    pool = list(rng.shuffle([c for c in data.CARD_IDS if c not in seen_cards]))
    others_discarded = v.discard_count - len(me.discarded)
    players = []
    for s, pv in enumerate(v.players):
        if s == seat:
            hand, discarded = me.hand, me.discarded
        else:
            hand, pool = tuple(pool[: pv.hand_count]), pool[pv.hand_count :]
            k = others_discarded if s == max(i for i in range(len(v.players)) if i != seat) else 0
            discarded, pool = tuple(pool[:k]), pool[k:]
            others_discarded -= k
        players.append(
            Player(
                will=pv.will,
                shards=pv.shards,
                slate=tuple(
                    Space(stack=sp.stack, rotations=sp.rotations, exhausted=sp.exhausted)
                    for sp in pv.slate
                ),
                hand=hand,
                discarded=discarded,
                spells=pv.spells,
                items=pv.items,
                tokens=pv.tokens,
                held=pv.held,
            )
        )
    if len(pool) != v.deck_count:
        raise ValueError(f"{len(pool)} unseen cards for a deck of {v.deck_count}")
    cast = None
    if v.cast is not None:
        c = v.cast
        cast = Cast(
            origin=_index(c.origin),
            linked=tuple(_index(xy) for xy in c.linked),
            started=tuple(_index(xy) for xy in c.started),
            current=None if c.current is None else _index(c.current),
            component=c.component,
            parts_done=c.parts_done,
        )
    emptied = v.current if v.deck_count == 0 else None
    end_reason = ""
    if v.pencils_down is not None:
        if emptied is not None:
            end_reason = "deck_out"
        elif any(p.completed >= data.PENCILS_DOWN_AT for p in v.players):
            end_reason = "completions"
        else:
            end_reason = "round_limit"
    return State(
        players=tuple(players),
        first_player=v.first_player,
        current=v.current,
        phase=v.phase,
        turn_kind=v.turn_kind,
        round=v.round,
        market=v.market,
        bag=bag,
        public=v.public,
        deck=tuple(pool),
        discard_count=v.discard_count,
        cast=cast,
        effect=v.effect,
        extra_owed=v.extra_owed,
        deck_emptied_by=emptied,
        pencils_down=v.pencils_down,
        end_reason=end_reason,
        final_queue=v.final_queue,
        outcome=v.outcome,
    )
