"""Pairings: pure functions of the standings and the history (no I/O, no clock).

- ``swiss_pairs``: a 2-player Swiss round as a minimum-cost perfect matching
  (networkx ``max_weight_matching`` with ``maxcardinality``, over weights
  ``BIG - cost``). The cost of a pair is, in decreasing order of weight:
  a rematch (heavier than every other cost of a whole round together, so a
  rematch happens only where none can be avoided), the squared score
  difference (players stay in their score group; floaters go to the nearest
  group), the distance from the Dutch "top half against bottom half" pattern
  inside the score group, and a first-player (colour) clash. Deterministic:
  integer weights, nodes added in standings order.
  An odd field has a virtual bye player in the same matching: the bye goes
  to the lowest-ranked of the lowest score group without one (one bye each at
  most while anyone has none), unless that would force a rematch.
- ``first_player``: who sits first, by the balance of first seats so far.
- ``berger_round``: FIDE Berger tables for a round robin.
- ``elimination_bracket``: standard seeding positions (1 v N, byes to the top
  seeds).
- ``swiss_tables``: tables of k by score group minimising repeat co-seating,
  seats rotated by the first seats each had.
"""

from __future__ import annotations

import functools
import hashlib
import itertools
from collections.abc import Iterable, Sequence

import networkx as nx


def _hash_bit(*parts: object) -> int:
    return hashlib.sha256("\0".join(map(str, parts)).encode()).digest()[0] & 1


BYE = "\0bye"
"""The virtual opponent of the bye in the matching."""


def swiss_pairs(
    ranked: Sequence[str],
    points: dict[str, float],
    played: set[frozenset[str]],
    first_balance: dict[str, int] | None = None,
    had_bye: set[str] | None = None,
) -> tuple[list[tuple[str, str]], str | None]:
    """Pairs for the field ``ranked`` (best first), and the bye for an odd
    field. Each pair is ordered best-ranked first (seats are decided by
    ``first_player``). The bye is a virtual player in the same matching: it
    goes to the lowest score group and the lowest ranked there, never to a
    player who had one while another has not (as heavy as a rematch), and the
    matching trades the two off only where no pairing has neither."""
    n = len(ranked)
    if n == 0:
        return [], None
    balance = first_balance or {}
    byes = had_bye or set()
    rank = {p: i for i, p in enumerate(ranked)}
    groups: dict[float, list[str]] = {}
    for p in ranked:
        groups.setdefault(points.get(p, 0.0), []).append(p)
    pos = {}
    size = {}
    for members in groups.values():
        for i, p in enumerate(members):
            pos[p] = i
            size[p] = len(members)

    def half_points(p: str) -> int:
        return round(points.get(p, 0.0) * 2)

    lowest = min(half_points(p) for p in ranked)

    def soft_cost(a: str, b: str) -> int:
        diff = half_points(a) - half_points(b)
        cost = diff * diff * 10_000
        if diff == 0:
            half = size[a] // 2
            cost += abs(abs(pos[a] - pos[b]) - half) * 10
        else:  # a floater meets the nearest players of the other group
            cost += abs(rank[a] - rank[b])
        ba, bb = balance.get(a, 0), balance.get(b, 0)
        if (ba > 0 and bb > 0) or (ba < 0 and bb < 0):
            cost += 5 * min(abs(ba), abs(bb))
        return cost

    costs: dict[tuple[str, str], int] = {}
    for a, b in itertools.combinations(ranked, 2):
        costs[a, b] = soft_cost(a, b)
    soft_max = max(costs.values(), default=0)
    # The bye's score comes before every pairing cost (FIDE: minimise the
    # score of the bye's assignee first), its rank within the group after.
    bye_unit = soft_max * (n + 1) + 1
    odd = n % 2 == 1
    if odd:
        for p in ranked:
            diff = half_points(p) - lowest
            costs[p, BYE] = diff * diff * bye_unit + (n - 1 - rank[p]) * 10
    worst = max(costs.values(), default=0)
    hard = worst * (n + 1) + 1  # a rematch, or a second bye
    big = hard * (n + 1) + 1
    g = nx.Graph()
    g.add_nodes_from(ranked)
    if odd:
        g.add_node(BYE)
    everyone_had_one = all(p in byes for p in ranked)
    for (a, b), c in costs.items():
        if b == BYE:
            if a in byes and not everyone_had_one:
                c += hard
        elif frozenset((a, b)) in played:
            c += hard
        g.add_edge(a, b, weight=big - c)
    matching = nx.max_weight_matching(g, maxcardinality=True)
    bye = None
    pairs = []
    for e in matching:
        if BYE in e:
            bye = next(p for p in e if p != BYE)
            continue
        a, b = sorted(e, key=rank.__getitem__)
        pairs.append((a, b))
    pairs.sort(key=lambda e: rank[e[0]])
    assert len(pairs) * 2 + (1 if odd else 0) == n
    return pairs, bye


