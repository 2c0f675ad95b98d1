"""A test-only game with hidden information, chance and simultaneous moves.

Each seat is dealt a secret word (drawn from the setup entropy) that only it
sees. Every round all seats ``Bid`` at once (any order); each bid also draws a
hidden bonus word from the move's entropy, seen only by the bidder. When every
seat has bid, the highest bid wins the round (ties: the lowest seat). After
``ROUNDS`` rounds the secrets are revealed and the match ends.

Secrets are 16-hex-digit words, distinctive enough that finding one in a text
means it leaked.
"""

from __future__ import annotations

from collections.abc import Collection, Iterable, Mapping
from typing import assert_never

import msgspec

from engine_core.decider import BaseGame
from engine_core.errors import IllegalMove
from engine_core.rng import Rng
from engine_core.types import Event, Move, Outcome, Seat, ranks_from_keys

ROUNDS = 3
HIDDEN = "?"


class Options(msgspec.Struct, frozen=True, kw_only=True):
    rounds: int = ROUNDS


class Bid(Move):
    amount: int


class SecretDealt(Event):
    seat: Seat
    word: str


class BidPlaced(Event):
    seat: Seat
    amount: int
    bonus: str


class RoundWon(Event):
    seat: Seat


class SecretsRevealed(Event):
    words: tuple[str, ...]


class MatchEnded(Event):
    ranks: tuple[int, ...]
    scores: tuple[float, ...]
    reason: str


SecretMove = Bid
SecretEvent = SecretDealt | BidPlaced | RoundWon | SecretsRevealed | MatchEnded


class State(msgspec.Struct, frozen=True, kw_only=True):
    players: int
    rounds: int
    words: tuple[str, ...] = ()
    bonuses: tuple[tuple[str, ...], ...] = ()
    bids: tuple[int, ...] = ()  # -1: not yet this round
    wins: tuple[int, ...] = ()
    round: int = 0
    revealed: bool = False
    outcome: Outcome | None = None


class View(msgspec.Struct, frozen=True, kw_only=True):
    players: int
    rounds: int
    words: tuple[str, ...]
    bonus_counts: tuple[int, ...]
    my_bonuses: tuple[str, ...]
    bids_in: tuple[bool, ...]
    wins: tuple[int, ...]
    round: int
    outcome: Outcome | None


def _word(rng: Rng) -> str:
    return rng.bytes(8).hex()


def _set(t: tuple, i: int, v: object) -> tuple:
    return (*t[:i], v, *t[i + 1 :])


class SecretGame(BaseGame):
    name = "secret_bids"
    title = "Secret bids (test game)"
    rules_version = "1"
    min_players = 2
    max_players = 4
    Options = Options
    State = State
    Move = SecretMove
    Event = SecretEvent
    View = View

    def setup(self, players: int, options: Options, entropy: bytes) -> tuple[Event, ...]:
        rng = Rng(entropy)
        return tuple(SecretDealt(seat=s, word=_word(rng)) for s in range(players))

    def evolve(self, state: State | None, event: Event) -> State:
        match event:
            case SecretDealt(seat=seat, word=word):
                if state is None:
                    state = State(players=0, rounds=ROUNDS)
                return msgspec.structs.replace(
                    state,
                    players=state.players + 1,
                    words=(*state.words, word),
                    bonuses=(*state.bonuses, ()),
                    bids=(*state.bids, -1),
                    wins=(*state.wins, 0),
                )
            case BidPlaced(seat=seat, amount=amount, bonus=bonus):
                assert state is not None
                return msgspec.structs.replace(
                    state,
                    bids=_set(state.bids, seat, amount),
                    bonuses=_set(state.bonuses, seat, (*state.bonuses[seat], bonus)),
                )
            case RoundWon(seat=seat):
                assert state is not None
                return msgspec.structs.replace(
                    state,
                    wins=_set(state.wins, seat, state.wins[seat] + 1),
                    bids=(-1,) * state.players,
                    round=state.round + 1,
                )
            case SecretsRevealed():
                assert state is not None
                return msgspec.structs.replace(state, revealed=True)
            case MatchEnded(ranks=ranks, scores=scores, reason=reason):
                assert state is not None
                return msgspec.structs.replace(
                    state, outcome=Outcome(ranks=ranks, scores=scores, reason=reason)
                )
            case _:
                assert_never(event)

    def decide_move(self, state: State, seat: Seat, move: Bid, rng: Rng) -> Iterable[Event]:
        if not 0 <= move.amount <= 9:
            raise IllegalMove("bad_amount", "bids are 0..9")
        yield BidPlaced(seat=seat, amount=move.amount, bonus=_word(rng))
        bids = _set(state.bids, seat, move.amount)
        if all(b >= 0 for b in bids):
            best = max(bids)
            winner = bids.index(best)
            yield RoundWon(seat=winner)
            if state.round + 1 >= state.rounds:
                wins = _set(state.wins, winner, state.wins[winner] + 1)
                yield SecretsRevealed(words=state.words)
                ranks = ranks_from_keys([(w,) for w in wins])
                yield MatchEnded(
                    ranks=ranks, scores=tuple(float(w) for w in wins), reason="rounds_played"
                )

    def legal_moves(self, state: State, seat: Seat) -> tuple[Bid, ...]:
        if seat not in self.awaiting(state):
            return ()
        return tuple(Bid(amount=a) for a in range(10))

    def awaiting(self, state: State) -> tuple[Seat, ...]:
        if state.outcome is not None:
            return ()
        return tuple(s for s in range(state.players) if state.bids[s] < 0)

    def outcome(self, state: State) -> Outcome | None:
        return state.outcome

    def max_moves(self, players: int) -> int:
        return ROUNDS * players

    def seats(self, state: State) -> int:
        return state.players

    # ------------------------------------------------------ hidden information
    def view(self, state: State, seat: Seat | None) -> View:
        return View(
            players=state.players,
            rounds=state.rounds,
            words=tuple(
                w if state.revealed or s == seat else HIDDEN for s, w in enumerate(state.words)
            ),
            bonus_counts=tuple(len(b) for b in state.bonuses),
            my_bonuses=state.bonuses[seat] if seat is not None else (),
            bids_in=tuple(b >= 0 for b in state.bids),
            wins=state.wins,
            round=state.round,
            outcome=state.outcome,
        )

    def redact(self, event: Event, seat: Seat | None) -> Event | None:
        match event:
            case SecretDealt(seat=owner) if owner != seat:
                return SecretDealt(seat=owner, word=HIDDEN)
            case BidPlaced(seat=owner) if owner != seat:
                # the amount stays hidden until the round resolves
                return BidPlaced(seat=owner, amount=-1, bonus=HIDDEN)
            case _:
                return event

    def secrets(self, state: State) -> Mapping[Seat | None, Collection[str]]:
        out: dict[Seat | None, list[str]] = {}
        for s in range(state.players):
            hidden = list(state.bonuses[s])
            if not state.revealed:
                hidden.append(state.words[s])
            out[s] = hidden
        return out


GAME = SecretGame()
