"""Engine figures per game and player count, in one process, no I/O:

* full random playouts per second;
* mean cost of ``decide`` + ``evolve`` per move (timed around those calls only,
  not around the bot's choice of move);
* the largest encoded (msgpack) state seen in the playouts.
"""

from __future__ import annotations

import time
from typing import Any

import msgspec

from engine_core.bots import RandomBot
from engine_core.decider import fold, start
from engine_core.registry import default_registry
from engine_core.rng import Rng, derive
from engine_core.testing import move_entropy, seed_bytes, setup_entropy

_mp = msgspec.msgpack.Encoder()


def measure(game: Any, players: int, seconds: float) -> dict[str, Any]:
    bot = RandomBot()
    playouts = moves = 0
    engine_ns = 0
    largest = 0
    t0 = time.perf_counter()
    seed = 0
    while time.perf_counter() - t0 < seconds or playouts < 3:
        rng = Rng(derive(seed_bytes(seed), "bots"))
        state, _ = start(game, players, None, setup_entropy(seed))
        k = 0
        while game.outcome(state) is None:
            waiting = game.awaiting(state)
            seat = waiting[0] if len(waiting) == 1 else rng.choice(waiting)
            move = bot.choose(game, state, seat, rng)
            entropy = move_entropy(seed, k)
            s = time.perf_counter_ns()
            events = game.decide(state, seat, move, entropy)
            state = fold(game, events, state)
            engine_ns += time.perf_counter_ns() - s
            k += 1
            if k % 16 == 0:
                largest = max(largest, len(_mp.encode(state)))
        largest = max(largest, len(_mp.encode(state)))
        moves += k
        playouts += 1
        seed += 1
    wall = time.perf_counter() - t0
    return {
        "game": game.name,
        "players": players,
        "playouts": playouts,
        "playouts_per_s": playouts / wall,
        "moves_per_playout": moves / playouts,
        "move_cost_us": engine_ns / moves / 1000,
        "largest_state_bytes": largest,
    }


def run(seconds: float = 2.0) -> list[dict[str, Any]]:
    out = []
    for game in default_registry():
        for n in range(game.min_players, game.max_players + 1):
            out.append(measure(game, n, seconds))
    return out


if __name__ == "__main__":
    for row in run(1.0):
        print(row)
