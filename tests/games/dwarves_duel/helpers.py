"""Given-state builders for the rule tests: seat 0 plays GOOD (G), seat 1 EVIL (E)."""

from __future__ import annotations

from collections.abc import Iterable

from msgspec.structs import replace

from engine_core.decider import fold
from engine_core.games.dwarves_duel import GAME
from engine_core.games.dwarves_duel.data import DECKS, EVIL, GOOD
from engine_core.games.dwarves_duel.state import CARD, Die, DisplayCard, Player, State
from engine_core.rng import Rng

G, E = 0, 1


def _pile(side: str, size: int, used: set[str]) -> tuple[str, ...]:
    # The side's cards not placed elsewhere, in slot order (top card first).
    spare = [c for c in DECKS[side] if c not in used]
    assert size <= len(spare), f"{side} has only {len(spare)} cards left for the pile"
    return tuple(spare[:size])


def make_state(
    *,
    active: int = G,
    phase: str = CARD,
    dice: str = "",
    g_hand: Iterable[str] = (),
    e_hand: Iterable[str] = (),
    g_display: Iterable[str] = (),
    e_display: Iterable[str] = (),
    g_discard: Iterable[str] = (),
    e_discard: Iterable[str] = (),
    g_pile: int = 20,
    e_pile: int = 20,
    g_wild: int = 0,
    e_wild: int = 0,
    turn: int = 3,
    always_offer_windows: bool = False,
) -> State:
    """A state in the middle of a match; ``dice`` like ``"11W"`` (d0, d1, d2)."""
    zones = {
        GOOD: (tuple(g_hand), tuple(g_display), tuple(g_discard), g_pile, g_wild),
        EVIL: (tuple(e_hand), tuple(e_display), tuple(e_discard), e_pile, e_wild),
    }
    players = []
    for side in (GOOD, EVIL):
        hand, display, discard, pile, wild = zones[side]
        used = set(hand) | set(display) | set(discard)
        assert len(used) == len(hand) + len(display) + len(discard), "a card is placed twice"
        players.append(
            Player(
                side=side,
                hand=hand,
                display=tuple(DisplayCard(card=c) for c in display),
                discard=discard,
                pile=_pile(side, pile, used),
                wild=wild,
            )
        )
    return State(
        players=(players[0], players[1]),
        first_player=G,
        active=active,
        phase=phase,
        turn=turn,
        dice=tuple(Die(face=f) for f in dice) + (Die(),) * (6 - len(dice)),
        middle_wild=3 - g_wild - e_wild,
        always_offer_windows=always_offer_windows,
    )


def play(state: State, seat: int, move, entropy: bytes = b"test") -> tuple[State, tuple]:
    events = GAME.decide(state, seat, move, entropy)
    return fold(GAME, events, state), events


def faces(state: State) -> str:
    return "".join(d.face or "." for d in state.dice)


def used(state: State) -> str:
    return "".join("x" if d.used else "-" for d in state.dice if d.face)


def entropy_for(*wanted: str) -> bytes:
    """Entropy whose first die results (FACES order 1..5, W) are ``wanted``."""
    from engine_core.games.dwarves_duel.data import FACES

    for i in range(100_000):
        e = str(i).encode()
        rng = Rng(e)
        if all(FACES[rng.below(6)] == w for w in wanted):
            return e
    raise AssertionError("no such entropy")


def with_damage(state: State, seat: int, card: str, damage: int) -> State:
    p = state.players[seat]
    display = tuple(replace(dc, damage=damage) if dc.card == card else dc for dc in p.display)
    players = list(state.players)
    players[seat] = replace(p, display=display)
    return replace(state, players=tuple(players))


def types(events) -> list[str]:
    return [type(e).__name__ for e in events]