def first_player(a: str, b: str, balance: dict[str, int], seed: str, round_no: int) -> bool:
    """Whether ``a`` (the better ranked) takes the first seat against ``b``:
    the one who sat first less often does; on equal balance it alternates
    with the rounds, drawn once from the seed."""
    ba, bb = balance.get(a, 0), balance.get(b, 0)
    if ba != bb:
        return ba < bb
    return (round_no + _hash_bit(seed)) % 2 == 1


def berger_round(n: int, round_no: int) -> list[tuple[int, int]]:
    """Round ``round_no`` (1-based) of the FIDE Berger table for ``n`` players
    (even; give an odd field a dummy ``n + 1``): pairs of 1-based numbers,
    first = the first seat (white). Player ``n`` alternates colours on
    board 1; the others rotate by ``n / 2`` each round."""
    if n % 2 or n < 2:
        raise ValueError("Berger tables need an even number of players")
    if not 1 <= round_no <= n - 1:
        raise ValueError(f"a round robin of {n} has rounds 1..{n - 1}")
    r = round_no - 1
    arr = [((i + r * (n // 2)) % (n - 1)) + 1 for i in range(n - 1)]
    pairs = [(arr[0], n) if r % 2 == 0 else (n, arr[0])]
    for k in range(1, n // 2):
        pairs.append((arr[k], arr[n - 1 - k]))
    return pairs


def bracket_positions(size: int) -> list[int]:
    """Seeds in bracket order for a power of two: 1, size, ... so that seeds
    1 and 2 can meet only in the final (8: 1 8 4 5 2 7 3 6)."""
    order = [1]
    while len(order) < size:
        m = len(order) * 2 + 1
        order = [x for s in order for x in (s, m - s)]
    return order


def elimination_bracket(n: int) -> list[tuple[int, int | None]]:
    """First-round pairs of seeds for ``n`` players; ``None`` is a bye (the
    top seeds get them)."""
    size = 1
    while size < n:
        size *= 2
    order = bracket_positions(size)
    out: list[tuple[int, int | None]] = []
    for i in range(0, size, 2):
        a, b = order[i], order[i + 1]
        out.append((a, b if b <= n else None))
    return out


def table_sizes(n: int, k: int, minimum: int) -> list[int]:
    """Split ``n`` players into tables of ``k``, the last few one smaller
    each (never under ``minimum``): 10 by 4 -> 4, 3, 3."""
    if n < minimum:
        raise ValueError(f"{n} players cannot fill a table of {minimum}")
    count = -(-n // k)
    while True:
        base, extra = divmod(n, count)
        if base >= minimum and base + (1 if extra else 0) <= k:
            sizes = [base + 1] * extra + [base] * (count - extra)
            return sizes
        count += 1
        if count > n:
            raise ValueError(f"{n} players cannot sit at tables of {minimum}..{k}")


def swiss_tables(
    ranked: Sequence[str],
    sizes: Sequence[int],
    met: dict[frozenset[str], int],
    window: int = 0,
) -> list[list[str]]:
    """Tables for a multi-player Swiss round: players are taken best first;
    each table is filled from the top of who is left, choosing among the
    next few the ones that met the others at the table least often (ties:
    the best ranked). Score groups stay together because the pool is
    scanned in standings order and the window is small."""
    pool = list(ranked)
    tables: list[list[str]] = []
    for k in sizes:
        table = [pool.pop(0)]
        while len(table) < k:
            choices = pool[: window or max(k * 2, 4)]

            def repeats(p: str, table: list[str] = table) -> int:
                return sum(met.get(frozenset((p, q)), 0) for q in table)

            best = min(choices, key=lambda p: (repeats(p), pool.index(p)))
            pool.remove(best)
            table.append(best)
        tables.append(table)
    return tables


def rotate_seats(
    table: Iterable[str], firsts: dict[str, int], seed: str, round_no: int
) -> list[str]:
    """Seat order for a table: fewest first seats so far sits first (seat 0),
    then the next; ties by a hash of the seed, the round and the player, so
    the order rotates over rounds."""
    return sorted(
        table,
        key=lambda p: (
            firsts.get(p, 0),
            hashlib.sha256(f"{seed}\0{round_no}\0{p}".encode()).digest(),
        ),
    )


def _seating_cost(tables: list[list[str]], met: dict[frozenset[str], int]) -> int:
    return sum(
        (met.get(frozenset(pair), 0) + 1) ** 2
        for t in tables
        for pair in itertools.combinations(t, 2)
    )


def _improve(
    tables: list[list[str]], met: dict[frozenset[str], int], passes: int = 4
) -> list[list[str]]:
    """Swap players between tables while that lowers the seating cost."""
    tables = [list(t) for t in tables]

    def cost_of(t: list[str]) -> int:
        return sum((met.get(frozenset(p), 0) + 1) ** 2 for p in itertools.combinations(t, 2))

    for _ in range(passes):
        better = False
        for i, j in itertools.combinations(range(len(tables)), 2):
            for a, b in itertools.product(range(len(tables[i])), range(len(tables[j]))):
                ti, tj = tables[i], tables[j]
                before = cost_of(ti) + cost_of(tj)
                ti[a], tj[b] = tj[b], ti[a]
                if cost_of(ti) + cost_of(tj) < before:
                    better = True
                else:
                    ti[a], tj[b] = tj[b], ti[a]
        if not better:
            break
    return tables


def round_robin_tables(
    players: Sequence[str], k: int, rounds: int, seed: str, candidates: int = 48
) -> list[list[list[str]]]:
    """A schedule for a multi-player round robin: ``rounds`` rounds of tables
    of ``k`` so that pairs meet as evenly as they can. Each round takes the
    best of ``candidates`` greedy seatings (orders drawn from the seed), by
    the sum of squared meeting counts it leads to."""
    met: dict[frozenset[str], int] = {}
    out = []
    sizes = table_sizes(len(players), k, min(k, 2))
    for r in range(1, rounds + 1):
        best: tuple[int, list[list[str]]] | None = None
        for c in range(candidates):
            order = sorted(
                players,
                key=lambda p, c=c: hashlib.sha256(f"{seed}\0rr{r}\0{c}\0{p}".encode()).digest(),
            )
            tables = _improve(swiss_tables(order, sizes, met, window=len(order)), met)
            cost = _seating_cost(tables, met)
            if best is None or cost < best[0]:
                best = (cost, tables)
        assert best is not None
        for t in best[1]:
            for a, b in itertools.combinations(t, 2):
                key = frozenset((a, b))
                met[key] = met.get(key, 0) + 1
        out.append(best[1])
    return out


# ------------------------------------------------- elimination of k-tables
MAX_KO_BYES = 64
"""Byes tried per round, at most, before a field is called unplayable."""


def knockout_round(p: int, k: int, m: int, minimum: int) -> tuple[int, tuple[int, ...]] | None:
    """One round of an elimination of tables of ``k`` where the best ``m`` of
    each table go through, for ``p`` players: ``(byes, table sizes)``, biggest
    tables first. ``(0, (p,))`` is the final table (``minimum <= p <= k``).
    None: no bracket can be made of ``p`` (fewer than ``minimum``, or no
    split whose advancers can themselves be split on down to a final).

    Tables are of ``k`` or ``k - 1`` (never under the game's minimum, nor
    under ``m + 1``: every table sends someone home), as in a Swiss of tables;
    only when the field cannot be seated that way, or the seated tables
    would leave a next round that cannot be played, the fewest top seeds
    possible get a bye (straight to the next round). Among the splits with
    the fewest byes the one with the fewest (so the biggest) tables wins."""
    return _knockout_round(p, k, m, minimum)


@functools.lru_cache(maxsize=8192)
def _knockout_round(p: int, k: int, m: int, minimum: int) -> tuple[int, tuple[int, ...]] | None:
    if not (1 <= m < k and 2 <= minimum <= k):
        raise ValueError(f"no elimination of tables of {k} with {m} going through")
    if minimum <= p <= k:
        return 0, (p,)
    if p < minimum:
        return None
    lo = max(minimum, m + 1, k - 1)
    for byes in range(min(p - lo, MAX_KO_BYES) + 1):
        rest = p - byes
        for count in range(-(-rest // k), rest // lo + 1):
            through = count * m + byes
            if through < p and _knockout_round(through, k, m, minimum) is not None:
                base, extra = divmod(rest, count)
                return byes, tuple([base + 1] * extra + [base] * (count - extra))
    return None


def knockout_shape(n: int, k: int, m: int, minimum: int) -> list[tuple[int, tuple[int, ...]]]:
    """Every round of the bracket for a field of ``n`` (nobody withdrawing):
    ``(byes, table sizes)`` per round, the last being the final table.
    ValueError when the field cannot make a bracket."""
    out = []
    while True:
        r = knockout_round(n, k, m, minimum)
        if r is None:
            raise ValueError(
                f"{n} players cannot make a bracket of tables of {k} (of {minimum} at least) "
                f"with the best {m} of each going through"
            )
        out.append(r)
        byes, sizes = r
        if byes == 0 and len(sizes) == 1:
            return out
        n = len(sizes) * m + byes


def snake(players: Sequence[str], sizes: Sequence[int]) -> list[list[str]]:
    """Deal ``players`` (best first) to tables of ``sizes`` in snake order:
    1..T to tables 1..T, then T+1..2T back from table T, and so on (a full
    table is skipped), so each table has one of the top T and the best
    seeds meet as late as the bracket lets them."""
    if sum(sizes) != len(players):
        raise ValueError("the sizes do not seat the players")
    tables: list[list[str]] = [[] for _ in sizes]
    order = list(range(len(sizes)))
    i = 0
    forward = True
    while i < len(players):
        for t in order if forward else reversed(order):
            if len(tables[t]) < sizes[t] and i < len(players):
                tables[t].append(players[i])
                i += 1
        forward = not forward
    return tables
