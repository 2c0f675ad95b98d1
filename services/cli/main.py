"""``tabletop``: run the stack and play through it from a terminal.

tabletop up                          the whole stack on this machine (make run)
tabletop games                       the games, player counts and options
tabletop play GAME [--bots K]        play against bots (--auto: a bot plays you too;
                                     --clock 30s / 5m+3s: a turn clock)
tabletop queue GAME                  wait in matchmaking, with a live status line
tabletop watch MATCH                 follow a match as a spectator
tabletop replay MATCH [--speed X]    re-stream a match from its events
tabletop matches [--player P]        matches of a player
tabletop demo                        bots play every game through the stack
tabletop local [GAME]                bots play in this process, no stack needed
tabletop tournament create|register|start|show|watch|run   tournaments
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import sys
import time
import uuid
from typing import Any

import grpc
from rich.console import Console
from rich.progress import BarColumn, Progress, TextColumn
from rich.table import Table

from engine_core.bots import LEVELS, bot_for, choose_from_view
from engine_core.notation import move_text
from engine_core.registry import UnknownGame, default_registry
from engine_core.rng import Rng
from engine_core.testing import playout
from services.cli.clock import check_clock_spec, print_clocks, wait_counting_down
from services.cli.connect import NotRunning, Session
from services.common.errors import error_info
from tabletop.match.v1 import match_pb2
from tabletop.matchmaking.v1 import matchmaking_pb2
from tabletop.rules.v1 import rules_pb2

console = Console(highlight=False)
FINISHED = match_pb2.MATCH_STATUS_FINISHED


class CliError(Exception):
    """A problem the user can fix; printed without a traceback."""


def rpc_reason(e: grpc.aio.AioRpcError) -> str:
    """The status, the machine-readable reason and the message of a rejection."""
    info = error_info(e)
    reason = f" [{info.reason}]" if info is not None else ""
    return f"{e.code().name}{reason}: {e.details()}"


# ---------------------------------------------------------------- rendering
def _compact(value: Any) -> str:
    return json.dumps(value, separators=(",", ":"), ensure_ascii=False)


def view_lines(value: Any, indent: int = 0, width: int = 96) -> list[str]:
    """A view as short lines: scalars and short lists inline, records and
    lists of records one per line, nested records indented."""
    pad = "  " * indent
    out: list[str] = []
    if isinstance(value, dict):
        for key, v in value.items():
            text = _compact(v)
            if len(pad) + len(key) + len(text) + 2 <= width or not isinstance(v, dict | list):
                out.append(f"{pad}{key}: {text}")
            elif isinstance(v, list):
                out.append(f"{pad}{key}:")
                for i, item in enumerate(v):
                    item_text = _compact(item)
                    if len(pad) + len(item_text) + 8 <= width or not isinstance(item, dict):
                        out.append(f"{pad}  [{i}] {item_text}")
                    else:
                        out.append(f"{pad}  [{i}]")
                        out.extend(view_lines(item, indent + 2, width))
            else:
                out.append(f"{pad}{key}:")
                out.extend(view_lines(v, indent + 1, width))
    else:
        out.append(pad + _compact(value))
    return out


def _tic_tac_toe(view: dict[str, Any]) -> list[str]:
    marks = {-1: ".", 0: "X", 1: "O"}
    b = [marks.get(c, "?") for c in view.get("board", [])]
    rows = [
        " ".join(b[r * 3 : r * 3 + 3]) + f"    {r * 3} {r * 3 + 1} {r * 3 + 2}" for r in range(3)
    ]
    if view.get("outcome") is None:
        rows.append(f"to move: seat {view.get('to_move')}")
    return rows


RENDERERS = {"tic_tac_toe": _tic_tac_toe}


def render_view(game: Any, view_json: str, seat: int | None) -> None:
    try:
        view = json.loads(view_json) if view_json else {}
    except json.JSONDecodeError:
        view = view_json
    who = "spectator" if seat is None else f"seat {seat}"
    console.rule(f"[bold]{game.title}[/] as {who}")
    render = RENDERERS.get(game.name, view_lines)
    for line in render(view) if isinstance(view, dict) else [str(view)]:
        console.print(line, markup=False)


def decode_moves(game: Any, moves_json: list[str]) -> list[Any]:
    codec = game.codec()
    return [codec.decode_move(m) for m in moves_json]


# ----------------------------------------------------------------- commands
async def cmd_games(args: argparse.Namespace) -> int:
    s = Session()
    try:
        try:
            reply = await s.rules.ListGames(rules_pb2.ListGamesRequest(), timeout=5)
        except grpc.aio.AioRpcError as e:
            if e.code() != grpc.StatusCode.UNAVAILABLE:
                raise
            console.print(
                f"[yellow]rules service not reachable at {s.addr.rules}; "
                "listing the games built into this CLI[/]"
            )
            reply = None
        table = Table(title="Tabletop games")
        for col in ("id", "title", "players", "rules", "options"):
            table.add_column(col)
        if reply is not None:
            for g in reply.games:
                opts = json.loads(g.schemas.options or "{}")
                table.add_row(
                    g.info.id,
                    g.info.title,
                    f"{g.info.min_players}-{g.info.max_players}",
                    g.info.rules_version,
                    ", ".join(_option_names(opts)) or "-",
                )
        else:
            for game in default_registry():
                import msgspec

                opts = msgspec.json.schema(game.Options)
                table.add_row(
                    game.name,
                    game.title,
                    f"{game.min_players}-{game.max_players}",
                    game.rules_version,
                    ", ".join(_option_names(opts)) or "-",
                )
        console.print(table)
        return 0
    finally:
        await s.close()


def _option_names(schema: dict[str, Any]) -> list[str]:
    defs = schema.get("$defs", {})
    ref = schema.get("$ref", "")
    body = defs.get(ref.rsplit("/", 1)[-1], schema) if ref else schema
    return sorted(body.get("properties", {}))


async def find_match(
    s: Session,
    game: str,
    players: int,
    options: str,
    bots: bool,
    *,
    status_line: bool = True,
    time_control: str = "",
) -> tuple[str, int]:
    """Queue for a match and wait until matchmaking seats us."""
    try:
        ticket = await s.matchmaking.Enqueue(
            matchmaking_pb2.EnqueueRequest(
                game=game,
                player_counts=[players],
                options_json=options,
                allow_bots=bots,
                time_control=time_control,
            ),
            metadata=s.metadata,
            timeout=5,
        )
    except grpc.aio.AioRpcError as e:
        if e.code() == grpc.StatusCode.UNAVAILABLE:
            raise NotRunning(
                f"matchmaking not reachable at {s.addr.matchmaking}: "
                "is the stack running? (`make run`)"
            ) from None
        raise CliError(f"matchmaking refused the ticket: {rpc_reason(e)}") from None
    stream = s.matchmaking.WatchTicket(
        matchmaking_pb2.WatchTicketRequest(ticket_id=ticket.ticket_id), metadata=s.metadata
    )
    with console.status(f"searching for a {players}-player {game} match ...") as status:
        async for update in stream:
            kind = update.WhichOneof("detail")
            if kind == "matched":
                m = update.matched
                return m.match_id, m.seat
            if kind == "searching" and status_line:
                q = update.searching
                status.update(
                    f"searching for a {players}-player {game} match: "
                    f"{q.waited_seconds:.0f} s waited, rating window ±{q.rating_window:.1f}"
                )
            if update.reason:
                raise CliError(f"ticket ended without a match: {update.reason}")
    raise CliError("the ticket stream ended without a match")


async def next_commit(s: Session, match_id: str, after: int) -> None:
    """Wait for the first commit after version ``after``."""
    call = s.match.WatchMatch(
        match_pb2.WatchMatchRequest(match_id=match_id, after_version=after), metadata=s.metadata
    )
    async for _ in call:
        call.cancel()
        return


async def play_match(
    s: Session,
    game: Any,
    match_id: str,
    seat: int,
    *,
    auto: bool,
    quiet: bool = False,
    on_move=None,
    level: str = "greedy",
) -> match_pb2.GetMatchResponse:
    """Play our seat until the match is over; returns the final match."""
    rng = Rng(os.urandom(16))
    bot = bot_for(level, game, time_s=1.0, clock=time.monotonic)
    shown = -1
    while True:
        m = await s.match.GetMatch(
            match_pb2.GetMatchRequest(match_id=match_id), metadata=s.metadata, timeout=10
        )
        if not quiet and m.version != shown:
            render_view(game, m.view_json, seat)
            shown = m.version
        if m.status == FINISHED:
            return m
        if seat not in m.awaiting:
            if quiet:
                await next_commit(s, match_id, m.version)
            else:
                await wait_counting_down(console, m, seat, next_commit(s, match_id, m.version))
            continue
        moves = decode_moves(game, list(m.legal_moves_json))
        if not moves:
            await next_commit(s, match_id, m.version)
            continue
        if auto:  # the bot decides on our view alone
            view = game.codec().view_json.decode(m.view_json)
            move = choose_from_view(bot, game, view, seat, rng)
        else:
            print_clocks(console, m, seat)
            move = ask_move(moves)
        try:
            reply = await s.match.SubmitMove(
                match_pb2.SubmitMoveRequest(
                    match_id=match_id,
                    move_json=game.codec().json_encoder.encode(move).decode(),
                    expected_version=m.version,
                    idempotency_key=uuid.uuid4().hex,
                    seat=seat,
                ),
                metadata=s.metadata,
                timeout=10,
            )
        except grpc.aio.AioRpcError as e:
            if e.code() in (grpc.StatusCode.ABORTED, grpc.StatusCode.FAILED_PRECONDITION):
                if not quiet:
                    console.print(f"[yellow]move refused: {rpc_reason(e)}[/]")
                continue  # the match moved on; look again
            raise
        if on_move is not None:
            on_move()
        if not quiet:
            console.print(f"[green]played[/] {move_text(move)} -> version {reply.version}")
            for ev in reply.events_json:
                console.print(f"  [dim]{ev}[/]")


def ask_move(moves: list[Any]) -> Any:
    for i, mv in enumerate(moves, 1):
        console.print(f"  [bold]{i:3d}[/]. {move_text(mv)}")
    while True:
        raw = console.input(f"your move [1-{len(moves)}]: ").strip()
        if raw.isdigit() and 1 <= int(raw) <= len(moves):
            return moves[int(raw) - 1]
        console.print(f"[red]type a number from 1 to {len(moves)}[/]")


def print_outcome(m: match_pb2.GetMatchResponse, seat: int | None) -> None:
    o = m.outcome
    console.rule("[bold]game over")
    for s in m.seats:
        mark = " (you)" if seat is not None and s.seat == seat else ""
        console.print(
            f"  seat {s.seat} {s.player}{mark}: rank {o.ranks[s.seat]}, score {o.scores[s.seat]:g}"
        )
    console.print(f"  ended by: {o.reason}; match {m.match_id}")


def resolve_game(name: str) -> Any:
    try:
        return default_registry().get(name)
    except UnknownGame as e:
        raise CliError(str(e)) from None


def clock_spec(args: argparse.Namespace) -> str:
    try:
        return check_clock_spec(args.clock)
    except ValueError as e:
        raise CliError(f"--clock: {e}") from None


async def cmd_play(args: argparse.Namespace) -> int:
    game = resolve_game(args.game)
    players = args.players or (args.bots + 1 if args.bots else game.min_players)
    if not game.min_players <= players <= game.max_players:
        raise CliError(f"{game.name} plays with {game.min_players}-{game.max_players} players")
    s = Session()
    try:
        me = await s.login(args.name)
        console.print(f"signed in as [bold]{me}[/]")
        clock = clock_spec(args)
        match_id, seat = await find_match(
            s, game.name, players, args.options, True, time_control=clock
        )
        console.print(f"match [bold]{match_id}[/], you are seat {seat}")
        final = await play_match(
            s, game, match_id, seat, auto=args.auto, quiet=args.quiet, level=args.level
        )
        print_outcome(final, seat)
        return 0
    finally:
        await s.close()


async def cmd_queue(args: argparse.Namespace) -> int:
    game = resolve_game(args.game)
    s = Session()
    try:
        await s.login(args.name)
        players = args.players or game.min_players
        match_id, seat = await find_match(s, game.name, players, args.options, args.bots)
        console.print(f"matched: match [bold]{match_id}[/], seat {seat}")
        console.print(f"follow it with: tabletop watch {match_id}")
        return 0
    finally:
        await s.close()


async def stream_commits(call: Any, game_name: str | None) -> None:
    async for c in call:
        who = f"seat {c.seat}" if c.HasField("seat") else "setup"
        console.print(f"[bold]v{c.version}[/] {who} {c.committed_at}")
        if c.move_json:
            console.print(f"  move {c.move_json}")
        for ev in c.events_json:
            console.print(f"  [dim]{ev}[/]")
        if c.status == FINISHED:
            o = c.outcome
            console.print(
                f"[bold]finished[/]: ranks {list(o.ranks)}, scores {list(o.scores)}, {o.reason}"
            )


async def cmd_watch(args: argparse.Namespace) -> int:
    s = Session()
    try:
        await s.login()
        req = match_pb2.WatchMatchRequest(match_id=args.match)
        if args.after is not None:
            req.after_version = args.after
        await stream_commits(s.match.WatchMatch(req, metadata=s.metadata), None)
        return 0
    finally:
        await s.close()


async def cmd_replay(args: argparse.Namespace) -> int:
    s = Session()
    try:
        await s.login()
        req = match_pb2.ReplayMatchRequest(
            match_id=args.match, from_version=args.start, speed=args.speed
        )
        await stream_commits(s.match.ReplayMatch(req, metadata=s.metadata), None)
        return 0
    finally:
        await s.close()


async def cmd_matches(args: argparse.Namespace) -> int:
    s = Session()
    try:
        me = await s.login()
        reply = await s.match.ListMatches(
            match_pb2.ListMatchesRequest(player=args.player or me), metadata=s.metadata, timeout=5
        )
        table = Table(title=f"matches of {args.player or me}")
        for col in ("match", "game", "status", "players", "created"):
            table.add_column(col)
        for m in reply.matches:
            table.add_row(
                m.match_id,
                m.game,
                match_pb2.MatchStatus.Name(m.status).split("_")[-1],
                ", ".join(m.players),
                m.created_at,
            )
        console.print(table)
        return 0
    finally:
        await s.close()


async def cmd_demo(args: argparse.Namespace) -> int:
    """Bots play each game to the end through the stack, with progress bars."""
    names = [args.game] if args.game else default_registry().names()
    s = Session()
    try:
        await s.login("demo")
        with Progress(
            TextColumn("{task.description:<28}"),
            BarColumn(),
            TextColumn("{task.completed} moves"),
            console=console,
        ) as progress:
            for name in names:
                game = resolve_game(name)
                players = game.min_players
                task = progress.add_task(f"{name} ({players}p)", total=None)
                match_id, seat = await find_match(s, name, players, "", True, status_line=False)
                final = await play_match(
                    s,
                    game,
                    match_id,
                    seat,
                    auto=True,
                    quiet=True,
                    on_move=lambda t=task: progress.advance(t),
                )
                o = final.outcome
                progress.update(
                    task,
                    total=progress.tasks[task].completed,
                    description=f"{name} ({players}p) {o.reason}",
                )
        return 0
    finally:
        await s.close()


def cmd_local(args: argparse.Namespace) -> int:
    """Bots play in this process (no stack): the engine alone."""
    registry = default_registry()
    names = [args.game] if args.game else registry.names()
    for name in names:
        game = resolve_game(name)
        players = args.players or game.min_players
        bot = bot_for(args.bot, game)
        console.print(
            f"== {game.title} ({name}), {players} players, seed {args.seed}, {bot.name} bots"
        )
        result = playout(
            game,
            players,
            args.seed,
            bots=bot,
            on_step=lambda _b, step, _a: console.print(
                f"  {step.index + 1:4d}. seat {step.seat}: {move_text(step.move)}"
            ),
        )
        o = result.outcome
        assert o is not None
        console.print(f"  result: {o.reason}; ranks {list(o.ranks)}; scores {list(o.scores)}")
    return 0


def cmd_up(args: argparse.Namespace) -> int:
    from services.cli.stack import Stack, StackSettings

    return Stack(StackSettings.from_env()).run()


# --------------------------------------------------------------------- main
def parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="tabletop", description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    sub = p.add_subparsers(dest="command", required=True)
    sub.add_parser("up", help="run the whole stack (make run)").set_defaults(func=cmd_up)
    sub.add_parser("games", help="list the games").set_defaults(func=cmd_games)

    play = sub.add_parser("play", help="play a game against bots")
    play.add_argument("game")
    play.add_argument("--players", type=int, help="seats in the match (default: bots + 1)")
    play.add_argument("--bots", type=int, default=0, help="bot seats (default: the rest)")
    play.add_argument("--options", default="", help="the game's options as JSON")
    play.add_argument("--auto", action="store_true", help="a bot plays your seat too")
    play.add_argument(
        "--level",
        default="greedy",
        choices=LEVELS,
        help="level of the --auto bot (bot seats: TABLETOP_MATCHMAKING_BOT_LEVEL)",
    )
    play.add_argument("--quiet", action="store_true", help="print only the result")
    play.add_argument("--name", default="", help="your display name")
    play.add_argument(
        "--clock",
        default="",
        help="turn clock: none, default (the game's), 30s (per move), 5m+3s (Fischer), "
        "then delay=2s timeouts=3 then=bot|forfeit (default: the matchmaker's)",
    )
    play.set_defaults(func=cmd_play)

    q = sub.add_parser("queue", help="wait in matchmaking for a match")
    q.add_argument("game")
    q.add_argument("--players", type=int)
    q.add_argument("--options", default="")
    q.add_argument("--bots", action="store_true", help="allow bots to fill empty seats")
    q.add_argument("--name", default="")
    q.set_defaults(func=cmd_queue)

    w = sub.add_parser("watch", help="follow a match")
    w.add_argument("match")
    w.add_argument("--after", type=int, help="the last version you have")
    w.set_defaults(func=cmd_watch)

    r = sub.add_parser("replay", help="re-stream a match from its events")
    r.add_argument("match")
    r.add_argument("--speed", type=float, default=0.0, help="1 = real pace, 0 = at once")
    r.add_argument("--from", dest="start", type=int, default=0, help="first version")
    r.set_defaults(func=cmd_replay)

    m = sub.add_parser("matches", help="list a player's matches")
    m.add_argument("--player", default="")
    m.set_defaults(func=cmd_matches)

    d = sub.add_parser("demo", help="bots play every game through the stack")
    d.add_argument("game", nargs="?")
    d.set_defaults(func=cmd_demo)

    lo = sub.add_parser("local", help="bots play in this process, no stack")
    lo.add_argument("game", nargs="?", help="game id (default: every game)")
    lo.add_argument("--players", type=int)
    lo.add_argument("--seed", type=int, default=1)
    lo.add_argument("--bot", default="greedy", choices=LEVELS)
    lo.set_defaults(func=cmd_local)

    from services.cli import tournament

    tournament.add_parser(sub)
    return p


def main(argv: list[str] | None = None) -> int:
    args = parser().parse_args(argv)
    try:
        result = args.func(args)
        if asyncio.iscoroutine(result):
            result = asyncio.run(result)
        return int(result or 0)
    except (CliError, NotRunning) as e:
        console.print(f"[red]{e}[/]")
        return 2
    except grpc.aio.AioRpcError as e:
        console.print(f"[red]{rpc_reason(e)}[/]")
        return 1
    except KeyboardInterrupt:
        return 130


if __name__ == "__main__":
    sys.exit(main())
