"""Apply one event to the state: facts only, no legality checks, no randomness."""

from __future__ import annotations

from typing import assert_never

from msgspec.structs import replace

from engine_core.games.arcane_academy import data
from engine_core.games.arcane_academy.events import (
    ArcaneEvent,
    AssignmentCompleted,
    BagShuffled,
    CardDiscarded,
    CardDrawn,
    CardRevealed,
    CastFinished,
    DeckEmptied,
    DeckShuffled,
    EffectEnded,
    EffectPending,
    ExtraTurnCancelled,
    ExtraTurnGranted,
    GameEnded,
    GameStarted,
    ItemUsed,
    LinkedTileStarted,
    PartPerformed,
    PartSkipped,
    PencilsDown,
    PrestigeTokenAdded,
    ResourcesSpent,
    Rested,
    ShardsCollected,
    TileActivated,
    TileDrawn,
    TilePlaced,
    TileResolved,
    TileTaken,
    TokensRemoved,
    TurnStarted,
    WillGained,
)
from engine_core.games.arcane_academy.state import Cast, Effect, Player, Space, State
from engine_core.types import Outcome


def _fresh_slate() -> tuple[Space, ...]:
    slate = [Space() for _ in range(data.SPACES)]
    for corner, i in data.CORNER_SPACE.items():
        slate[i] = Space(stack=(corner,), rotations=(0,))
    return tuple(slate)


FRESH_SLATE = _fresh_slate()


def _set(t: tuple, i: int, v: object) -> tuple:
    return (*t[:i], v, *t[i + 1 :])


def _player(state: State, seat: int, **changes: object) -> State:
    p = replace(state.players[seat], **changes)
    return replace(state, players=_set(state.players, seat, p))


def _set_tokens(state: State, seat: int, spaces: tuple[tuple[int, int], ...], on: bool) -> State:
    slate = list(state.players[seat].slate)
    for x, y in spaces:
        i = y * data.COLS + x
        slate[i] = replace(slate[i], exhausted=on)
    return _player(state, seat, slate=tuple(slate))


def _done_part(state: State, part: int) -> State:
    cast = state.cast
    assert cast is not None
    return replace(state, cast=replace(cast, parts_done=_set(cast.parts_done, part, True)))


