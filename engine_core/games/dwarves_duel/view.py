"""The one gate for hidden information: ``view``, ``redact`` and ``secrets``.

A seat sees its own hand; of the opponent only the hand size. Draw piles are
counts for everybody (their order is seen by nobody). Discard piles, displays,
dice, Wild Cards and windows are public.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping

import msgspec
from msgspec.structs import replace

from engine_core.games.dwarves_duel.data import DECKS
from engine_core.games.dwarves_duel.events import CardsDrawn, DeckShuffled, DwarvesEvent
from engine_core.games.dwarves_duel.state import Die, DisplayCard, Player, State, Window
from engine_core.rng import Rng
from engine_core.types import Outcome, Seat


class PlayerView(msgspec.Struct, frozen=True, kw_only=True):
    side: str
    hand: tuple[str, ...] | None  # None: hidden from this viewer (see hand_count)
    hand_count: int
    known_hand: tuple[str, ...]  # hand cards both seats know (taken openly by EV_RECOVER)
    pile_count: int
    display: tuple[DisplayCard, ...]
    discard: tuple[str, ...]
    wild_cards: int
    pending_extra_dice: int


class View(msgspec.Struct, frozen=True, kw_only=True):
    viewer: Seat | None
    players: tuple[PlayerView, PlayerView]
    first_player: Seat
    active: Seat
    awaiting: tuple[Seat, ...]
    phase: str
    turn: int
    dice: tuple[Die, ...]
    middle_wild: int
    rerolls_used: tuple[str, ...]
    king_used: bool
    spent_unit: bool
    windows: tuple[Window, ...]
    always_offer_windows: bool
    outcome: Outcome | None


def _player_view(p: Player, visible: bool) -> PlayerView:
    return PlayerView(
        side=p.side,
        hand=p.hand if visible else None,
        hand_count=len(p.hand),
        known_hand=p.known,
        pile_count=len(p.pile),
        display=p.display,
        discard=p.discard,
        wild_cards=p.wild,
        pending_extra_dice=p.pending_extra_dice,
    )


def view(state: State, seat: Seat | None, awaiting: tuple[Seat, ...]) -> View:
    return View(
        viewer=seat,
        players=(
            _player_view(state.players[0], seat == 0),
            _player_view(state.players[1], seat == 1),
        ),
        first_player=state.first_player,
        active=state.active,
        awaiting=awaiting,
        phase=state.phase,
        turn=state.turn,
        dice=state.dice,
        middle_wild=state.middle_wild,
        rerolls_used=state.rerolls_used,
        king_used=state.king_used,
        spent_unit=state.spent_unit,
        windows=state.windows,
        always_offer_windows=state.always_offer_windows,
        outcome=state.outcome,
    )


def redact(event: DwarvesEvent, seat: Seat | None) -> DwarvesEvent:
    match event:
        case DeckShuffled():
            return replace(event, order=())
        case CardsDrawn() if seat != event.seat:
            return replace(event, cards=())
        case _:
            return event


def secrets(state: State) -> Mapping[Seat | None, Collection[str]]:
    """Hand cards (except those taken openly from the discard pile) and both piles."""
    p0, p1 = state.players
    return {
        0: tuple(c for c in p0.hand if c not in p0.known),
        1: tuple(c for c in p1.hand if c not in p1.known),
        None: state.players[0].pile + state.players[1].pile,
    }


def sample_state(v: View, seat: Seat, rng: Rng) -> State:
    """A full state consistent with seat ``seat``'s view (for search bots).

    Every card of a side's deck that the viewer cannot see (the opponent's
    hand but for its known cards, and both draw piles) is dealt at random,
    uniformly, into the hidden places, in the counts the view shows.
    """
    players = []
    for s, pv in enumerate(v.players):
        mine = s == seat
        if mine and pv.hand is None:
            raise ValueError(f"the view is not seat {seat}'s")
        held = pv.hand if mine else pv.known_hand
        seen = {dc.card for dc in pv.display} | set(pv.discard) | set(held or ())
        unseen = rng.shuffle([c for c in DECKS[pv.side] if c not in seen])
        hidden_hand = 0 if mine else pv.hand_count - len(pv.known_hand)
        if len(unseen) != hidden_hand + pv.pile_count:
            raise ValueError(f"seat {s}: {len(unseen)} unseen cards do not fill the view")
        players.append(
            Player(
                side=pv.side,
                pile=unseen[hidden_hand:],
                hand=(*held, *unseen[:hidden_hand]) if not mine else pv.hand,
                known=pv.known_hand,
                display=pv.display,
                discard=pv.discard,
                wild=pv.wild_cards,
                pending_extra_dice=pv.pending_extra_dice,
            )
        )
    return State(
        players=(players[0], players[1]),
        first_player=v.first_player,
        active=v.active,
        phase=v.phase,  # type: ignore[arg-type]
        turn=v.turn,
        dice=v.dice,
        middle_wild=v.middle_wild,
        rerolls_used=v.rerolls_used,
        king_used=v.king_used,
        spent_unit=v.spent_unit,
        windows=v.windows,
        always_offer_windows=v.always_offer_windows,
        outcome=v.outcome,
    )
