"""``tabletop tournament ...``: create, register, start, show, watch, run.

The commands keep one guest identity between calls (in
``$TABLETOP_DATA_DIR/cli-identity.json``, default ``.data``), so the player
who created a tournament is the organiser who starts it. The service is at
``TABLETOP_TOURNAMENTS_ADDR`` (default ``127.0.0.1:50054``, as ``make run``).
"""

from __future__ import annotations

import argparse
import json
import os
import time
import uuid
from typing import Any

import grpc
from rich.progress import BarColumn, Progress, TextColumn
from rich.table import Table
from rich.text import Text

from engine_core.bots import LEVELS
from tabletop.tournaments.v1 import tournaments_pb2 as pb
from tabletop.tournaments.v1 import tournaments_pb2_grpc as pb_grpc

FORMATS = {
    "swiss": pb.FORMAT_SWISS,
    "swiss_tables": pb.FORMAT_SWISS_TABLES,
    "round_robin": pb.FORMAT_ROUND_ROBIN,
    "single_elimination": pb.FORMAT_SINGLE_ELIMINATION,
    "score_race": pb.FORMAT_SCORE_RACE,
}
TIME_CONTROLS = {
    "none": pb.TimeControl.KIND_NONE,
    "per_move": pb.TimeControl.KIND_PER_MOVE,
    "fischer": pb.TimeControl.KIND_FISCHER,
    "game_default": pb.TimeControl.KIND_GAME_DEFAULT,
}


def _addr() -> str:
    return os.environ.get("TABLETOP_TOURNAMENTS_ADDR") or "127.0.0.1:50054"


async def _token(session: Any) -> str:
    """The player this terminal is signed in as (``services.cli.identity``: the
    same saved guest as ``play`` and ``matches``, renewed near expiry)."""
    return await session.login("organiser")


class _Client:
    def __init__(self) -> None:
        from services.cli.connect import Session

        self.session = Session()
        self.channel = grpc.aio.insecure_channel(_addr())
        self.stub = pb_grpc.TournamentServiceStub(self.channel)

    async def __aenter__(self) -> _Client:
        await _token(self.session)
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.channel.close()
        await self.session.close()

    @property
    def md(self) -> tuple[tuple[str, str], ...]:
        return self.session.metadata


def _time_control(text: str) -> pb.TimeControl:
    """``none``, ``game_default``, ``per_move:30`` or ``fischer:300+5``
    (seconds, increment)."""
    kind, _, rest = text.partition(":")
    if kind not in TIME_CONTROLS:
        raise ValueError(f"time control is none, per_move:S or fischer:S+I, not {text!r}")
    seconds, _, inc = rest.partition("+")
    return pb.TimeControl(
        kind=TIME_CONTROLS[kind], seconds=float(seconds or 0), increment=float(inc or 0)
    )


def _create_request(args: argparse.Namespace) -> pb.CreateTournamentRequest:
    return pb.CreateTournamentRequest(
        name=args.name or "",
        game=args.game,
        format=FORMATS[args.format],
        rounds=args.rounds,
        options=pb.TournamentOptions(
            table_size=args.table_size,
            top_cut=args.top_cut,
            advance=args.advance,
            round_deadline_s=args.round_deadline,
            bot_fill=args.bot_fill,
            bot_level=args.bot_level or "",
            late_registration_rounds=args.late_rounds,
            race_seconds=args.race_seconds,
            race_queue=args.race_queue,
            race_max_matches=args.race_max_matches,
        ),
        game_options_json=args.options,
        time_control=_time_control(args.time_control),
        seed=args.seed,
        idempotency_key=uuid.uuid4().hex,
    )


def _standings(t: pb.Tournament, limit: int = 0) -> Table:
    table = Table(title=f"{t.name}: {pb.Status.Name(t.status).split('_', 1)[1].lower()}")
    for col in ("rank", "player", "points", "played", "wins", "tiebreaks"):
        table.add_column(col)
    rows = t.standings[:limit] if limit else t.standings
    for s in rows:
        tb = ", ".join(f"{k} {v:g}" for k, v in sorted(s.tiebreaks.items()))
        table.add_row(str(s.rank), s.player, f"{s.points:g}", str(s.played), str(s.wins), tb)
    return table


