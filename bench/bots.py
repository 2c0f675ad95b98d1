"""Bot figures (docs/bots.md), in one process, no I/O.

* Per game and player count: the search bot (one seat, the seat rotating with
  the seed) against greedy bots in every other seat, over seeded games: its
  win rate (2 players; a shared first place counts half) or mean rank (more),
  next to the greedy seat's expectation (0.5 and (n+1)/2).
* The search bot's decision time p50/p99 (decisions with one legal move are
  not searched and not counted) and iterations per second.
* Per game and player count: the share of greedy-vs-greedy games that end
  naturally rather than at a round or move limit.

``python -m bench.bots`` runs the quick size (what ``make bench`` runs: 10
search games and 50 greedy games per game and count); ``--full`` plays 100 of
each. The search budget is the same in both: ``ITERATIONS`` per decision
(``ITERATIONS_BY_COUNT`` where a game and count get more), rollouts of
``ROLLOUT_MOVES`` greedy moves. An iteration budget, not a time budget: the
games are the same on any machine and under any load.
"""

from __future__ import annotations

import argparse
import json
import time
from typing import Any

from bench.stats import percentile
from engine_core.bots import greedy_bots
from engine_core.bots.search import SearchBot
from engine_core.registry import default_registry
from engine_core.testing import Playout, playout

LIMIT_REASONS = {"round_limit"}  # Outcome reasons that mean a limit, not the game's end


def ended_naturally(game: Any, result: Playout, endgame_by_pool: bool | None) -> bool:
    """Assault of the Giants ends at the Endgame both ways: natural when the
    Endgame began because Pool B ran dry, not at the round limit."""
    if game.name == "assault_of_the_giants":
        return bool(endgame_by_pool)
    return result.outcome is not None and result.outcome.reason not in LIMIT_REASONS


def natural_ends(game: Any, players: int, games: int) -> dict[str, Any]:
    greedy = greedy_bots()[game.name]
    natural = 0
    reasons: dict[str, int] = {}
    for seed in range(games):
        seen: dict[str, bool] = {}

        def on_step(before, _step, after, seen=seen) -> None:
            if game.name == "assault_of_the_giants" and after.endgame and not before.endgame:
                seen["pool"] = after.pool_b == 0

        result = playout(game, players, seed, bots=greedy, on_step=on_step)
        natural += ended_naturally(game, result, seen.get("pool"))
        reason = result.outcome.reason if result.outcome else "none"
        reasons[reason] = reasons.get(reason, 0) + 1
    return {"games": games, "natural_share": natural / games, "reasons": reasons}


class _Timed:
    name = "search"

    def __init__(self, bot: SearchBot) -> None:
        self.bot = bot
        self.times: list[float] = []
        self.iterations = 0

    def choose(self, game, state, seat, rng):
        t = time.perf_counter()
        move = self.bot.choose(game, state, seat, rng)
        if self.bot.last.iterations:
            self.times.append(time.perf_counter() - t)
            self.iterations += self.bot.last.iterations
        return move


def search_games(
    game: Any, players: int, seeds: range, iterations: int, rollout_moves: int
) -> dict[str, Any]:
    """The raw figures of the search bot's games on ``seeds`` (one seat, the
    seat ``k % players`` for the ``k``-th seed from 10,000): ranks, win scores,
    decision times and iterations. ``summarise`` turns them into figures."""
    timed = _Timed(SearchBot(iterations=iterations, rollout_moves=rollout_moves))
    greedy = greedy_bots()[game.name]
    ranks = []
    scores = []
    for k in seeds:
        seat = k % players
        bots = {s: timed if s == seat else greedy for s in range(players)}
        result = playout(game, players, 10_000 + k, bots=bots)
        assert result.outcome is not None
        rank = result.outcome.ranks[seat]
        ranks.append(rank)
        shared = result.outcome.ranks.count(1) > 1
        scores.append(1.0 if rank == 1 and not shared else (0.5 if rank == 1 else 0.0))
    return {"ranks": ranks, "scores": scores, "times": timed.times, "iterations": timed.iterations}


