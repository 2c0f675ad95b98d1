"""A Swiss of bots through the whole stack, as ``make run`` runs it.

The supervisor of ``make run`` (``services.cli.stack``) starts nats-server,
valkey, the rules service, the match service, matchmaking, the bot worker and
the tournament service, each its own process, on free ports. This drives the
tournament service over gRPC: create a Swiss of Dwarves Duel (by default 256
bots, 8 rounds), register the bots, start, and follow the events.

Per round, from the events' own times: the pairing (``RoundPaired``), the
creation of its matches (``RoundStarted``; matches created per second), the
results (completion: tables finished per second from the round's start to
its last result) and the whole round. Over the run: the CPU seconds of every
process (``/proc``), the moves played (from the match stream), and so the CPU
per move of each service, per created match and per round (docs/scaling.md
does the arithmetic with these).

``python -m bench.tournament [--players N] [--rounds R] [--game G]`` prints the
figures as JSON; ``run()`` returns them to ``python -m bench``.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import tempfile
import time
from pathlib import Path
from typing import Any

import grpc
import nats

from services.cli.stack import Stack, StackSettings
from services.common.auth import AuthSettings, Tokens, bearer_metadata
from tabletop.tournaments.v1 import tournaments_pb2 as pb
from tabletop.tournaments.v1 import tournaments_pb2_grpc as pb_grpc

_TICK = 100  # /proc clock ticks per second (Linux)


def _cpu_s(pid: int | None) -> float:
    if pid is None:
        return 0.0
    try:
        with open(f"/proc/{pid}/stat") as f:
            fields = f.read().rsplit(")", 1)[1].split()
    except OSError:
        return 0.0
    return (int(fields[11]) + int(fields[12])) / _TICK


def _pids(stack: Stack) -> dict[str, int | None]:
    pids: dict[str, int | None] = {c.name: c.proc.pid if c.proc else None for c in stack.children}
    pids["nats"] = stack.nats.pid if stack.nats else None
    pids["valkey"] = stack.valkey.pid if stack.valkey else None
    return pids


async def _moves(nats_url: str) -> tuple[int, int]:
    """The messages (commits) of the MATCHES stream."""
    nc = await nats.connect(nats_url)
    try:
        info = await nc.jetstream().stream_info("MATCHES")
        return info.state.messages, 0
    finally:
        await nc.close()


async def _drive(stack: Stack, game: str, players: int, rounds: int, echo: Any) -> dict[str, Any]:
    tokens = Tokens(AuthSettings(secret=stack._secret()))
    md = bearer_metadata(tokens.issue("service:bench", role="service"))
    channel = grpc.aio.insecure_channel(stack.endpoints()["tournaments"])
    stub = pb_grpc.TournamentServiceStub(channel)
    try:
        tid = (
            await stub.CreateTournament(
                pb.CreateTournamentRequest(
                    name=f"bench {players}", game=game, format=pb.FORMAT_SWISS, rounds=rounds,
                    seed="bench",
                ),
                metadata=md,
            )
        ).tournament_id  # fmt: skip
        for i in range(players):
            await stub.Register(
                pb.RegisterRequest(tournament_id=tid, player=f"bot:b{i:04d}"), metadata=md
            )
        pids = _pids(stack)
        cpu0 = {k: _cpu_s(p) for k, p in pids.items()}
        commits0, _ = await _moves(stack.nats_url)
        started = time.time()
        await stub.Start(pb.StartRequest(tournament_id=tid), metadata=md)
        per_round: dict[int, dict[str, Any]] = {}
        finished_ms = 0
        async for e in stub.WatchTournament(
            pb.WatchTournamentRequest(tournament_id=tid), metadata=md
        ):
            d = json.loads(e.event_json)
            if e.type == "round_paired":
                per_round[d["round"]] = {"paired_ms": d["at_ms"], "tables": len(d["tables"])}
            elif e.type == "round_started":
                per_round[d["round"]]["started_ms"] = d["at_ms"]
            elif e.type == "result":
                r = per_round[d["round"]]
                r["results"] = r.get("results", 0) + 1
                r["last_result_ms"] = d["at_ms"]
            elif e.type == "round_completed":
                r = per_round[d["round"]]
                r["completed_ms"] = d["at_ms"]
                echo(
                    f"  round {d['round']}: {r['tables']} tables in "
                    f"{(r['completed_ms'] - r['paired_ms']) / 1000:.1f} s"
                )
            elif e.type == "finished":
                finished_ms = d["at_ms"]
        elapsed = time.time() - started
        cpu = {k: _cpu_s(p) - cpu0[k] for k, p in pids.items()}
        commits1, _ = await _moves(stack.nats_url)
        t = await stub.GetTournament(pb.GetTournamentRequest(tournament_id=tid), metadata=md)
    finally:
        await channel.close()
    matches = sum(r["tables"] for r in per_round.values())
    moves = commits1 - commits0 - matches  # every commit but the creations is a move
    rows = []
    for n, r in sorted(per_round.items()):
        create_s = (r["started_ms"] - r["paired_ms"]) / 1000
        play_s = (r["last_result_ms"] - r["started_ms"]) / 1000
        rows.append(
            {
                "round": n,
                "tables": r["tables"],
                "create_s": round(create_s, 3),
                "matches_created_per_s": round(r["tables"] / max(create_s, 1e-3), 1),
                "play_s": round(play_s, 2),
                "matches_completed_per_s": round(r["tables"] / max(play_s, 1e-3), 2),
                "round_s": round((r["completed_ms"] - r["paired_ms"]) / 1000, 2),
            }
        )
    standings = list(t.standings)
    total_points = sum(s.points for s in standings)
    return {
        "game": game,
        "players": players,
        "rounds": rounds,
        "finished": t.status == pb.STATUS_FINISHED and finished_ms > 0,
        "standings_points_total": total_points,
        "standings_points_expected": matches + sum(len(r.byes) for r in t.rounds),
        "winner": standings[0].player if standings else "",
        "seconds": round(elapsed, 1),
        "matches": matches,
        "moves": moves,
        "moves_per_s": round(moves / elapsed, 1),
        "per_round": rows,
        "cpu_s": {k: round(v, 2) for k, v in cpu.items()},
        "cpu_ms_per_move": {k: round(v * 1000 / max(1, moves), 3) for k, v in cpu.items()},
        "tournament_cpu_ms_per_match": round(cpu.get("tournaments", 0) * 1000 / max(1, matches), 2),
        "tournament_cpu_s_per_round": round(cpu.get("tournaments", 0) / max(1, rounds), 3),
    }


def run(players: int = 256, rounds: int = 8, game: str = "dwarves_duel", echo: Any = print):
    with tempfile.TemporaryDirectory(prefix="tabletop-bench-tournament-") as tmp:
        settings = StackSettings.ephemeral(
            Path(tmp),
            extra_env={
                "TABLETOP_LOG_LEVEL": "WARNING",
                "TABLETOP_BOTS_MAX_MATCHES": str(max(256, players)),
                "TABLETOP_BOTS_KIND": "random",
            },
        )
        stack = Stack(settings, echo=lambda *_a, **_k: None)
        stack.start()
        try:
            return asyncio.run(_drive(stack, game, players, rounds, echo))
        finally:
            stack.stop()


def main() -> None:
    p = argparse.ArgumentParser(prog="python -m bench.tournament")
    p.add_argument("--players", type=int, default=256)
    p.add_argument("--rounds", type=int, default=8)
    p.add_argument("--game", default="dwarves_duel")
    a = p.parse_args()
    print(json.dumps(run(a.players, a.rounds, a.game), indent=2))


if __name__ == "__main__":
    main()
