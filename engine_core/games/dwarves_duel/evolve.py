"""``evolve``: apply one event. Records facts only; every check is in ``rules``."""

from __future__ import annotations

from typing import Any, assert_never

from msgspec.structs import replace

from engine_core.games.dwarves_duel.data import DIE_INDEX, WILD, WILD_FACE
from engine_core.games.dwarves_duel.events import (
    AllyActivated,
    CardBurned,
    CardDefeated,
    CardDiscarded,
    CardEnteredDisplay,
    CardPlayed,
    CardRecovered,
    CardRemoved,
    CardsDrawn,
    DamageCancelled,
    DamageDealt,
    DamageDeclared,
    DamageFizzled,
    DeckShuffled,
    DiceRolled,
    DieConverted,
    DieRerolled,
    DwarvesEvent,
    ExtraDicePending,
    GameEnded,
    GameStarted,
    PhaseChanged,
    TurnEnded,
    TurnStarted,
    WildCardTaken,
    WindowClosed,
    WindowOpened,
)
from engine_core.games.dwarves_duel.state import (
    DICE_PHASE,
    DRAW,
    OVER,
    Die,
    DisplayCard,
    Player,
    State,
    Window,
)
from engine_core.types import Outcome, Seat

_MIDDLE_DICE = (Die(),) * 6


def _player(state: State, seat: Seat, **changes: Any) -> State:
    p = replace(state.players[seat], **changes)
    players = (p, state.players[1]) if seat == 0 else (state.players[0], p)
    return replace(state, players=players)


def _without(cards: tuple[str, ...], card: str) -> tuple[str, ...]:
    i = cards.index(card)
    return cards[:i] + cards[i + 1 :]


def _off_display(display: tuple[DisplayCard, ...], card: str) -> tuple[DisplayCard, ...]:
    return tuple(dc for dc in display if dc.card != card)


def _die(state: State, die: str, **changes: Any) -> tuple[Die, ...]:
    i = DIE_INDEX[die]
    return (*state.dice[:i], replace(state.dice[i], **changes), *state.dice[i + 1 :])


def _spend(state: State, seat: Seat, units: tuple[str, ...]) -> State:
    """Mark spent dice used and move spent Wild Cards to the middle."""
    if not units:
        return state
    dice = state.dice
    wild = 0
    for u in units:
        if u == WILD:
            wild += 1
        else:
            i = DIE_INDEX[u]
            dice = (*dice[:i], replace(dice[i], used=True), *dice[i + 1 :])
    state = replace(state, dice=dice, spent_unit=True, middle_wild=state.middle_wild + wild)
    if wild:
        state = _player(state, seat, wild=state.players[seat].wild - wild)
    return state


def evolve(state: State | None, event: DwarvesEvent) -> State:
    if state is None:
        if not isinstance(event, GameStarted):
            raise ValueError("a match starts with GameStarted")
        return State(
            players=(Player(side=event.sides[0]), Player(side=event.sides[1])),
            first_player=event.first_player,
            active=event.first_player,
            phase=DRAW,
            always_offer_windows=event.always_offer_windows,
        )
    match event:
        case GameStarted():
            raise ValueError("GameStarted after the start")
        case DeckShuffled(seat=seat, order=order):
            return _player(state, seat, pile=order)
        case CardsDrawn(seat=seat, cards=cards):
            p = state.players[seat]
            return _player(state, seat, pile=p.pile[len(cards) :], hand=p.hand + cards)
        case TurnStarted(seat=seat, turn=turn):
            return replace(
                state,
                active=seat,
                turn=turn,
                phase=DRAW,
                rerolls_used=(),
                king_used=False,
                spent_unit=False,
            )
        case PhaseChanged(phase=phase):
            return replace(state, phase=phase)
        case DiceRolled(seat=seat, faces=faces):
            dice = tuple(Die(face=f) for f in faces) + _MIDDLE_DICE[len(faces) :]
            state = replace(state, dice=dice, phase=DICE_PHASE, rerolls_used=())
            return _player(state, seat, pending_extra_dice=0)
        case DieRerolled(die=die, source=source, new=new):
            return replace(
                state, dice=_die(state, die, face=new), rerolls_used=(*state.rerolls_used, source)
            )
        case DieConverted(die=die, cause=cause):
            state = replace(state, dice=_die(state, die, face=WILD_FACE))
            return replace(state, king_used=True) if cause == "king" else state
        case CardPlayed(seat=seat, card=card, payment=payment):
            p = state.players[seat]
            known = _without(p.known, card) if card in p.known else p.known
            state = _player(state, seat, hand=_without(p.hand, card), known=known)
            return _spend(state, seat, payment)
        case CardEnteredDisplay(seat=seat, card=card):
            p = state.players[seat]
            return _player(state, seat, display=(*p.display, DisplayCard(card=card)))
        case CardDiscarded(seat=seat, card=card):
            return _player(state, seat, discard=(*state.players[seat].discard, card))
        case ExtraDicePending(seat=seat):
            p = state.players[seat]
            return _player(state, seat, pending_extra_dice=p.pending_extra_dice + 1)
        case AllyActivated(seat=seat, unit=unit):
            return _spend(state, seat, (unit,))
        case DamageDeclared():
            return state
        case WindowOpened(kind=kind, holder=holder, point=point):
            return replace(
                state, windows=(*state.windows, Window(kind=kind, holder=holder, point=point))
            )
        case WindowClosed():
            return replace(state, windows=state.windows[:-1])
        case DamageCancelled():
            top = state.windows[-1]
            top = replace(top, point=replace(top.point, cancelled=True))
            return replace(state, windows=(*state.windows[:-1], top))
        case CardBurned(seat=seat, card=card):
            p = state.players[seat]
            return _player(state, seat, pile=p.pile[1:], discard=(*p.discard, card))
        case DamageDealt(seat=seat, card=card, damage=damage):
            p = state.players[seat]
            display = tuple(
                replace(dc, damage=damage) if dc.card == card else dc for dc in p.display
            )
            return _player(state, seat, display=display)
        case CardDefeated(seat=seat, card=card) | CardRemoved(seat=seat, card=card):
            p = state.players[seat]
            return _player(
                state, seat, display=_off_display(p.display, card), discard=(*p.discard, card)
            )
        case DamageFizzled():
            return state
        case CardRecovered(seat=seat, card=card):
            p = state.players[seat]
            return _player(
                state,
                seat,
                discard=_without(p.discard, card),
                hand=(*p.hand, card),
                known=(*p.known, card),
            )
        case WildCardTaken(seat=seat, source=source):
            state = _player(state, seat, wild=state.players[seat].wild + 1)
            if source == "middle":
                return replace(state, middle_wild=state.middle_wild - 1)
            other = 1 - seat
            return _player(state, other, wild=state.players[other].wild - 1)
        case TurnEnded():
            players = tuple(
                replace(p, display=tuple(DisplayCard(card=dc.card) for dc in p.display))
                if any(dc.damage for dc in p.display)
                else p
                for p in state.players
            )
            return replace(state, players=players, dice=_MIDDLE_DICE, windows=())
        case GameEnded(reason=reason, scores=scores, ranks=ranks):
            outcome = Outcome(ranks=ranks, scores=tuple(float(s) for s in scores), reason=reason)
            return replace(state, outcome=outcome, phase=OVER, windows=())
        case _:
            assert_never(event)