def summarise(
    players: int, raw: list[dict[str, Any]], iterations: int, rollout_moves: int
) -> dict[str, Any]:
    ranks = [r for part in raw for r in part["ranks"]]
    scores = [x for part in raw for x in part["scores"]]
    t = sorted(x for part in raw for x in part["times"])
    its = sum(part["iterations"] for part in raw)
    games = len(ranks)
    out: dict[str, Any] = {
        "games": games,
        "budget": {"iterations": iterations, "rollout_moves": rollout_moves},
        "mean_rank": sum(ranks) / games,
        "greedy_mean_rank": (players + 1) / 2,
        "mean_rank_stderr": _stderr(ranks),
        "decisions": len(t),
        "decision_p50_ms": percentile(t, 50) * 1000 if t else 0.0,
        "decision_p99_ms": percentile(t, 99) * 1000 if t else 0.0,
        "iterations_per_s": its / sum(t) if t else 0.0,
    }
    if players == 2:
        out["win_rate"] = sum(scores) / games
        out["win_rate_stderr"] = _stderr(scores)
    return out


def _stderr(xs: list[float]) -> float:
    n = len(xs)
    if n < 2:
        return 0.0
    m = sum(xs) / n
    return (sum((x - m) ** 2 for x in xs) / (n - 1) / n) ** 0.5


def search_vs_greedy(
    game: Any, players: int, games: int, iterations: int, rollout_moves: int
) -> dict[str, Any]:
    raw = search_games(game, players, range(games), iterations, rollout_moves)
    return summarise(players, [raw], iterations, rollout_moves)


QUICK = {"games": 10, "greedy_games": 50}
FULL = {"games": 100, "greedy_games": 100}
ITERATIONS = 16  # per decision: the stated budget
ITERATIONS_BY_COUNT = {
    ("arcane_academy", 2): 32,
    ("arcane_academy", 3): 64,
    ("arcane_academy", 4): 16,
    ("assault_of_the_giants", 3): 8,
    ("assault_of_the_giants", 4): 8,
    ("assault_of_the_giants", 6): 16,
    ("dice_forge", 2): 64,
    ("dice_forge", 3): 64,
    ("dice_forge", 4): 64,
    ("dwarves_duel", 2): 128,
}
"""Games and counts with another budget than ``ITERATIONS``: more where the
search bot was level with greedy or behind it with fewer (Arcane Academy with
3 and 4, Dice Forge, The Dwarves), fewer where it was well ahead and
decisions are many (Assault of the Giants), so that the full run fits on a
shared two-core machine; every decision time stays well inside the bot
worker's 0.5 s on a quiet core (docs/bots.md)."""
FIRST = (
    ("dice_forge", 2),
    ("dice_forge", 3),
    ("assault_of_the_giants", 3),
    ("assault_of_the_giants", 4),
    ("assault_of_the_giants", 6),
    ("arcane_academy", 3),
    ("dwarves_duel", 2),
    ("arcane_academy", 4),
)  # the order of a run's search games (the rest after them)
ROLLOUT_MOVES = 30  # greedy moves per rollout before the standing is scored
ROLLOUT_MOVES_BY_COUNT = {("arcane_academy", 4): 90}
"""Games and counts whose rollouts run longer than ``ROLLOUT_MOVES`` before
the standing is scored (docs/bots.md, "The rollout horizon")."""
CHUNK = 10  # search games per task, so the processes share the work evenly


def iterations_for(name: str, players: int) -> int:
    return ITERATIONS_BY_COUNT.get((name, players), ITERATIONS)


def rollout_for(name: str, players: int) -> int:
    return ROLLOUT_MOVES_BY_COUNT.get((name, players), ROLLOUT_MOVES)


def search_counts(game: Any) -> list[int]:
    if game.name == "assault_of_the_giants":
        return [3, 4, 6]
    return [n for n in (2, 3, 4) if game.min_players <= n <= game.max_players]


def _search_task(args: tuple[str, int, int, int]) -> dict[str, Any]:
    name, n, start, stop = args
    game = default_registry().get(name)
    return search_games(game, n, range(start, stop), iterations_for(name, n), rollout_for(name, n))


def _natural_task(args: tuple[str, int, int]) -> dict[str, Any]:
    name, n, games = args
    return {"game": name, "players": n, **natural_ends(default_registry().get(name), n, games)}


