"""The formats: what the next round is, and the standings (with tiebreaks).

Everything here is a pure function of the projection (``Tournament``), so
every replica computes the same next round from the same stream, and a
replica that takes over after a crash creates exactly the matches the dead
one would have (same tables, same idempotency keys).

See docs/tournaments.md for the rules of each format and the tiebreaks.
"""

from __future__ import annotations

import itertools
from collections.abc import Sequence
from dataclasses import dataclass, field

from engine_core.decider import Game
from engine_core.registry import default_registry
from services.common.errors import FailedPrecondition, InvalidArgument
from services.tournaments import pairing
from services.tournaments.model import (
    FORMAT_ELIMINATION,
    FORMAT_ROUND_ROBIN,
    FORMAT_SCORE_RACE,
    FORMAT_SWISS,
    FORMAT_SWISS_TABLES,
    Options,
    RoundState,
    Standing,
    TableState,
    Tournament,
    placing_points,
)

STAGE_ELIMINATION = "elimination"
MAX_ROUNDS = 64


class FormatError(InvalidArgument):
    """The format cannot run with these settings: ``INVALID_ARGUMENT`` with
    its reason, raised as it is to the client."""


@dataclass(frozen=True)
class Plan:
    round: int
    tables: list[list[str]]  # seat order
    byes: list[str] = field(default_factory=list)
    stage: str = ""


# ------------------------------------------------------------- validation
def is_power_of_two(n: int) -> bool:
    return n >= 2 and n & (n - 1) == 0


def validate(game: Game, fmt: str, rounds: int, options: Options) -> int:
    """Check a format against the game's player counts; the rounds to store
    (0 where the field decides: round robin, elimination, score race)."""
    k = options.table_size
    if not game.min_players <= k <= game.max_players:
        raise FormatError(
            "table_size_unsupported",
            f"{game.name} plays with {game.min_players}-{game.max_players} players, "
            f"not tables of {k}",
        )
    if fmt == FORMAT_SWISS and k != 2:
        raise FormatError(
            "table_size_unsupported",
            f"{fmt} is for 2-player tables (use swiss_tables for tables of {k})",
        )
    if fmt == FORMAT_SWISS_TABLES and k < 3:
        raise FormatError("table_size_unsupported", "swiss_tables needs tables of 3 or more")
    if fmt in (FORMAT_SWISS, FORMAT_SWISS_TABLES):
        if not 1 <= rounds <= MAX_ROUNDS:
            raise FormatError("bad_rounds", f"a Swiss needs 1..{MAX_ROUNDS} rounds")
    elif rounds < 0 or rounds > MAX_ROUNDS:
        raise FormatError("bad_rounds", f"rounds must be 0..{MAX_ROUNDS}")
    knockout = fmt == FORMAT_ELIMINATION or (fmt == FORMAT_SWISS_TABLES and options.top_cut)
    if options.advance and not (knockout and k > 2):
        raise FormatError(
            "bad_advance",
            "advance is for an elimination of tables of 3 or more "
            "(single_elimination, or swiss_tables with a top_cut)",
        )
    if knockout and k > 2 and not 1 <= advance_of(options) < k:
        raise FormatError(
            "bad_advance", f"advance is 1..{k - 1} at tables of {k} (somebody must go out)"
        )
    if options.top_cut and fmt == FORMAT_SWISS_TABLES:
        if options.top_cut > MAX_TOP_CUT:
            raise FormatError("bad_top_cut", f"a top cut is at most {MAX_TOP_CUT} players")
        try:
            pairing.knockout_shape(options.top_cut, k, advance_of(options), game.min_players)
        except ValueError as e:
            raise FormatError("bad_top_cut", f"a top cut of {options.top_cut}: {e}") from None
    elif options.top_cut and (fmt != FORMAT_SWISS or not is_power_of_two(options.top_cut)):
        raise FormatError(
            "bad_top_cut",
            "a top cut is for swiss (a power of two: 2, 4, 8...) or swiss_tables",
        )
    if fmt == FORMAT_SCORE_RACE:
        if options.race_seconds <= 0:
            raise FormatError("bad_race_window", "a score race needs race_seconds > 0")
        if options.race_scoring not in ("best", "sum"):
            raise FormatError("bad_race_scoring", "race_scoring is 'best' or 'sum'")
    if options.max_games < 1 or options.max_games > 9:
        raise FormatError("bad_max_games", "max_games must be 1..9")
    return rounds if fmt in (FORMAT_SWISS, FORMAT_SWISS_TABLES, FORMAT_ROUND_ROBIN) else 0


