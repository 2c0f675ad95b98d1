"""``ApplyMove`` latency of the rules service: sequential calls, one worker.

A real ``python -m services.rules --workers 1`` process on a free port; the
client is a plain synchronous stub on one channel (as the gRPC echo baseline
in ``bench.grpc_echo``), so ``p50 / echo p50`` is the cost of the rules call
over the transport alone. The moves are random playouts decided in-process
first (``engine_core.testing.playout``); only the ``ApplyMove`` calls that
replay them are timed, each carrying the state the previous call returned.
``engine_p50_ms`` is the same moves applied in-process (``decide`` + ``evolve``),
so the rest of ``p50_ms`` is codecs, redaction and transport.

    python -m bench.rules_latency [--samples N] [--game ID ...] [--aio] [--no-echo] [--out F]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
import time
from typing import Any

import grpc

from bench.match_e2e import _start_rules
from bench.stats import summary_ms
from engine_core.decider import apply
from engine_core.registry import default_registry
from engine_core.testing import move_entropy, playout, setup_entropy
from services.common.codecs import decode_state, to_json
from services.rules.client import RulesClient
from tabletop.rules.v1 import rules_pb2, rules_pb2_grpc

DEFAULT_GAMES = ("tic_tac_toe", "dice_forge")


def measure(stub: Any, game_id: str, samples: int, warmup: int = 100) -> dict[str, Any]:
    """Replay seeded random playouts through ``ApplyMove`` until ``samples`` timed calls."""
    game = default_registry().get(game_id)
    players = game.min_players
    timed: list[int] = []
    engine: list[int] = []
    state_sizes: list[int] = []
    seed = 0
    while len(timed) < samples:
        seed += 1
        played = playout(game, players, seed)
        new = stub.NewGame(
            rules_pb2.NewGameRequest(game=game_id, players=players, entropy=setup_entropy(seed)),
            timeout=10,
        )
        state = new.state
        before = decode_state(game, state)
        for step in played.steps:
            request = rules_pb2.ApplyMoveRequest(
                game=game_id,
                state=state,
                seat=step.seat,
                move=to_json(step.move).decode(),
                entropy=move_entropy(seed, step.index),
            )
            t = time.perf_counter_ns()
            reply = stub.ApplyMove(request, timeout=10)
            elapsed = time.perf_counter_ns() - t
            state = reply.state
            # the same move in-process: the engine's share of the call
            t = time.perf_counter_ns()
            after, _ = apply(game, before, step.seat, step.move, request.entropy)
            engine_ns = time.perf_counter_ns() - t
            before = after
            if warmup > 0:
                warmup -= 1
                continue
            timed.append(elapsed)
            engine.append(engine_ns)
            state_sizes.append(len(state))
            if len(timed) >= samples:
                break
    return {
        "game": game_id,
        "players": players,
        "playouts": seed,
        "mean_state_bytes": round(sum(state_sizes) / len(state_sizes)),
        **summary_ms(timed),
        "engine_p50_ms": summary_ms(engine)["p50_ms"],
    }


async def measure_client(address: str, game_id: str, samples: int) -> dict[str, Any]:
    """The same replay through the async ``RulesClient`` (what the match service uses)."""
    game = default_registry().get(game_id)
    players = game.min_players
    timed: list[int] = []
    seed = 0
    async with RulesClient(address, timeout=10) as rules:
        while len(timed) < samples + 100:
            seed += 1
            played = playout(game, players, seed)
            state = (await rules.new_game(game_id, players, entropy=setup_entropy(seed))).state
            for step in played.steps:
                t = time.perf_counter_ns()
                reply = await rules.apply_move(
                    game_id, state, step.seat, step.move, entropy=move_entropy(seed, step.index)
                )
                timed.append(time.perf_counter_ns() - t)
                state = reply.state
                if len(timed) >= samples + 100:
                    break
    return {"game": game_id, "players": players, "client": "aio", **summary_ms(timed[100:])}


def run(
    samples: int = 2000, games: tuple[str, ...] | None = None, *, aio: bool = False
) -> list[dict[str, Any]]:
    """Sync-stub figures per game; with ``aio`` also the async ``RulesClient``'s."""
    registry = default_registry()
    wanted = [g for g in (games or DEFAULT_GAMES) if g in registry]
    results = []
    # logging at WARNING (the figure is serving, not logging): the start is
    # seen on the port, not in the start-up line
    proc, address = _start_rules(1)
    try:
        with grpc.insecure_channel(address) as channel:
            stub = rules_pb2_grpc.RulesServiceStub(channel)
            for game_id in wanted:
                results.append({"client": "sync", **measure(stub, game_id, samples)})
            if aio:
                for game_id in wanted:
                    results.append(asyncio.run(measure_client(address, game_id, samples)))
    finally:
        proc.terminate()
        proc.wait(15)
    return results


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.rules_latency", description=__doc__)
    parser.add_argument("--samples", type=int, default=2000)
    parser.add_argument(
        "--game", action="append", help="game id (default: tic_tac_toe, dice_forge)"
    )
    parser.add_argument("--no-echo", action="store_true", help="skip the gRPC echo baseline")
    parser.add_argument("--out", help="also write the figures as JSON to this file")
    parser.add_argument("--aio", action="store_true", help="also time the async RulesClient")
    args = parser.parse_args(argv)
    results = run(args.samples, tuple(args.game) if args.game else None, aio=args.aio)
    out: dict[str, Any] = {"apply_move": results}
    if not args.no_echo:
        from bench import grpc_echo

        echo = grpc_echo.run(calls=args.samples)
        out["grpc_echo"] = echo
        for r in results:
            r["p50_over_echo_p50"] = r["p50_ms"] / echo["p50_ms"]
    for r in results:
        extra = (
            f", engine alone p50 {r['engine_p50_ms']:.3f} ms, state ~{r['mean_state_bytes']} B"
            if "engine_p50_ms" in r
            else ""
        )
        print(
            f"ApplyMove {r['game']} ({r['players']}p, {r['client']} client): n={r['n']} "
            f"p50 {r['p50_ms']:.3f} ms, p99 {r['p99_ms']:.3f} ms, mean {r['mean_ms']:.3f} ms{extra}"
        )
    if "grpc_echo" in out:
        e = out["grpc_echo"]
        print(f"gRPC echo 4 KB baseline: p50 {e['p50_ms']:.3f} ms, p99 {e['p99_ms']:.3f} ms")
    if args.out:
        with open(args.out, "w") as f:
            json.dump(out, f, indent=2)
            f.write("\n")
    else:
        print(json.dumps(out))
    return 0


if __name__ == "__main__":
    sys.exit(main())