def run(
    full: bool = False,
    jobs: int = 1,
    only: list[str] | None = None,
    skip: list[str] | None = None,
    games: int | None = None,
    greedy_games: int | None = None,
    on_progress: Any = None,
) -> dict[str, Any]:
    """Every figure of the section; ``jobs`` processes play the games.
    ``on_progress(out)`` is called with the figures so far after each game
    and count (a long run can be written out as it goes)."""
    from concurrent.futures import ProcessPoolExecutor

    size = dict(FULL if full else QUICK)
    if games is not None:
        size["games"] = games
    if greedy_games is not None:
        size["greedy_games"] = greedy_games
    reg = default_registry()
    natural = [
        (g.name, n, size["greedy_games"])
        for g in reg
        for n in range(g.min_players, g.max_players + 1)
        if (not only or g.name in only) and size["greedy_games"] > 0
    ]
    counts = [
        (g.name, n)
        for g in reg
        for n in search_counts(g)
        if (not only or g.name in only) and size["games"] > 0
    ]
    counts = [c for c in counts if f"{c[0]}:{c[1]}" not in (skip or ())]
    counts.sort(key=lambda c: FIRST.index(c) if c in FIRST else len(FIRST))
    search = [
        (name, n, start, min(start + CHUNK, size["games"]))
        for name, n in counts
        for start in range(0, size["games"], CHUNK)
    ]
    out: dict[str, Any] = {
        "budget": {
            "iterations": ITERATIONS,
            "iterations_by_count": {f"{g}:{n}": i for (g, n), i in ITERATIONS_BY_COUNT.items()},
            "rollout_moves": ROLLOUT_MOVES,
            "rollout_moves_by_count": {
                f"{g}:{n}": m for (g, n), m in ROLLOUT_MOVES_BY_COUNT.items()
            },
            **size,
        },
        "natural_ends": [],
        "search": [],
    }
    with ProcessPoolExecutor(max_workers=max(1, jobs)) as pool:
        for ne in pool.map(_natural_task, natural):
            out["natural_ends"].append(ne)
            print(
                f"  greedy {ne['game']} {ne['players']}p: natural {ne['natural_share']:.2f}",
                flush=True,
            )
        parts: dict[tuple[str, int], list[dict[str, Any]]] = {c: [] for c in counts}
        for task, raw in zip(search, pool.map(_search_task, search), strict=True):
            parts[task[:2]].append(raw)
            name, n = task[:2]
            if len(parts[(name, n)]) * CHUNK < size["games"]:
                out["partial"] = [
                    {
                        "game": g,
                        "players": m,
                        **summarise(m, ps, iterations_for(g, m), rollout_for(g, m)),
                    }
                    for (g, m), ps in parts.items()
                    if ps and len(ps) * CHUNK < size["games"]
                ]
                if on_progress is not None:
                    on_progress(out)
                continue
            out["partial"] = [
                p for p in out.get("partial", []) if (p["game"], p["players"]) != (name, n)
            ]
            r = {
                "game": name,
                "players": n,
                **summarise(n, parts[(name, n)], iterations_for(name, n), rollout_for(name, n)),
            }
            out["search"].append(r)
            if on_progress is not None:
                on_progress(out)
            strength = f"win {r['win_rate']:.2f}" if n == 2 else f"rank {r['mean_rank']:.2f}"
            print(
                f"  search {r['game']} {n}p: {strength}, p50 {r['decision_p50_ms']:.0f} ms, "
                f"p99 {r['decision_p99_ms']:.0f} ms, {r['iterations_per_s']:.0f} it/s "
                f"({r['games']} games)",
                flush=True,
            )
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.bots")
    parser.add_argument("--full", action="store_true", help="100 games per game and count")
    parser.add_argument("--jobs", type=int, default=2, help="processes playing the games")
    parser.add_argument("--game", action="append", help="only this game (repeatable)")
    parser.add_argument("--skip", action="append", help="not this game:players (repeatable)")
    parser.add_argument("--games", type=int, help="search games per game and count")
    parser.add_argument("--greedy-games", type=int, help="greedy games per game and count")
    parser.add_argument("--out", help="also write the figures to this JSON file")
    args = parser.parse_args(argv)

    def write(out: dict[str, Any]) -> None:
        if args.out:
            with open(args.out, "w") as f:
                f.write(json.dumps(out, indent=1) + "\n")

    started = time.monotonic()
    out = run(
        args.full,
        args.jobs,
        only=args.game,
        skip=args.skip,
        games=args.games,
        greedy_games=args.greedy_games,
        on_progress=write,
    )
    out["seconds"] = round(time.monotonic() - started, 1)
    write(out)
    print(json.dumps(out, indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
