"""Single elimination of k-player tables (the best m of each go through),
pure: the bracket maths, the snake seeding, byes to the top seeds, the cut
rule, the standings, and the invariants of whole brackets over many seeds."""

from __future__ import annotations

import random
from collections import Counter

import pytest

from engine_core.registry import default_registry
from services.common.errors import FailedPrecondition
from services.tournaments import formats, pairing
from services.tournaments.model import Options, Result, TableState
from tests.services.tournaments.sim import Sim, by_strength

REG = default_registry()


# ------------------------------------------------------------ the maths
def test_knockout_rounds_by_hand():
    # Dice Forge (2-4 players), tables of 4, the best 2 go through
    assert pairing.knockout_shape(8, 4, 2, 2) == [(0, (4, 4)), (0, (4,))]
    assert pairing.knockout_shape(4, 4, 2, 2) == [(0, (4,))]
    # 10: tables of 4 or 3, then 6 -> 3 + 3, then a final of 4
    assert pairing.knockout_shape(10, 4, 2, 2) == [(0, (4, 3, 3)), (0, (3, 3)), (0, (4,))]
    # 5 cannot sit at tables of 3-4 at once: the top seed has a bye
    assert pairing.knockout_shape(5, 4, 2, 2) == [(1, (4,)), (0, (3,))]
    # Assault of the Giants (3-6), tables of 3, the winner goes through:
    # 7 = a bye + two tables of 3 -> a final of 3 (two tables alone would leave 2)
    assert pairing.knockout_shape(7, 3, 1, 3) == [(1, (3, 3)), (0, (3,))]
    assert pairing.knockout_shape(9, 3, 1, 3) == [(0, (3, 3, 3)), (0, (3,))]
    for n in (4, 6, 8):  # no bracket ends in a table of 3
        with pytest.raises(ValueError):
            pairing.knockout_shape(n, 3, 1, 3)


@pytest.mark.parametrize(
    "k, m, minimum",
    [(4, 1, 2), (4, 2, 2), (4, 3, 2), (3, 1, 2), (3, 2, 2), (3, 1, 3), (4, 1, 3), (6, 2, 3),
     (5, 3, 3)],
)  # fmt: skip
def test_every_bracket_is_well_formed(k, m, minimum):
    lo = max(minimum, m + 1, k - 1)
    playable = 0
    for n in range(minimum, 300):
        try:
            shape = pairing.knockout_shape(n, k, m, minimum)
        except ValueError:
            continue
        playable += 1
        field = n
        for i, (byes, sizes) in enumerate(shape):
            assert byes + sum(sizes) == field  # everyone seated or given a bye
            last = i == len(shape) - 1
            if last:
                assert byes == 0 and len(sizes) == 1 and minimum <= sizes[0] <= k
            else:
                assert all(lo <= s <= k for s in sizes), (n, shape)
                assert max(sizes) - min(sizes) <= 1
                assert byes < lo or byes <= pairing.MAX_KO_BYES
                field = byes + len(sizes) * m
    assert playable > 50  # most fields make a bracket


def test_snake_spreads_the_top_seeds():
    seeds = [f"s{i}" for i in range(1, 11)]
    tables = pairing.snake(seeds, [4, 3, 3])
    # one of the top 3 at each table, then back, then on; a full table is skipped
    assert tables == [["s1", "s6", "s7", "s10"], ["s2", "s5", "s8"], ["s3", "s4", "s9"]]
    assert sorted(map(len, tables)) == [3, 3, 4]
    assert sorted(p for t in tables for p in t) == sorted(seeds)