async def cmd_create(args: argparse.Namespace, console: Any) -> int:
    async with _Client() as c:
        reply = await c.stub.CreateTournament(_create_request(args), metadata=c.md, timeout=10)
        console.print(
            f"tournament [bold]{reply.tournament_id}[/] (organiser {c.session.player_id})"
        )
        return 0


async def cmd_register(args: argparse.Namespace, console: Any) -> int:
    async with _Client() as c:
        for player in args.player or [""]:
            t = await c.stub.Register(
                pb.RegisterRequest(tournament_id=args.tournament, player=player),
                metadata=c.md,
                timeout=10,
            )
        console.print(f"{len(t.entrants)} registered")
        return 0


async def cmd_start(args: argparse.Namespace, console: Any) -> int:
    async with _Client() as c:
        t = await c.stub.Start(pb.StartRequest(tournament_id=args.tournament), metadata=c.md)
        console.print(f"started: {len(t.entrants)} players, {t.total_rounds} rounds")
        return 0


async def cmd_show(args: argparse.Namespace, console: Any) -> int:
    async with _Client() as c:
        t = await c.stub.GetTournament(
            pb.GetTournamentRequest(tournament_id=args.tournament), metadata=c.md, timeout=10
        )
        console.print(
            f"{t.game}, {pb.Format.Name(t.format).split('_', 1)[1].lower()}, "
            f"round {t.round}/{t.total_rounds}, {len(t.entrants)} players"
        )
        for r in t.rounds[-1:] if not args.all_rounds else t.rounds:
            done = sum(tb.finished for tb in r.tables)
            console.print(f"round {r.round}: {done}/{len(r.tables)} tables finished")
            for tb in r.tables:
                state = "done" if tb.finished else "playing"
                console.print(f"  t{tb.table} {' v '.join(tb.players)} {state} {tb.match_ids[-1]}")
            if r.byes:
                console.print(f"  bye: {', '.join(r.byes)}")
        console.print(_standings(t, args.top))
        return 0


async def cmd_watch(args: argparse.Namespace, console: Any) -> int:
    async with _Client() as c:
        req = pb.WatchTournamentRequest(tournament_id=args.tournament, after_seq=args.after)
        async for e in c.stub.WatchTournament(req, metadata=c.md):
            console.print(f"[bold]{e.seq}[/] {e.type} [dim]{e.event_json}[/]", soft_wrap=True)
        return 0


async def cmd_run(args: argparse.Namespace, console: Any) -> int:
    """A whole tournament of bots: create, register, start, a progress bar
    per round, the final standings."""
    if not args.bots:
        console.print("[red]only bots can play a tournament from here: add --bots[/]")
        return 2
    async with _Client() as c:
        tid = (await c.stub.CreateTournament(_create_request(args), metadata=c.md)).tournament_id
        console.print(f"tournament [bold]{tid}[/]: {args.players} bots")
        tag = tid[-6:]
        for i in range(args.players):
            await c.stub.Register(
                pb.RegisterRequest(tournament_id=tid, player=f"bot:{tag}-{i + 1}"), metadata=c.md
            )
        started = time.perf_counter()
        await c.stub.Start(pb.StartRequest(tournament_id=tid), metadata=c.md)
        tasks: dict[int, Any] = {}
        with Progress(
            TextColumn("{task.description:<12}"),
            BarColumn(),
            TextColumn("{task.completed}/{task.total} tables"),
            console=console,
        ) as progress:
            async for e in c.stub.WatchTournament(
                pb.WatchTournamentRequest(tournament_id=tid), metadata=c.md
            ):
                data = json.loads(e.event_json)
                if e.type == "round_started":
                    tasks[data["round"]] = progress.add_task(
                        f"round {data['round']}", total=len(data["tables"])
                    )
                elif e.type == "rematch" and data["round"] in tasks:
                    progress.update(tasks[data["round"]], advance=-1)
                elif e.type in ("result", "adjudicated") and data["round"] in tasks:
                    progress.advance(tasks[data["round"]])
        t = await c.stub.GetTournament(pb.GetTournamentRequest(tournament_id=tid), metadata=c.md)
        console.print(_standings(t, args.top))
        console.print(f"{len(t.rounds)} rounds in {time.perf_counter() - started:.1f} s")
        return 0