MAX_TOP_CUT = 4096


def advance_of(options: Options) -> int:
    """How many of each elimination table go through (default 1)."""
    return options.advance or 1


def knockout_of_tables(t: Tournament) -> bool:
    """Whether the elimination stage is of tables of 3+ (the best ``advance``
    of each go through) rather than a 2-player bracket."""
    return t.options.table_size > 2 and (
        t.format == FORMAT_ELIMINATION
        or (t.format == FORMAT_SWISS_TABLES and bool(t.options.top_cut))
    )


def check_field(t: Tournament, game: Game, n: int) -> None:
    """At the start: a field of ``n`` must make a bracket of the tables
    (FailedPrecondition ``bracket_unplayable`` otherwise)."""
    if t.format == FORMAT_ELIMINATION and t.options.table_size > 2:
        try:
            pairing.knockout_shape(n, t.options.table_size, advance_of(t.options), game.min_players)
        except ValueError as e:
            raise FailedPrecondition("bracket_unplayable", str(e)) from None


def minimum_field(fmt: str, options: Options, game: Game) -> int:
    if fmt == FORMAT_SCORE_RACE:
        return 1
    if fmt in (FORMAT_SWISS, FORMAT_SWISS_TABLES) and options.top_cut:
        return max(2, options.top_cut, options.table_size)
    if options.table_size > 2:
        return max(game.min_players, options.table_size)
    return 2


def table_minimum(options: Options, game: Game) -> int:
    return max(game.min_players, options.table_size - 1, 2)


