"""Building given-states for the rule scenarios."""

from __future__ import annotations

from typing import Any

from msgspec.structs import replace

from engine_core.decider import fold, start
from engine_core.games.assault_of_the_giants import GAME
from engine_core.games.assault_of_the_giants import data as D
from engine_core.games.assault_of_the_giants.state import State
from engine_core.testing import setup_entropy

U = {name: i for i, name in enumerate(D.UNIT_IDS)}
G = D.REGION_INDEX


def base(players: int = 6, seed: int = 0) -> State:
    state, _ = start(GAME, players, None, setup_entropy(seed))
    return state


def seat(s: State, race: str) -> int:
    return s.race_seat[D.RACE_INDEX[race]]


def empty_board(s: State) -> State:
    loc = tuple(D.OUT if u.kind in ("hekaton", "vonindod") else D.SUPPLY for u in D.UNITS)
    return replace(s, unit_loc=loc, unit_wounded=(False,) * D.N_UNITS)


def place(s: State, unit: str, region: str | int, wounded: bool = False) -> State:
    u = U[unit]
    g = G[region] if isinstance(region, str) else region
    loc = list(s.unit_loc)
    w = list(s.unit_wounded)
    loc[u] = g
    w[u] = wounded
    return replace(s, unit_loc=tuple(loc), unit_wounded=tuple(w))


def turn(s: State, race: str, phase: str = "turn") -> State:
    return replace(s, active=seat(s, race), phase=phase)


def row(s: State, race: str, cards: tuple[str, ...]) -> State:
    p = seat(s, race)
    rows = list(s.rows)
    rows[p] = cards
    return replace(s, rows=tuple(rows))


def take_cards(s: State, kinds: list[str]) -> tuple[State, tuple[str, ...]]:
    """Pull cards of these kinds out of the decks (for giving them to someone)."""
    deck = list(s.res_deck)
    pile = list(s.res_discard)
    areas = [list(a) for a in s.resources]
    got = []
    for k in kinds:
        for src in (deck, pile, *areas):
            c = next((c for c in src if D.RESOURCE_KIND[c] == k), None)
            if c is not None:
                src.remove(c)
                got.append(c)
                break
        else:
            raise AssertionError(f"no {k} left")
    return replace(
        s, res_deck=tuple(deck), res_discard=tuple(pile),
        resources=tuple(tuple(a) for a in areas),
    ), tuple(got)  # fmt: skip


def resources(s: State, race: str, kinds: list[str]) -> State:
    """Set a player's Resource Area to exactly these kinds (old cards go to the deck)."""
    p = seat(s, race)
    s = replace(s, res_deck=s.res_deck + s.resources[p])
    s, got = take_cards(s, kinds)
    res = list(s.resources)
    res[p] = got
    return replace(s, resources=tuple(res))


def to_pile(s: State, kinds: list[str]) -> State:
    s, got = take_cards(s, kinds)
    return replace(s, res_discard=s.res_discard + got)


def spells(s: State, race: str, kinds: list[str]) -> State:
    p = seat(s, race)
    deck = list(s.spell_deck) + list(s.spells[p])
    got = []
    for k in kinds:
        c = next(c for c in deck if D.SPELL_KIND[c] == k)
        deck.remove(c)
        got.append(c)
    hands = list(s.spells)
    hands[p] = tuple(got)
    return replace(s, spells=tuple(hands), spell_deck=tuple(deck))


def act(s: State, p: int, move: Any, entropy: bytes = b"scenario") -> tuple[State, tuple]:
    events = GAME.decide(s, p, move, entropy)
    return fold(GAME, events, s), events


def kinds_of(cards: tuple[str, ...]) -> list[str]:
    return sorted(D.RESOURCE_KIND[c] for c in cards)


def legal(s: State, p: int) -> tuple[Any, ...]:
    return GAME.legal_moves(s, p)