# -------------------------------------------------------- whole brackets
@pytest.mark.parametrize("n", [5, 8, 10, 13, 16, 17, 23])
def test_by_strength_the_best_seeds_reach_the_final(n):
    sim = Sim("dice_forge", "single_elimination", n, table_size=4, advance=2)
    t = sim.run(random.Random(0), by_strength)
    final = t.rounds[-1]
    assert len(final.tables) == 1 and not final.byes
    assert sorted(final.tables[0].players) == sorted(
        f"p{i}" for i in range(len(final.tables[0].players))
    )
    assert [s.player for s in t.standings[:4]] == ["p0", "p1", "p2", "p3"]
    ranks = {s.player: s.rank for s in t.standings}
    assert all(ranks[f"p{i}"] <= ranks[f"p{i + 1}"] for i in range(n - 1))  # stronger never below
    assert len(t.rounds) == len(pairing.knockout_shape(n, 4, 2, 2)) == formats.total_rounds(t)


def _check_bracket(t, k, m):
    field = list(t.seeds)
    for i, rnd in enumerate(t.rounds):
        seated = [p for tb in rnd.tables for p in tb.players]
        assert len(seated) == len(set(seated))  # nobody at two tables
        assert not set(seated) & set(rnd.byes)
        assert sorted(seated + list(rnd.byes)) == sorted(field)
        # byes go to the top of the field
        assert rnd.byes == tuple(field[: len(rnd.byes)])
        if i == len(t.rounds) - 1:
            assert len(rnd.tables) == 1 and not rnd.byes
            break
        advancers = formats.knockout_advancers(t, rnd, t.seeds)
        for tb in rnd.tables:
            assert len(set(tb.players) & set(advancers)) == m  # exactly m from each table
            order = formats.table_placing(tb, formats._seed_key(t, t.seeds))
            assert set(order[:m]) <= set(advancers)
        assert len(advancers) == len(rnd.byes) + m * len(rnd.tables)
        field = advancers


@pytest.mark.parametrize("seed", range(6))
@pytest.mark.parametrize(
    "game, n, k, m",
    [("dice_forge", 11, 4, 2), ("dice_forge", 19, 4, 1), ("dice_forge", 14, 3, 1),
     ("assault_of_the_giants", 7, 3, 1), ("assault_of_the_giants", 20, 5, 2),
     ("arcane_academy", 9, 4, 3)],
)  # fmt: skip
def test_bracket_invariants_on_random_results(game, n, k, m, seed):
    sim = Sim(game, "single_elimination", n, table_size=k, advance=m, seed=str(seed))
    t = sim.run(random.Random(seed))
    _check_bracket(t, k, m)
    assert len(t.standings) == n
    champion = t.standings[0]
    order = formats.table_placing(t.rounds[-1].tables[0], formats._seed_key(t, t.seeds))
    assert champion.player == order[0] and champion.rank == 1
    reached = [s.tiebreaks["round_reached"] for s in t.standings]
    assert reached == sorted(reached, reverse=True)  # by the round reached first


def test_a_tie_at_the_cut_goes_by_score_then_seed():
    t = Sim("dice_forge", "single_elimination", 4, table_size=4, advance=2).t
    key = {"a": 1, "b": 2, "c": 3, "d": 4}.get
    tb = TableState(1, ("d", "c", "b", "a"), ["m"])
    # c and b tie for second on rank; c has the higher score
    tb.results["m"] = Result("m", ("d", "c", "b", "a"), (1, 2, 2, 4), (9.0, 7.0, 6.0, 1.0), "")
    assert formats.table_placing(tb, key) == ["d", "c", "b", "a"]
    # equal rank and score: the better seed (b)
    tb.results["m"] = Result("m", ("d", "c", "b", "a"), (1, 2, 2, 4), (9.0, 6.0, 6.0, 1.0), "")
    assert formats.table_placing(tb, key) == ["d", "b", "c", "a"]
    assert t is not None


