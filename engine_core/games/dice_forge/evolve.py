"""Apply one event to the state: records facts only, no rules."""

from __future__ import annotations

from typing import assert_never

import msgspec

from engine_core.games.dice_forge import data
from engine_core.games.dice_forge.events import (
    AgendaChanged,
    CardTaken,
    DiceForgeEvent,
    DiceRolled,
    ExtraActionTaken,
    FaceBought,
    FaceForged,
    FacesApplied,
    FeatPerformed,
    GameEnded,
    GameStarted,
    GardenFaceTaken,
    HammerAdvanced,
    HammerTokenPlaced,
    HeroOusted,
    MirrorCopied,
    OfferingFinished,
    PawnMoved,
    ReinforcementsEnded,
    ReinforcementUsed,
    ResourcesGained,
    ResourcesLost,
    ResourcesSpent,
    RoundEnded,
    TokenGained,
    TokenUsed,
    TurnEnded,
    TurnStarted,
)
from engine_core.games.dice_forge.state import Player, State
from engine_core.types import Outcome

_replace = msgspec.structs.replace


def _with(state: State, seat: int, player: Player) -> State:
    players = state.players
    return _replace(state, players=(*players[:seat], player, *players[seat + 1 :]))


def _remove_one(pool: tuple[str, ...], face: str) -> tuple[str, ...]:
    i = pool.index(face)
    return pool[:i] + pool[i + 1 :]


def evolve(state: State | None, event: DiceForgeEvent) -> State:
    if type(event) is GameStarted:  # not isinstance: a miss on a Struct class is slow
        return State(
            players=tuple(
                Player(gold=g, dice=data.STARTING_DICE, up=data.START_UP) for g in event.gold
            ),
            rounds=event.rounds,
            cards=event.cards,
            stacks=tuple(data.stack_cards(c, event.players) for c in event.cards),
            sanctuary=event.sanctuary,
            gardens=tuple(p.faces for p in data.GARDENS),
            removed=event.removed,
            lanes=((),) * event.players,
        )
    assert state is not None
    # Cases in order of frequency: a match tries them one by one. Fields are read from
    # the event, not captured by the patterns (a capture costs extra work per field).
    e = event
    match e:
        case AgendaChanged():
            return _replace(state, lanes=e.lanes, lane_order=e.lane_order, flow=e.flow)
        case ResourcesGained():
            p = state.players[e.seat]
            return _with(
                state, e.seat, _replace(p, gold=p.gold + e.gold, sun=p.sun + e.sun,
                                        moon=p.moon + e.moon, glory=p.glory + e.glory)
            )  # fmt: skip
        case DiceRolled():
            p = state.players[e.seat]
            up = list(p.up)
            for d, s in zip(e.dice, e.slots, strict=True):
                up[d] = s
            return _with(state, e.seat, _replace(p, up=(up[0], up[1])))
        case FacesApplied() | TurnEnded() | OfferingFinished():
            return state
        case FaceForged():
            p = state.players[e.seat]
            die, slot = e.die, e.slot
            faces = p.dice[die]
            new = (*faces[:slot], e.face, *faces[slot + 1 :])
            dice = (new, p.dice[1]) if die == 0 else (p.dice[0], new)
            up = (slot, p.up[1]) if die == 0 else (p.up[0], slot)
            return _with(
                state, e.seat, _replace(p, dice=dice, up=up, discard=(*p.discard, e.replaced))
            )
        case TurnStarted():
            return _replace(state, active=e.seat, round=e.round)
        case FaceBought():
            i = data.POOL_OF_FACE[e.face]
            sanctuary = list(state.sanctuary)
            sanctuary[i] = _remove_one(sanctuary[i], e.face)
            p = state.players[e.seat]
            state = _replace(state, sanctuary=tuple(sanctuary))
            return _with(state, e.seat, _replace(p, gold=p.gold - e.cost))
        case FeatPerformed():
            p = state.players[e.seat]
            return _with(state, e.seat, _replace(p, sun=p.sun - e.sun, moon=p.moon - e.moon))
        case CardTaken():
            i = data.SLOT_INDEX[e.slot]
            stacks = list(state.stacks)
            stacks[i] = stacks[i][1:]
            p = state.players[e.seat]
            state = _replace(state, stacks=tuple(stacks))
            return _with(state, e.seat, _replace(p, cards=(*p.cards, e.card)))
        case HammerAdvanced():
            p = state.players[e.seat]
            return _with(
                state, e.seat, _replace(p, hammer_pos=e.position, hammers=p.hammers - e.completed,
                                        glory=p.glory + e.glory)
            )  # fmt: skip
        case PawnMoved():
            return _with(state, e.seat, _replace(state.players[e.seat], pawn=e.island))
        case ExtraActionTaken():
            p = state.players[e.seat]
            return _with(state, e.seat, _replace(p, sun=p.sun - e.sun))
        case HeroOusted():
            return _with(state, e.seat, _replace(state.players[e.seat], pawn=data.START_PORTAL))
        case ResourcesSpent():
            p = state.players[e.seat]
            return _with(
                state, e.seat, _replace(p, gold=p.gold - e.gold, sun=p.sun - e.sun,
                                        moon=p.moon - e.moon)
            )  # fmt: skip
        case HammerTokenPlaced():
            p = state.players[e.seat]
            pos = p.hammer_pos if p.hammers else 0
            return _with(state, e.seat, _replace(p, hammers=p.hammers + 1, hammer_pos=pos))
        case ResourcesLost():
            p = state.players[e.seat]
            return _with(
                state, e.seat, _replace(p, gold=p.gold - e.gold, sun=p.sun - e.sun,
                                        moon=p.moon - e.moon, glory=p.glory - e.glory)
            )  # fmt: skip
        case GardenFaceTaken():
            i = data.GARDEN_OF_FACE[e.face]
            gardens = list(state.gardens)
            gardens[i] = _remove_one(gardens[i], e.face)
            return _replace(state, gardens=tuple(gardens))
        case TokenGained():
            p = state.players[e.seat]
            if e.token == "cerberus":
                return _with(state, e.seat, _replace(p, cerberus=p.cerberus + 1))
            return _with(state, e.seat, _replace(p, triton=p.triton + 1))
        case TokenUsed():
            p = state.players[e.seat]
            if e.token == "cerberus":
                return _with(state, e.seat, _replace(p, cerberus=p.cerberus - 1))
            return _with(state, e.seat, _replace(p, triton=p.triton - 1))
        case MirrorCopied() | ReinforcementUsed() | ReinforcementsEnded() | RoundEnded():
            return state
        case GameEnded():
            return _replace(state, outcome=Outcome(ranks=e.ranks, scores=e.scores, reason=e.reason))
        case GameStarted():
            raise AssertionError("unreachable")
        case _:
            assert_never(e)
