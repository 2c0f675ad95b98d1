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
    if isinstance(event, GameStarted):
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
    match event:
        case AgendaChanged(lanes=lanes, lane_order=order, flow=flow):
            return _replace(state, lanes=lanes, lane_order=order, flow=flow)
        case DiceRolled(seat=seat, dice=dice, slots=slots):
            p = state.players[seat]
            up = list(p.up)
            for d, s in zip(dice, slots, strict=True):
                up[d] = s
            return _with(state, seat, _replace(p, up=(up[0], up[1])))
        case ResourcesGained(seat=seat, gold=g, sun=s, moon=m, glory=v):
            p = state.players[seat]
            return _with(
                state, seat, _replace(p, gold=p.gold + g, sun=p.sun + s, moon=p.moon + m,
                                      glory=p.glory + v)
            )  # fmt: skip
        case ResourcesLost(seat=seat, gold=g, sun=s, moon=m, glory=v):
            p = state.players[seat]
            return _with(
                state, seat, _replace(p, gold=p.gold - g, sun=p.sun - s, moon=p.moon - m,
                                      glory=p.glory - v)
            )  # fmt: skip
        case ResourcesSpent(seat=seat, gold=g, sun=s, moon=m):
            p = state.players[seat]
            return _with(state, seat, _replace(p, gold=p.gold - g, sun=p.sun - s, moon=p.moon - m))
        case HammerAdvanced(seat=seat, position=pos, completed=done, glory=v):
            p = state.players[seat]
            return _with(
                state, seat, _replace(p, hammer_pos=pos, hammers=p.hammers - done,
                                      glory=p.glory + v)
            )  # fmt: skip
        case HammerTokenPlaced(seat=seat):
            p = state.players[seat]
            pos = p.hammer_pos if p.hammers else 0
            return _with(state, seat, _replace(p, hammers=p.hammers + 1, hammer_pos=pos))
        case FaceBought(seat=seat, face=face, cost=cost):
            i = data.POOL_OF_FACE[face]
            sanctuary = list(state.sanctuary)
            sanctuary[i] = _remove_one(sanctuary[i], face)
            p = state.players[seat]
            state = _replace(state, sanctuary=tuple(sanctuary))
            return _with(state, seat, _replace(p, gold=p.gold - cost))
        case GardenFaceTaken(face=face):
            i = data.GARDEN_OF_FACE[face]
            gardens = list(state.gardens)
            gardens[i] = _remove_one(gardens[i], face)
            return _replace(state, gardens=tuple(gardens))
        case FaceForged(seat=seat, die=die, slot=slot, face=face, replaced=old):
            p = state.players[seat]
            faces = p.dice[die]
            new = (*faces[:slot], face, *faces[slot + 1 :])
            dice = (new, p.dice[1]) if die == 0 else (p.dice[0], new)
            up = (slot, p.up[1]) if die == 0 else (p.up[0], slot)
            return _with(state, seat, _replace(p, dice=dice, up=up, discard=(*p.discard, old)))
        case ExtraActionTaken(seat=seat, sun=sun):
            p = state.players[seat]
            return _with(state, seat, _replace(p, sun=p.sun - sun))
        case FeatPerformed(seat=seat, sun=sun, moon=moon):
            p = state.players[seat]
            return _with(state, seat, _replace(p, sun=p.sun - sun, moon=p.moon - moon))
        case PawnMoved(seat=seat, island=island):
            return _with(state, seat, _replace(state.players[seat], pawn=island))
        case HeroOusted(seat=seat):
            return _with(state, seat, _replace(state.players[seat], pawn=data.START_PORTAL))
        case CardTaken(seat=seat, slot=slot, card=card):
            i = data.SLOT_INDEX[slot]
            stacks = list(state.stacks)
            stacks[i] = stacks[i][1:]
            p = state.players[seat]
            state = _replace(state, stacks=tuple(stacks))
            return _with(state, seat, _replace(p, cards=(*p.cards, card)))
        case TokenGained(seat=seat, token=token):
            p = state.players[seat]
            if token == "cerberus":
                return _with(state, seat, _replace(p, cerberus=p.cerberus + 1))
            return _with(state, seat, _replace(p, triton=p.triton + 1))
        case TokenUsed(seat=seat, token=token):
            p = state.players[seat]
            if token == "cerberus":
                return _with(state, seat, _replace(p, cerberus=p.cerberus - 1))
            return _with(state, seat, _replace(p, triton=p.triton - 1))
        case TurnStarted(seat=seat, round=rnd):
            return _replace(state, active=seat, round=rnd)
        case (
            MirrorCopied() | FacesApplied() | ReinforcementUsed() | ReinforcementsEnded()
            | OfferingFinished() | TurnEnded() | RoundEnded()
        ):  # fmt: skip
            return state
        case GameEnded(ranks=ranks, scores=scores, reason=reason):
            return _replace(state, outcome=Outcome(ranks=ranks, scores=scores, reason=reason))
        case GameStarted():
            raise AssertionError("unreachable")
        case _:
            assert_never(event)