def test_a_withdrawn_qualifier_is_replaced_by_the_next_placed():
    sim = Sim("dice_forge", "single_elimination", 8, table_size=4, advance=2)
    sim.close()
    sim.play_round(random.Random(0), by_strength)
    r1 = sim.t.rounds[0]
    qualifiers = formats.knockout_advancers(sim.t, r1, sim.t.seeds)
    assert sorted(qualifiers) == ["p0", "p1", "p2", "p3"]
    sim.withdraw("p0")
    assert sorted(formats.knockout_advancers(sim.t, r1, sim.t.seeds)) == ["p1", "p2", "p3", "p4"]
    t = sim.run(random.Random(0), by_strength)
    assert sorted(t.rounds[1].tables[0].players) == ["p1", "p2", "p3", "p4"]
    assert t.standings[0].player == "p1"
    # p0 went out in round 1 (by withdrawing), first at its table: after the final four
    assert {s.player: s.rank for s in t.standings}["p0"] == 5


def test_swiss_tables_then_a_top_cut_of_tables():
    sim = Sim("dice_forge", "swiss_tables", 16, rounds=3, table_size=4, top_cut=8, advance=2)
    t = sim.run(random.Random(3))
    assert [r.stage for r in t.rounds] == ["", "", "", "elimination", "elimination"]
    cut = [s.player for s in formats.swiss_standings(t, swiss_stage_only=True)][:8]
    first = t.rounds[3]
    assert sorted(p for tb in first.tables for p in tb.players) == sorted(cut)
    assert [len(tb.players) for tb in first.tables] == [4, 4]
    # the cut's seeds snake: Swiss #1 and #2 at different tables
    assert not any({cut[0], cut[1]} <= set(tb.players) for tb in first.tables)
    assert len(t.rounds[4].tables) == 1 and len(t.rounds[4].tables[0].players) == 4
    assert {s.player for s in t.standings[:4]} == set(t.rounds[4].tables[0].players)
    assert len(t.standings) == 16 and [s.rank for s in t.standings] == sorted(
        s.rank for s in t.standings
    )
    assert formats.total_rounds(t) == 5


# ------------------------------------------------------------ bad input
def test_bad_table_sizes_and_advance_are_refused():
    df, aotg, ttt = REG.get("dice_forge"), REG.get("assault_of_the_giants"), REG.get("tic_tac_toe")
    cases = [
        (df, "single_elimination", Options(table_size=5), "table_size_unsupported"),
        (aotg, "single_elimination", Options(table_size=2), "table_size_unsupported"),
        (df, "single_elimination", Options(table_size=4, advance=4), "bad_advance"),
        (df, "single_elimination", Options(table_size=3, advance=5), "bad_advance"),
        (ttt, "single_elimination", Options(advance=2), "bad_advance"),
        (df, "swiss_tables", Options(table_size=4, advance=2), "bad_advance"),  # no cut
        (aotg, "swiss_tables", Options(table_size=3, top_cut=6), "bad_top_cut"),  # no bracket
        (df, "swiss_tables", Options(table_size=4, top_cut=100_000), "bad_top_cut"),
    ]
    for game, fmt, opts, reason in cases:
        with pytest.raises(formats.FormatError) as e:
            formats.validate(game, fmt, 2 if fmt == "swiss_tables" else 0, opts)
        assert e.value.reason == reason, (fmt, opts)
    formats.validate(df, "single_elimination", 0, Options(table_size=4, advance=3))
    formats.validate(aotg, "swiss_tables", 2, Options(table_size=3, top_cut=9))


def test_a_field_no_bracket_fits_is_refused_at_the_start():
    sim = Sim("assault_of_the_giants", "single_elimination", 6, table_size=3)
    with pytest.raises(FailedPrecondition) as e:
        formats.check_field(sim.t, sim.game, 6)
    assert e.value.reason == "bracket_unplayable"
    formats.check_field(sim.t, sim.game, 7)


def test_counts_are_right_for_whole_fields():
    for n in (8, 16, 32):
        t = Sim("dice_forge", "single_elimination", n, table_size=4, advance=1).run(
            random.Random(n)
        )
        played = Counter(len(r.tables) for r in t.rounds)
        assert sum(k * v for k, v in played.items()) == sum(
            len(sizes) for _b, sizes in pairing.knockout_shape(n, 4, 1, 2)
        )
