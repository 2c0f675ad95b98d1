"""Tournaments run in memory: the real formats and fold, with results made up
by a function (no servers), for the pairing invariants on many seeds."""

from __future__ import annotations

import random
from collections import Counter
from collections.abc import Callable

from engine_core.registry import default_registry
from services.tournaments import formats
from services.tournaments.model import (
    MatchResultRecorded,
    Options,
    PlayerRegistered,
    PlayerWithdrawn,
    RegistrationClosed,
    RematchStarted,
    RoundCompleted,
    RoundStarted,
    Table,
    Tournament,
    TournamentCreated,
    TournamentFinished,
    fold,
)

Ranks = Callable[[Tournament, tuple[str, ...], random.Random], tuple[int, ...]]


def random_ranks(_t: Tournament, players: tuple[str, ...], rng: random.Random) -> tuple[int, ...]:
    """Random placings; with 2 players a draw now and then."""
    if len(players) == 2 and rng.random() < 0.2:
        return (1, 1)
    order = list(range(len(players)))
    rng.shuffle(order)
    ranks = [0] * len(players)
    for place, seat in enumerate(order, 1):
        ranks[seat] = place
    return tuple(ranks)


def by_strength(t: Tournament, players: tuple[str, ...], _rng: random.Random) -> tuple[int, ...]:
    """The better seed always wins (players are ``p<strength>``, lower = better)."""
    strength = [int(p.split("p")[-1]) for p in players]
    order = sorted(range(len(players)), key=lambda s: strength[s])
    ranks = [0] * len(players)
    for place, seat in enumerate(order, 1):
        ranks[seat] = place
    return tuple(ranks)


class Sim:
    def __init__(self, game: str, fmt: str, n: int, rounds: int = 0, seed: str = "s",
                 **options) -> None:  # fmt: skip
        self.game = default_registry().get(game)
        self.items: list = []
        opts = Options(**options)
        stored = formats.validate(self.game, fmt, rounds, opts)
        created = TournamentCreated(tournament_id="t1", name="sim", game=game, format=fmt,
                                    rounds=stored, seed=seed, options=opts)  # fmt: skip
        self.items.append((1, created))
        self.t = fold(self.items)
        for i in range(n):
            self._add(PlayerRegistered(player=f"p{i}"))
        self.matches = 0

    def _add(self, e) -> None:
        self.items.append((len(self.items) + 1, e))
        self.t.apply(len(self.items), e)

    def withdraw(self, player: str) -> None:
        self._add(PlayerWithdrawn(player=player))

    def close(self, order: list[str] | None = None) -> None:
        seeds = tuple(order or self.t.active_players())
        self._add(RegistrationClosed(seeds=seeds, ratings=tuple(0.0 for _ in seeds)))

    def play_round(self, rng: random.Random, ranks: Ranks = random_ranks) -> bool:
        plan = formats.plan_next(self.t, self.game)
        if plan is None:
            self._add(TournamentFinished(standings=tuple(formats.standings(self.t))))
            return False
        tables = tuple(
            Table(table=k, players=tuple(p), match_id=f"m{plan.round}-{k}")
            for k, p in enumerate(plan.tables, 1)
        )
        self._add(RoundStarted(round=plan.round, tables=tables, byes=tuple(plan.byes),
                               stage=plan.stage))  # fmt: skip
        self.matches += len(tables)
        for tb in tables:
            players, match_id = tb.players, tb.match_id
            while True:
                r = ranks(self.t, players, rng)
                self._add(MatchResultRecorded(round=plan.round, table=tb.table,
                                              match_id=match_id, players=players, ranks=r,
                                              scores=tuple(float(len(r) - x) for x in r)))  # fmt: skip
                state = self.t.rounds[-1].tables[tb.table - 1]
                if not (plan.stage and formats.needs_rematch(self.t, state)):
                    break
                players = tuple(reversed(players))
                match_id = f"{match_id}g"
                self._add(RematchStarted(round=plan.round, table=tb.table,
                                         game=len(state.matches) + 1, players=players,
                                         match_id=match_id))  # fmt: skip
                self.matches += 1
        self._add(RoundCompleted(round=plan.round))
        return True

    def play_fixed(self, round_no: int, tables: list[tuple[tuple[str, ...], tuple[int, ...]]]):
        """A round with the pairings and results given (worked examples)."""
        tbs = tuple(
            Table(table=k, players=p, match_id=f"m{round_no}-{k}")
            for k, (p, _r) in enumerate(tables, 1)
        )
        self._add(RoundStarted(round=round_no, tables=tbs))
        for tb, (_p, r) in zip(tbs, tables, strict=True):
            self._add(MatchResultRecorded(round=round_no, table=tb.table, match_id=tb.match_id,
                                          players=tb.players, ranks=r, scores=(0.0,) * len(r)))  # fmt: skip
        self._add(RoundCompleted(round=round_no))

    def run(self, rng: random.Random, ranks: Ranks = random_ranks) -> Tournament:
        if not self.t.seeds:
            self.close()
        while self.play_round(rng, ranks):
            pass
        return self.t


def replay_undisturbed(events: list) -> Tournament:
    """The tournament an undisturbed run makes from the same creation, the
    same registrations and seeds, and the same match results (looked up by
    round and players): every pairing decided again by the pure formats.
    A run that crashed, lost replicas or raced must have made exactly this."""
    created = events[0]
    assert isinstance(created, TournamentCreated)
    results: dict[tuple[int, frozenset[str], int], tuple[tuple[str, ...], tuple[int, ...]]] = {}
    games: Counter = Counter()
    for e in events:
        if isinstance(e, MatchResultRecorded):
            key = frozenset(e.players)
            games[e.round, key] += 1
            results[e.round, key, games[e.round, key]] = (e.players, e.ranks)
    sim = Sim.__new__(Sim)
    sim.game = default_registry().get(created.game)
    sim.items = [(1, created)]
    sim.t = fold(sim.items)
    sim.matches = 0
    for e in events[1:]:
        if isinstance(e, PlayerRegistered | PlayerWithdrawn | RegistrationClosed):
            sim._add(e)
    played: Counter = Counter()

    def ranks(t: Tournament, players: tuple[str, ...], _rng) -> tuple[int, ...]:
        rnd = len(t.rounds)
        key = frozenset(players)
        played[rnd, key] += 1
        stored_players, stored_ranks = results[rnd, key, played[rnd, key]]
        by_player = dict(zip(stored_players, stored_ranks, strict=True))
        return tuple(by_player[p] for p in players)

    while sim.play_round(random.Random(0), ranks):
        pass
    return sim.t