def total_rounds(t: Tournament) -> int:
    """Rounds the tournament will have (once started)."""
    n = len(t.seeds)
    fmt, o = t.format, t.options
    if fmt == FORMAT_SCORE_RACE:
        return 0
    if fmt == FORMAT_ELIMINATION and o.table_size > 2:
        return _knockout_rounds(n, o, t)
    if fmt == FORMAT_ELIMINATION:
        return _log2_ceil(n)
    if fmt == FORMAT_ROUND_ROBIN:
        if t.created.rounds:
            return t.created.rounds
        if o.table_size == 2:
            return n - 1 if n % 2 == 0 else n
        return -(-(n - 1) // (o.table_size - 1))
    if fmt == FORMAT_SWISS_TABLES and o.top_cut:
        return _knockout_rounds(min(o.top_cut, n), o, t)
    extra = _log2_ceil(o.top_cut) if o.top_cut else 0
    return t.created.rounds + extra


def _knockout_rounds(n: int, o: Options, t: Tournament) -> int:
    """The rounds of a bracket of tables for ``n`` (nobody withdrawing), with
    the Swiss rounds before it; once under way, the elimination rounds
    paired so far plus what the advancers of the last one still need."""
    base = t.created.rounds if t.format == FORMAT_SWISS_TABLES else 0
    stage = [r for r in t.rounds if r.stage == STAGE_ELIMINATION]
    k, m = o.table_size, advance_of(o)
    minimum = default_registry().get(t.game).min_players
    if stage:
        if _is_final(stage[-1]):
            return base + len(stage)
        n = len(stage[-1].byes) + len(stage[-1].tables) * m
    try:
        left = len(pairing.knockout_shape(n, k, m, minimum))
    except ValueError:
        left = 1  # withdrawals left a field no bracket fits: one last table
    return base + len(stage) + left


def _log2_ceil(n: int) -> int:
    r, size = 0, 1
    while size < n:
        size *= 2
        r += 1
    return r


# -------------------------------------------------------------- per-player
@dataclass
class Line:
    """One player's record, the base of the standings."""

    player: str
    points: float = 0.0
    played: int = 0
    wins: int = 0
    byes: int = 0
    score_total: float = 0.0
    firsts_seated: int = 0
    games: list[tuple[tuple[str, ...], float]] = field(default_factory=list)  # (others, points)
    withdrawn: bool = False


def lines(t: Tournament, *, swiss_stage_only: bool = False) -> dict[str, Line]:
    out = {p: Line(p, withdrawn=e.withdrawn) for p, e in t.entrants.items()}
    bye_points = 1.0 if t.options.table_size == 2 else 0.0
    for rnd in t.rounds:
        if swiss_stage_only and rnd.stage == STAGE_ELIMINATION:
            continue
        for p in rnd.byes:
            if rnd.stage != STAGE_ELIMINATION:
                out[p].points += bye_points
            out[p].byes += 1
        for table in rnd.tables:
            res = _deciding_result(table)
            if res is None:
                continue
            for seat, p in enumerate(res.players):
                pts = 0.0 if res.void else placing_points(res.ranks, seat)
                line = out[p]
                line.points += pts
                line.played += 1
                line.wins += 1 if res.ranks[seat] == 1 and res.decisive else 0
                line.score_total += res.scores[seat] if seat < len(res.scores) else 0.0
                line.firsts_seated += 1 if seat == 0 else 0
                line.games.append((tuple(q for q in res.players if q != p), pts))
    return out


def _deciding_result(table: TableState):  # -> Result | None
    """A table's result for points: its last game once finished."""
    return table.last_result if table.finished else None


def first_balance(t: Tournament) -> dict[str, int]:
    """First seats minus second seats, per player (2-player colour balance)."""
    bal: dict[str, int] = {}
    for rnd in t.rounds:
        for table in rnd.tables:
            if len(table.players) == 2:
                a, b = table.players
                bal[a] = bal.get(a, 0) + 1
                bal[b] = bal.get(b, 0) - 1
    return bal


def firsts(t: Tournament) -> dict[str, int]:
    out: dict[str, int] = {}
    for rnd in t.rounds:
        for table in rnd.tables:
            out[table.players[0]] = out.get(table.players[0], 0) + 1
    return out


def met_counts(t: Tournament) -> dict[frozenset[str], int]:
    met: dict[frozenset[str], int] = {}
    for rnd in t.rounds:
        for table in rnd.tables:
            for a, b in itertools.combinations(table.players, 2):
                key = frozenset((a, b))
                met[key] = met.get(key, 0) + 1
    return met


def pairing_order(t: Tournament, ls: dict[str, Line], players: Sequence[str]) -> list[str]:
    """Players for pairing: points, then seed (as Swiss pairing programs do)."""
    return sorted(players, key=lambda p: (-ls[p].points, t.seed_of(p)))


# --------------------------------------------------------------- next round
def plan_next(t: Tournament, game: Game) -> Plan | None:
    """The next round, or None when the tournament is over. Only called when
    the current round (if any) is complete."""
    fmt = t.format
    n_next = len(t.rounds) + 1
    if fmt == FORMAT_SCORE_RACE:
        return None
    if knockout_of_tables(t):
        if fmt == FORMAT_ELIMINATION:
            return _knockout_round(t, n_next, list(t.seeds), game)
        if n_next > t.created.rounds:
            return _knockout_round(t, n_next, _top_cut_seeds(t), game)
        return _swiss_tables_round(t, n_next, game)
    if n_next > total_rounds(t):
        return None
    if fmt == FORMAT_SWISS:
        if n_next > t.created.rounds:
            return _elimination_round(t, n_next, _top_cut_seeds(t))
        return _swiss_round(t, n_next)
    if fmt == FORMAT_SWISS_TABLES:
        return _swiss_tables_round(t, n_next, game)
    if fmt == FORMAT_ROUND_ROBIN:
        return _round_robin_round(t, n_next)
    if fmt == FORMAT_ELIMINATION:
        return _elimination_round(t, n_next, list(t.seeds))
    raise AssertionError(fmt)


def _active(t: Tournament) -> list[str]:
    return t.pairable()


def _swiss_round(t: Tournament, n: int) -> Plan:
    ls = lines(t)
    ranked = pairing_order(t, ls, _active(t))
    had = {p for p, line in ls.items() if line.byes}
    played = {frozenset((*others, p)) for p, line in ls.items() for others, _ in line.games}
    balance = first_balance(t)
    points = {p: ls[p].points for p in ranked}
    pairs, bye = pairing.swiss_pairs(ranked, points, played, balance, had)
    byes = [bye] if bye is not None else []
    tables = []
    for a, b in pairs:
        first = pairing.first_player(a, b, balance, t.created.seed, n)
        tables.append([a, b] if first else [b, a])
    return Plan(n, tables, byes)


def _swiss_tables_round(t: Tournament, n: int, game: Game) -> Plan:
    ls = lines(t)
    ranked = pairing_order(t, ls, _active(t))
    k = t.options.table_size
    try:
        sizes = pairing.table_sizes(len(ranked), k, table_minimum(t.options, game))
    except ValueError:
        sizes = pairing.table_sizes(len(ranked), k, game.min_players)
    tables = pairing.swiss_tables(ranked, sizes, met_counts(t))
    fs = firsts(t)
    return Plan(n, [pairing.rotate_seats(tb, fs, t.created.seed, n) for tb in tables])


def _round_robin_round(t: Tournament, n: int) -> Plan:
    field_ = list(t.seeds)
    withdrawn = {p for p in field_ if t.out(p)}
    if t.options.table_size == 2:
        m = len(field_) + (len(field_) % 2)
        tables, byes = [], []
        for a, b in pairing.berger_round(m, n):
            pa = field_[a - 1] if a <= len(field_) else None
            pb = field_[b - 1] if b <= len(field_) else None
            live = [p for p in (pa, pb) if p is not None and p not in withdrawn]
            if len(live) == 2:
                tables.append(live)
            elif len(live) == 1:
                byes.append(live[0])
        return Plan(n, tables, byes)
    schedule = pairing.round_robin_tables(
        field_, t.options.table_size, total_rounds(t), t.created.seed
    )
    tables = [[p for p in tb if p not in withdrawn] for tb in schedule[n - 1]]
    fs = firsts(t)
    keep = [pairing.rotate_seats(tb, fs, t.created.seed, n) for tb in tables if len(tb) >= 2]
    byes = [tb[0] for tb in tables if len(tb) == 1]
    return Plan(n, keep, byes)


# --------------------------------------------------------------- elimination
def table_winner(t: Tournament, table: TableState) -> str | None:
    """The winner of a decided 2-player elimination table (None: undecided)."""
    res = table.last_result
    if res is None:
        return None
    if res.decisive:
        return res.players[res.ranks.index(min(res.ranks))]
    if len(table.matches) >= t.options.max_games or t.round_of(table).deadline_passed:
        return min(res.players, key=t.seed_of)  # every game drawn: the better seed
    return None


def needs_rematch(t: Tournament, table: TableState) -> bool:
    if knockout_of_tables(t):
        return False  # ties at the cut go by score, then seed
    if t.round_of(table).deadline_passed:
        return False  # the round is out of time: the better seed goes through
    res = table.last_result
    return res is not None and not res.decisive and len(table.matches) < t.options.max_games


def _top_cut_seeds(t: Tournament) -> list[str]:
    order = [s.player for s in swiss_standings(t, swiss_stage_only=True)]
    active = [p for p in order if not t.out(p)]
    return active[: t.options.top_cut]


def bracket(t: Tournament, seeds: list[str]) -> list[list[tuple[str, str | None]]]:
    """The elimination rounds so far as pairs in bracket order (``None``: a
    bye), the last one being the next to play once the others are decided."""
    stage = [r for r in t.rounds if r.stage == STAGE_ELIMINATION]
    first = [
        (seeds[a - 1], seeds[b - 1] if b is not None else None)
        for a, b in pairing.elimination_bracket(len(seeds))
    ]
    out = [first]
    for rnd in stage:
        by_players = {frozenset(tb.players): tb for tb in rnd.tables}
        winners = []
        for a, b in out[-1]:
            tb = by_players.get(frozenset((a, b))) if b is not None else None
            if tb is None and (b is None or t.out(b)):
                winners.append(a)
            elif tb is None and t.out(a):
                winners.append(b)
            else:
                if tb is None:
                    raise AssertionError(f"no table for {a} v {b} in round {rnd.number}")
                w = table_winner(t, tb)
                winners.append(w if w is not None else a)
        if len(winners) == 1:
            break
        out.append([(winners[i], winners[i + 1]) for i in range(0, len(winners), 2)])
    return out


def _elimination_round(t: Tournament, n: int, seeds: list[str]) -> Plan | None:
    if len(seeds) < 2:
        return None
    rounds = bracket(t, seeds)
    played = len([r for r in t.rounds if r.stage == STAGE_ELIMINATION])
    if played >= len(rounds):
        return None
    pairs = rounds[played]
    tables, byes = [], []
    for a, b in pairs:
        live = [p for p in (a, b) if p is not None and not t.out(p)]
        if len(live) == 2:
            tables.append(sorted(live, key=t.seed_of))  # better seed sits first in game 1
        elif live:
            byes.append(live[0])
    if not tables and len(byes) <= 1:
        return None
    return Plan(n, tables, byes, STAGE_ELIMINATION)


# ------------------------------------------------- elimination of k-tables
def _is_final(rnd: RoundState) -> bool:
    return len(rnd.tables) == 1 and not rnd.byes


def _seed_key(t: Tournament, seeds: Sequence[str]):
    at = {p: i for i, p in enumerate(seeds)}
    return lambda p: at.get(p, len(seeds) + t.seed_of(p))


def table_placing(table: TableState, seed_key) -> list[str] | None:
    """The players of a decided table, best placed first: the game's rank,
    then the game's score (higher first), then the seed. None: undecided."""
    res = table.last_result
    if res is None:
        return None
    seat = {p: i for i, p in enumerate(res.players)}

    def score(p: str) -> float:
        i = seat[p]
        return res.scores[i] if i < len(res.scores) else 0.0

    return sorted(res.players, key=lambda p: (res.ranks[seat[p]], -score(p), seed_key(p)))


def knockout_advancers(t: Tournament, rnd: RoundState, seeds: Sequence[str]) -> list[str]:
    """Who goes through from a completed elimination round of tables, in the
    order of the next round's seeding: the byes, then by placing at their
    table (every table's winner before any second), then by seed. A player
    who has withdrawn does not go through; the next placed at that table
    takes the place."""
    key = _seed_key(t, seeds)
    m = advance_of(t.options)
    entries = [(1, key(p), p) for p in rnd.byes if not t.out(p)]
    for tb in rnd.tables:
        order = table_placing(tb, key) or []
        live = [p for p in order if not t.out(p)]
        entries += [(place, key(p), p) for place, p in enumerate(live[:m], 1)]
    return [p for *_k, p in sorted(entries)]


def _knockout_round(t: Tournament, n: int, seeds: list[str], game: Game) -> Plan | None:
    """The next round of an elimination of tables of ``table_size`` where the
    best ``advance`` of each go through: the field (seeds, or the advancers
    of the last round) is split by ``pairing.knockout_round`` (tables of k or
    k-1, byes to the top of the field only where needed) and dealt to the
    tables in snake order, so the best meet as late as they can; the final
    is one table of everyone left."""
    stage = [r for r in t.rounds if r.stage == STAGE_ELIMINATION]
    if stage:
        if _is_final(stage[-1]):
            return None
        field_ = knockout_advancers(t, stage[-1], seeds)
    else:
        field_ = [p for p in seeds if not t.out(p)]
    if len(field_) < 2:
        return None  # one left (the others withdrew): the champion
    k, m = t.options.table_size, advance_of(t.options)
    split = pairing.knockout_round(len(field_), k, m, game.min_players)
    if split is None:
        if not game.min_players <= len(field_) <= game.max_players:
            return None  # fewer than a table: the last round's placings stand
        split = (0, (len(field_),))  # withdrawals left a field no bracket fits: a final
    byes, sizes = split
    tables = pairing.snake(field_[byes:], sizes)
    fs = firsts(t)
    seated = [pairing.rotate_seats(tb, fs, t.created.seed, n) for tb in tables]
    return Plan(n, seated, field_[:byes], STAGE_ELIMINATION)


def knockout_standings(t: Tournament, seeds: list[str]) -> list[Standing]:
    """By the elimination round reached (later is better), then the placing
    at the table in it (the final's placings rank the finalists); players
    equal on both share a rank. Someone still playing has placing 0."""
    ls = lines(t)
    key = _seed_key(t, seeds)
    stage = [r for r in t.rounds if r.stage == STAGE_ELIMINATION]
    reached = dict.fromkeys(seeds, 0)
    place = dict.fromkeys(seeds, 0)
    for i, rnd in enumerate(stage, 1):
        for p in rnd.byes:
            if p in reached:
                reached[p], place[p] = i, 0
        for tb in rnd.tables:
            order = table_placing(tb, key)
            for p in tb.players:
                if p in reached:
                    reached[p] = i
                    place[p] = order.index(p) + 1 if order is not None else 0
    for p in seeds:
        if t.out(p) and not reached[p]:
            reached[p] = -1  # withdrew before playing: last
    rows = sorted(seeds, key=lambda p: ((-reached[p], place[p]), key(p)))
    return _ranked(
        [
            (
                p,
                ls[p],
                {"round_reached": float(max(reached[p], 0)), "place": float(place[p])},
                (-reached[p], place[p]),
            )
            for p in rows
        ]
    )


# ----------------------------------------------------------------- standings
def swiss_standings(t: Tournament, *, swiss_stage_only: bool = False) -> list[Standing]:
    """Points, then the format's tiebreaks, then the seed."""
    ls = lines(t, swiss_stage_only=swiss_stage_only)
    pts = {p: line.points for p, line in ls.items()}
    two = t.options.table_size == 2
    rows = []
    for p, line in ls.items():
        if two:
            buchholz = sum(pts[o[0]] for o, _ in line.games)
            sb = sum(pts[o[0]] * g for o, g in line.games)
            tb = {"buchholz": buchholz, "sonneborn_berger": sb, "wins": float(line.wins)}
            if t.format == FORMAT_ROUND_ROBIN:
                key = (-line.points, -sb, -line.wins, t.seed_of(p))
            else:
                key = (-line.points, -buchholz, -sb, -line.wins, t.seed_of(p))
        else:
            opp = [pts[q] for others, _ in line.games for q in others]
            avg = sum(opp) / len(opp) if opp else 0.0
            tb = {
                "firsts": float(line.wins),
                "score_total": line.score_total,
                "opponents_average": round(avg, 4),
            }
            key = (-line.points, -line.wins, -line.score_total, -avg, t.seed_of(p))
        rows.append((key, p, line, tb))
    rows.sort(key=lambda r: r[0])
    return _ranked([(r[1], r[2], r[3], r[0][:-1]) for r in rows])


def _ranked(rows: list[tuple[str, Line, dict[str, float], tuple]]) -> list[Standing]:
    """Shared ranks for equal keys (the seed is not a tiebreak, only an order)."""
    out = []
    prev, rank = None, 0
    for i, (p, line, tb, key) in enumerate(rows, 1):
        if key != prev:
            rank, prev = i, key
        out.append(
            Standing(
                rank=rank,
                player=p,
                points=line.points,
                played=line.played,
                wins=line.wins,
                tiebreaks=tb,
            )
        )
    return out


def elimination_standings(t: Tournament, seeds: list[str]) -> list[Standing]:
    """The champion, the finalist, then by the round each went out in (later
    is better), then by seed; everyone outside the bracket after."""
    ls = lines(t)
    stage = [r for r in t.rounds if r.stage == STAGE_ELIMINATION]
    out_in: dict[str, int] = {}
    champion = None
    for i, rnd in enumerate(stage, 1):
        for tb in rnd.tables:
            w = table_winner(t, tb)
            for p in tb.players:
                if p != w:
                    out_in.setdefault(p, i)
        if i == len(stage) and len(rnd.tables) == 1:
            champion = table_winner(t, rnd.tables[0])
    for p in seeds:
        if t.entrants[p].withdrawn:
            out_in.setdefault(p, 0)  # withdrew without losing a table: last
    depth = len(stage) + 1

    def key(p: str) -> tuple:
        if p == champion:
            return (0,)
        return (1, -out_in.get(p, depth))

    rows = sorted(seeds, key=lambda p: (key(p), t.seed_of(p)))
    ranked = [(p, ls[p], {"eliminated_in_round": float(out_in.get(p, 0))}, key(p)) for p in rows]
    return _ranked(ranked)


def race_standings(t: Tournament) -> list[Standing]:
    """Best single game score (or the sum), then wins, then fewer matches."""
    best = t.options.race_scoring == "best"
    agg: dict[str, list[float]] = {p: [] for p in t.entrants}
    wins = dict.fromkeys(t.entrants, 0)
    for r in t.race_results:
        for seat, p in enumerate(r.players):
            if p in agg:
                agg[p].append(r.scores[seat] if seat < len(r.scores) else 0.0)
                wins[p] += 1 if r.ranks[seat] == 1 and r.decisive else 0
    rows = []
    for p, scores in agg.items():
        value = (max(scores) if scores else 0.0) if best else sum(scores)
        line = Line(p, points=value, played=len(scores), wins=wins[p])
        k = (-value, -wins[p], len(scores))
        rows.append((k, t.entrants[p].order, p, line))
    rows.sort(key=lambda r: (r[0], r[1]))
    return _ranked([(p, line, {"matches": float(line.played)}, k) for k, _o, p, line in rows])


def standings(t: Tournament) -> list[Standing]:
    if t.format == FORMAT_SCORE_RACE:
        return race_standings(t)
    if t.format == FORMAT_ELIMINATION:
        if knockout_of_tables(t):
            return knockout_standings(t, list(t.seeds))
        return elimination_standings(t, list(t.seeds))
    if (
        t.format in (FORMAT_SWISS, FORMAT_SWISS_TABLES)
        and t.options.top_cut
        and any(r.stage == STAGE_ELIMINATION for r in t.rounds)
    ):
        cut = _top_cut_seeds(t)
        if knockout_of_tables(t):
            top = knockout_standings(t, cut)
        else:
            top = elimination_standings(t, cut)
        rest = [s for s in swiss_standings(t, swiss_stage_only=True) if s.player not in cut]
        merged = list(top) + [
            Standing(
                rank=len(top) + i,
                player=s.player,
                points=s.points,
                played=s.played,
                wins=s.wins,
                tiebreaks=s.tiebreaks,
            )
            for i, s in enumerate(rest, 1)
        ]
        return merged
    return swiss_standings(t)