def evolve(state: State | None, event: ArcaneEvent) -> State:
    if isinstance(event, GameStarted):
        p = Player(will=data.START_WILL, shards=data.START_SHARDS, slate=FRESH_SLATE)
        return State(
            players=(p,) * event.players,
            first_player=event.first_player,
            current=event.first_player,
        )
    assert state is not None
    match event:
        case GameStarted():  # handled above
            return state
        case BagShuffled(tiles=tiles):
            return replace(state, bag=tiles or ())
        case DeckShuffled(cards=cards):
            return replace(state, deck=cards or ())
        case TileDrawn(slot=slot, tile=tile):
            return replace(state, market=_set(state.market, slot, tile), bag=state.bag[1:])
        case CardRevealed(slot=slot, card=card):
            return replace(state, public=_set(state.public, slot, card), deck=state.deck[1:])
        case CardDrawn(seat=seat, card=card):
            hand = (*state.players[seat].hand, card or "")
            return replace(_player(state, seat, hand=hand), deck=state.deck[1:])
        case TurnStarted(seat=seat, kind=kind, round=rnd):
            return replace(
                state,
                current=seat,
                phase="turn_start",
                turn_kind=kind,
                round=rnd,
                cast=None,
                effect=None,
                extra_owed=state.extra_owed - 1 if kind == "extra" else state.extra_owed,
                final_queue=state.final_queue[1:] if kind == "final" else state.final_queue,
            )
        case Rested(seat=seat, spaces=spaces):
            return replace(_set_tokens(state, seat, spaces, False), phase="end_of_turn")
        case CardDiscarded(seat=seat, card=card):
            p = state.players[seat]
            hand = tuple(c for c in p.hand if c != card)
            state = _player(state, seat, hand=hand, discarded=(*p.discarded, card or ""))
            return replace(state, discard_count=state.discard_count + 1)
        case TileActivated(seat=seat, x=x, y=y, component=component, linked=linked):
            state = _set_tokens(state, seat, ((x, y),), True)
            origin = y * data.COLS + x
            cast = Cast(
                origin=origin,
                linked=tuple(ly * data.COLS + lx for lx, ly in linked),
                current=origin,
                component=component,
                parts_done=(False,) * len(data.PARTS[component]),
            )
            return replace(state, phase="resolving", cast=cast)
        case LinkedTileStarted(x=x, y=y, component=component):
            assert state.cast is not None
            i = y * data.COLS + x
            cast = replace(
                state.cast,
                started=(*state.cast.started, i),
                current=i,
                component=component,
                parts_done=(False,) * len(data.PARTS[component]),
            )
            return replace(state, phase="resolving", cast=cast)
        case PartPerformed(part=part) | PartSkipped(part=part):
            return _done_part(state, part)
        case TileResolved():
            assert state.cast is not None
            cast = replace(state.cast, current=None, component="", parts_done=())
            return replace(state, phase="choose_linked", cast=cast)
        case CastFinished():
            return replace(state, phase="place_tiles", cast=None)
        case WillGained(seat=seat, amount=amount):
            return _player(state, seat, will=state.players[seat].will + amount)
        case ShardsCollected(seat=seat, amount=amount):
            return _player(state, seat, shards=state.players[seat].shards + amount)
        case ResourcesSpent(seat=seat, will=will, shards=shards):
            p = state.players[seat]
            return _player(state, seat, will=p.will - will, shards=p.shards - shards)
        case TileTaken(seat=seat, slot=slot, tile=tile):
            state = _player(state, seat, held=(*state.players[seat].held, tile))
            return replace(state, market=_set(state.market, slot, None))
        case TilePlaced(seat=seat, tile=tile, x=x, y=y, rotation=rotation):
            p = state.players[seat]
            i = y * data.COLS + x
            sp = p.slate[i]
            sp = replace(sp, stack=(*sp.stack, tile), rotations=(*sp.rotations, rotation))
            held = tuple(t for t in p.held if t != tile)
            return _player(state, seat, slate=_set(p.slate, i, sp), held=held)
        case TokensRemoved(seat=seat, spaces=spaces):
            return _set_tokens(state, seat, spaces, False)
        case AssignmentCompleted(seat=seat, card=card, slot=slot, will_paid=wp, shards_paid=sp):
            p = state.players[seat]
            if slot is None:
                p = replace(p, hand=tuple(c for c in p.hand if c != card))
            else:
                state = replace(state, public=_set(state.public, slot, None))
            p = replace(p, will=p.will - wp, shards=p.shards - sp)
            if data.KIND[data.design(card)] == data.SPELL:
                p = replace(p, spells=(*p.spells, card))
            else:
                p = replace(p, items=(*p.items, card), tokens=(*p.tokens, 0))
            return replace(state, players=_set(state.players, seat, p))
        case ItemUsed():
            return state
        case PrestigeTokenAdded(seat=seat, item=item, value=value):
            p = state.players[seat]
            k = p.items.index(item)
            return _player(state, seat, tokens=_set(p.tokens, k, p.tokens[k] + value))
        case EffectPending(
            kind=kind, source=source, remaining=remaining, optional=optional, then_shards=ts
        ):
            effect = Effect(
                kind=kind, source=source, remaining=remaining, optional=optional, then_shards=ts
            )
            return replace(state, effect=effect)
        case EffectEnded():
            return replace(state, effect=None)
        case ExtraTurnGranted():
            return replace(state, extra_owed=state.extra_owed + 1)
        case ExtraTurnCancelled():
            return replace(state, extra_owed=0)
        case DeckEmptied(seat=seat):
            return replace(state, deck_emptied_by=seat)
        case PencilsDown(seat=seat, reason=reason, final_order=order):
            return replace(state, pencils_down=seat, end_reason=reason, final_queue=order)
        case GameEnded(ranks=ranks, scores=scores, reason=reason):
            outcome = Outcome(ranks=ranks, scores=scores, reason=reason)
            return replace(state, phase="over", outcome=outcome)
        case _:
            assert_never(event)
