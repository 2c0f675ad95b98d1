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
each. The search budget is the same in both: ``ITERATIONS`` per decision,
rollouts of ``ROLLOUT_MOVES`` greedy moves.
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


def search_vs_greedy(
    game: Any, players: int, games: int, iterations: int, rollout_moves: int
) -> dict[str, Any]:
    timed = _Timed(SearchBot(iterations=iterations, rollout_moves=rollout_moves))
    greedy = greedy_bots()[game.name]
    ranks = []
    score = 0.0
    for k in range(games):
        seat = k % players
        bots = {s: timed if s == seat else greedy for s in range(players)}
        result = playout(game, players, 10_000 + k, bots=bots)
        assert result.outcome is not None
        rank = result.outcome.ranks[seat]
        ranks.append(rank)
        if players == 2:
            score += (
                1.0
                if rank == 1 and result.outcome.ranks.count(1) == 1
                else (0.5 if rank == 1 else 0.0)
            )
    t = sorted(timed.times)
    out: dict[str, Any] = {
        "games": games,
        "budget": {"iterations": iterations, "rollout_moves": rollout_moves},
        "mean_rank": sum(ranks) / games,
        "greedy_mean_rank": (players + 1) / 2,
        "decisions": len(t),
        "decision_p50_ms": percentile(t, 50) * 1000,
        "decision_p99_ms": percentile(t, 99) * 1000,
        "iterations_per_s": timed.iterations / sum(t) if t else 0.0,
    }
    if players == 2:
        out["win_rate"] = score / games
    return out


QUICK = {"games": 10, "greedy_games": 50}
FULL = {"games": 100, "greedy_games": 100}
ITERATIONS = 16  # per decision: the stated budget
ROLLOUT_MOVES = 30  # greedy moves per rollout before the standing is scored


def search_counts(game: Any) -> list[int]:
    if game.name == "assault_of_the_giants":
        return [3, 4, 6]
    return [n for n in (2, 3, 4) if game.min_players <= n <= game.max_players]


def _search_task(args: tuple[str, int, int]) -> dict[str, Any]:
    name, n, games = args
    game = default_registry().get(name)
    r = search_vs_greedy(game, n, games, ITERATIONS, ROLLOUT_MOVES)
    return {"game": name, "players": n, **r}


def _natural_task(args: tuple[str, int, int]) -> dict[str, Any]:
    name, n, games = args
    return {"game": name, "players": n, **natural_ends(default_registry().get(name), n, games)}


def run(
    full: bool = False,
    jobs: int = 1,
    only: str | None = None,
    games: int | None = None,
    greedy_games: int | None = None,
) -> dict[str, Any]:
    """Every figure of the section; ``jobs`` processes play the games."""
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
        if (only is None or g.name == only) and size["greedy_games"] > 0
    ]
    search = [
        (g.name, n, size["games"])
        for g in reg
        for n in search_counts(g)
        if (only is None or g.name == only) and size["games"] > 0
    ]
    out: dict[str, Any] = {
        "budget": {"iterations": ITERATIONS, "rollout_moves": ROLLOUT_MOVES, **size},
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
        for r in pool.map(_search_task, search):
            out["search"].append(r)
            n = r["players"]
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
    parser.add_argument("--game", help="one game only")
    parser.add_argument("--games", type=int, help="search games per game and count")
    parser.add_argument("--greedy-games", type=int, help="greedy games per game and count")
    parser.add_argument("--out", help="also write the figures to this JSON file")
    args = parser.parse_args(argv)
    out = run(args.full, args.jobs, args.game, args.games, args.greedy_games)
    text = json.dumps(out, indent=1)
    if args.out:
        with open(args.out, "w") as f:
            f.write(text + "\n")
    print(text)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