def add_parser(sub: Any) -> None:
    """The ``tournament`` command group, on the CLI's subparsers."""
    p = sub.add_parser("tournament", help="tournaments: create, register, start, show, watch, run")
    ts = p.add_subparsers(dest="tournament_command", required=True)

    def creation(q: argparse.ArgumentParser) -> None:
        q.add_argument("--game", required=True)
        q.add_argument("--format", choices=sorted(FORMATS), default="swiss")
        q.add_argument("--rounds", type=int, default=0, help="Swiss: rounds (required)")
        q.add_argument("--table-size", type=int, default=2)
        q.add_argument("--top-cut", type=int, default=0, help="Swiss: then the top N knock out")
        q.add_argument(
            "--advance", type=int, default=0, help="elimination of tables: the best N go through"
        )
        q.add_argument(
            "--round-deadline", type=float, default=0.0, help="seconds per round, then adjudicate"
        )
        q.add_argument("--bot-fill", action="store_true", help="a bot evens an odd field")
        q.add_argument(
            "--bot-level",
            choices=LEVELS,
            help="the fill bot's level (default: the bot worker's)",
        )
        q.add_argument("--late-rounds", type=int, default=0, help="late registration up to round")
        q.add_argument("--race-seconds", type=float, default=0.0, help="score race window")
        q.add_argument(
            "--race-queue", action="store_true", help="score race: queue entrants via matchmaking"
        )
        q.add_argument("--race-max-matches", type=int, default=0, help="score race: per entrant")
        q.add_argument(
            "--time-control", default="none", help="none, game_default, per_move:S, fischer:S+I"
        )
        q.add_argument("--options", default="", help="the game's options as JSON")
        q.add_argument("--seed", default="", help="pairing seed (default: random)")
        q.add_argument("--name", default="")

    c = ts.add_parser("create", help="a new tournament, open for registration")
    creation(c)
    c.set_defaults(tournament_func=cmd_create)
    r = ts.add_parser("register", help="register yourself (or, as organiser, players or bots)")
    r.add_argument("tournament")
    r.add_argument("--player", action="append", help="a player id (repeatable)")
    r.set_defaults(tournament_func=cmd_register)
    s = ts.add_parser("start", help="close registration and start round 1")
    s.add_argument("tournament")
    s.set_defaults(tournament_func=cmd_start)
    sh = ts.add_parser("show", help="standings and the current round")
    sh.add_argument("tournament")
    sh.add_argument("--top", type=int, default=0, help="only the first N standings")
    sh.add_argument("--all-rounds", action="store_true")
    sh.set_defaults(tournament_func=cmd_show)
    w = ts.add_parser("watch", help="follow a tournament's events")
    w.add_argument("tournament")
    w.add_argument("--after", type=int, default=0, help="the last event seq you have")
    w.set_defaults(tournament_func=cmd_watch)
    run = ts.add_parser("run", help="a whole tournament of bots through the stack")
    creation(run)
    run.add_argument("--players", type=int, required=True)
    run.add_argument("--bots", action="store_true", help="the players are bots (required)")
    run.add_argument("--top", type=int, default=16, help="standings rows to print")
    run.set_defaults(tournament_func=cmd_run)

    async def dispatch(args: argparse.Namespace) -> int:
        from services.cli.main import console, rpc_reason

        try:
            return await args.tournament_func(args, console)
        except grpc.aio.AioRpcError as e:
            # as text, not markup: the reason is in [brackets]
            console.print(Text(rpc_reason(e), style="red"))
            return 1

    p.set_defaults(func=dispatch)
