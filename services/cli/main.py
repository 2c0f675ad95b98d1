"""``tabletop``: run the stack and play through it from a terminal.

tabletop up                          the whole stack on this machine (make run)
tabletop games                       the games, player counts and options
tabletop login / logout / whoami     the guest identity this terminal plays as
tabletop play GAME [--bots K]        play against bots (--level random|greedy|search:
                                     their difficulty; --auto: a bot plays you too;
                                     --clock 30s / 5m+3s: a turn clock)
tabletop play --resume MATCH         go back to a match you left
tabletop queue GAME                  wait in matchmaking with a live status line, then play
tabletop watch MATCH                 follow a match live
tabletop replay MATCH [--speed X]    re-stream a match from its events
tabletop matches [--player P]        your matches (or a player's)
tabletop demo                        bots play every game through the stack
tabletop local [GAME]                bots play in this process, no stack needed
tabletop tournament create|register|start|show|watch|run   tournaments
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import os
import sys
import time
import uuid
from collections.abc import Callable
from typing import Any

import grpc
from rich.console import Console
from rich.panel import Panel
from rich.progress import BarColumn, Progress, TextColumn
from rich.table import Table
from rich.text import Text

from engine_core.bots import LEVELS, bot_for, choose_from_view
from engine_core.decider import fold, start
from engine_core.registry import UnknownGame, default_registry
from engine_core.rng import Rng, derive
from engine_core.testing import move_entropy, seed_bytes, setup_entropy
from services.cli.clock import check_clock_spec, print_clocks, wait_counting_down
from services.cli.connect import Addresses, NotRunning, Session
from services.cli.identity import Credentials
from services.cli.prompt import read_line
from services.cli.render import Renderer, Section, changed, renderer_for
from services.common.errors import error_info
from tabletop.match.v1 import match_pb2
from tabletop.matchmaking.v1 import matchmaking_pb2
from tabletop.rules.v1 import rules_pb2

console = Console(highlight=False)
FINISHED = match_pb2.MATCH_STATUS_FINISHED


class CliError(Exception):
    """A problem the user can fix; printed without a traceback."""


class Quit(Exception):
    """The player left (``q`` or Ctrl-C at the prompt)."""


def rpc_reason(e: grpc.aio.AioRpcError) -> str:
    """The status, the machine-readable reason and the message of a rejection."""
    info = error_info(e)
    reason = f" [{info.reason}]" if info is not None else ""
    return f"{e.code().name}{reason}: {e.details()}"


def say(text: str, style: str = "") -> None:
    """One line of plain text (never read as markup)."""
    console.print(Text(text, style=style))


def clock_spec(args: argparse.Namespace) -> str:
    try:
        return check_clock_spec(args.clock)
    except ValueError as e:
        raise CliError(f"--clock: {e}") from None


def resolve_game(name: str) -> Any:
    try:
        return default_registry().get(name)
    except UnknownGame as e:
        raise CliError(str(e)) from None


# ---------------------------------------------------------------- the board
def board_panel(title: str, sections: list[Section]) -> Panel:
    text = Text()
    for i, s in enumerate(sections):
        if i:
            text.append("\n")
        if not s.title:
            text.append("\n".join(s.lines), style="bold")
        elif len(s.lines) == 1 and s.title not in ("you", "your hand"):
            text.append(f"{s.title}: ", style="bold")
            text.append(s.lines[0])
        else:
            text.append(s.title, style="bold")
            for line in s.lines:
                text.append("\n" + line)
    return Panel(text, title=title, title_align="left", expand=False)


def seat_label(seat: match_pb2.Seat, me: str) -> str:
    if seat.player == me:
        return "you"
    kind = "bot" if seat.bot else seat.player.split(":", 1)[0]
    return f"seat {seat.seat} ({kind})"


class MatchLog:
    """What a player's terminal shows of one match: the board (only what
    changed between commits unless ``full``), each commit in words, and in
    auto play one line per round."""

    def __init__(self, r: Renderer, *, full: bool, summary: bool, quiet: bool) -> None:
        self.r = r
        self.full = full
        self.summary = summary
        self.quiet = quiet
        self.shown: list[Section] = []
        self.round: int | None = None
        self.lines = 0

    def out(self, text: str, style: str = "") -> None:
        self.lines += 1
        say(text, style)

    def board(self, view_json: str, title: str) -> None:
        if self.quiet or self.summary or not view_json:
            return
        sections = self.r.sections(self.r.view(view_json))
        todo = sections if self.full or not self.shown else changed(self.shown, sections)
        self.shown = sections
        if todo:
            self.lines += sum(len(s.lines) for s in todo) + 2
            console.print(board_panel(title, todo))

    def commit(self, c: match_pb2.MatchCommit) -> None:
        if self.quiet:
            return
        view = self.r.view(c.view_json) if c.view_json else None
        if self.summary:
            rnd = self.r.round(view) if view is not None else None
            if rnd is not None:
                if rnd != self.round and self.round is not None:
                    self.out(f"{self.r.ROUND} {self.round} done: {self.r.standing(view)}", "dim")
                self.round = rnd
                return
        seat = c.seat if c.HasField("seat") else None
        if c.ended_by_service:  # EndMatch: no move, the outcome given from outside
            self.out("  " + ended_words(c.outcome.reason), "bold")
            return
        lines = [w for w in (self.r.event_words(self.r.event(e), view) for e in c.events_json) if w]
        if not lines and c.move_json:
            lines = [self.r.played_words(seat, self.r.move(c.move_json), view)]
        for line in lines:
            mine = seat is not None and seat == self.r.me
            self.out(("  " if not line.startswith("──") else "") + line, "" if mine else "cyan")


def menu(r: Renderer, moves: list[Any], view: Any) -> list[tuple[str, Any]]:
    """The legal moves in words, one entry per distinct line: moves that read
    the same do the same (two copies of one card), so the first stands for all."""
    seen: dict[str, Any] = {}
    for mv in moves:
        seen.setdefault(r.move_words(mv, view), mv)
    return list(seen.items())


def ask_move(r: Renderer, moves: list[Any], view: Any) -> Any:
    entries = menu(r, moves, view)
    moves = [mv for _, mv in entries]
    for i, (text, _mv) in enumerate(entries, 1):
        say(f"  {i:3d}. {text}")
    while True:
        try:
            raw = read_line(console, f"your move [1-{len(moves)}, q to quit]: ").strip()
        except (KeyboardInterrupt, EOFError):
            raise Quit from None
        if raw.lower() in ("q", "quit", "exit"):
            raise Quit
        if raw.isdigit() and 1 <= int(raw) <= len(moves):
            return moves[int(raw) - 1]
        say(f"type a number from 1 to {len(moves)}, or q to quit", "red")


# ---------------------------------------------------------------- matchmaking
async def find_match(
    s: Session,
    game: str,
    players: int,
    options: str,
    bots: bool,
    *,
    status_line: bool = True,
    time_control: str = "",
    bot_level: str = "",
) -> tuple[str, int]:
    """Queue for a match and wait until matchmaking seats us (``bot_level``:
    the level of the bots that may fill it, "" = the matchmaker's setting)."""
    try:
        ticket = await s.matchmaking.Enqueue(
            matchmaking_pb2.EnqueueRequest(
                game=game,
                player_counts=[players],
                options_json=options,
                allow_bots=bots,
                time_control=time_control,
                bot_level=bot_level,
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
        if e.code() == grpc.StatusCode.UNAUTHENTICATED:
            raise  # the saved sign-in: ``main`` says so, and forgets one this stack refuses
        raise CliError(f"matchmaking refused the ticket: {rpc_reason(e)}") from None
    stream = s.matchmaking.WatchTicket(
        matchmaking_pb2.WatchTicketRequest(ticket_id=ticket.ticket_id), metadata=s.metadata
    )
    began = time.monotonic()
    what = f"{game}, {players} players"
    if bots:
        what += f", {bot_level} bots may fill seats" if bot_level else ", bots may fill seats"
    window = ""

    def line() -> str:
        return f"searching: {what}; {time.monotonic() - began:.0f} s{window} (Ctrl-C leaves)"

    status = console.status(line()) if status_line else None

    async def tick() -> None:
        while status is not None:
            await asyncio.sleep(1)
            status.update(line())

    ticker = asyncio.create_task(tick())
    try:
        with status or contextlib.nullcontext():
            async for update in stream:
                kind = update.WhichOneof("detail")
                if kind == "matched":
                    m = update.matched
                    return m.match_id, m.seat
                if kind == "searching" and status is not None:
                    window = f", rating window ±{update.searching.rating_window:.0f}"
                    status.update(line())
                if update.reason:
                    raise CliError(f"ticket ended without a match: {update.reason}")
    finally:
        ticker.cancel()
    raise CliError("the ticket stream ended without a match")


# ---------------------------------------------------------------- playing
async def get_match(s: Session, match_id: str) -> match_pb2.GetMatchResponse:
    try:
        return await s.match.GetMatch(
            match_pb2.GetMatchRequest(match_id=match_id), metadata=s.metadata, timeout=10
        )
    except grpc.aio.AioRpcError as e:
        if e.code() in (grpc.StatusCode.NOT_FOUND, grpc.StatusCode.INVALID_ARGUMENT):
            raise CliError(f"no match {match_id}: {rpc_reason(e)}") from None
        raise


async def play_match(
    s: Session,
    game: Any,
    match_id: str,
    seat: int,
    *,
    auto: bool,
    quiet: bool = False,
    full: bool = False,
    on_commit: Callable[[int], None] | None = None,
    level: str = "greedy",
) -> match_pb2.GetMatchResponse:
    """Play our seat until the match is over; returns the final match.

    One WatchMatch stream (with views) tells what every seat did, in order;
    GetMatch gives our legal moves when we are awaited."""
    rng = Rng(os.urandom(16))
    bot = bot_for(level, game, time_s=1.0, clock=time.monotonic)
    r = renderer_for(game, me=seat)
    m = await get_match(s, match_id)
    r.seat_names = {x.seat: seat_label(x, s.player_id) for x in m.seats}
    r.seat_names[seat] = "you"
    t = MatchLog(r, full=full, summary=auto, quiet=quiet)
    title = f"{game.title}, match {match_id}"
    call = s.match.WatchMatch(
        match_pb2.WatchMatchRequest(match_id=match_id, after_version=m.version, include_view=True),
        metadata=s.metadata,
    )
    commits = call.__aiter__()
    seen = m.version
    waited: list[int] = []
    try:
        while m.status != FINISHED:
            if seat in m.awaiting and m.legal_moves_json:
                moves = [r.move(x) for x in m.legal_moves_json]
                if auto:  # the bot decides on our view alone
                    view = game.codec().view_json.decode(m.view_json)
                    move = choose_from_view(bot, game, view, seat, rng)
                else:
                    t.board(m.view_json, title)
                    print_clocks(console, m, seat)
                    move = ask_move(r, moves, r.view(m.view_json))
                try:
                    await s.match.SubmitMove(
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
                    if e.code() not in (
                        grpc.StatusCode.ABORTED,
                        grpc.StatusCode.FAILED_PRECONDITION,
                    ):
                        raise
                    if not quiet and not auto:
                        say(f"move refused: {rpc_reason(e)}", "yellow")
            elif not quiet and not auto and list(m.awaiting) != waited:
                waited = list(m.awaiting)
                say(f"waiting for {', '.join(r.seat(x) for x in waited)} ...", "dim")
            # What happened next, in order, up to the match as it is now.
            try:
                nxt = asyncio.ensure_future(commits.__anext__())
                if (
                    not quiet
                    and not auto
                    and seat not in m.awaiting
                    and any(x.deadline for x in m.clocks)
                ):
                    await wait_counting_down(console, m, seat, nxt)  # the clocks ticking
                c = await nxt
            except StopAsyncIteration:
                m = await get_match(s, match_id)
                break
            seen = c.version
            t.commit(c)
            if on_commit is not None:
                on_commit(c.version)
            m = await get_match(s, match_id)
            while seen < m.version:
                c = await commits.__anext__()
                seen = c.version
                t.commit(c)
                if on_commit is not None:
                    on_commit(c.version)
    finally:
        call.cancel()
    if not quiet and not auto:
        t.board(m.view_json, title)
    return m


def ended_words(reason: str) -> str:
    """How a match ended, in words: a match a service ended from outside
    (``adjudicated:<reason>``) says who ended it."""
    if not reason.startswith("adjudicated:"):
        return f"ended by: {reason}"
    why = reason.removeprefix("adjudicated:")
    if why == "round_deadline":
        return "ended by the tournament: round deadline"
    return f"ended by the server: {why.replace('_', ' ')}"


def print_outcome(m: match_pb2.GetMatchResponse, seat: int | None, me: str = "") -> None:
    o = m.outcome
    console.rule("[bold]game over")
    for x in m.seats:
        mark = " (you)" if (seat is not None and x.seat == seat) or x.player == me else ""
        say(f"  seat {x.seat} {x.player}{mark}: rank {o.ranks[x.seat]}, score {o.scores[x.seat]:g}")
    say(f"  {ended_words(o.reason)}; {m.version} moves")
    say(f"  match {m.match_id}")


def announce(s: Session) -> None:
    for note in s.notes:
        say(note, "dim")
    s.notes.clear()


# ---------------------------------------------------------------- commands
async def cmd_games(args: argparse.Namespace) -> int:
    s = Session()
    try:
        games = list(default_registry())
        try:
            reply = await s.rules.ListGames(rules_pb2.ListGamesRequest(), timeout=5)
            served = {g.info.id for g in reply.games}
            games = [g for g in games if g.name in served]
        except grpc.aio.AioRpcError as e:
            if e.code() not in (grpc.StatusCode.UNAVAILABLE, grpc.StatusCode.DEADLINE_EXCEEDED):
                raise
            say(
                f"(the rules service is not reachable at {s.addr.rules}: "
                "these are the games built into this CLI)",
                "yellow",
            )
        table = Table(title="Tabletop games")
        table.add_column("id", no_wrap=True)
        table.add_column("title")
        table.add_column("players", no_wrap=True)
        table.add_column("rules", no_wrap=True)
        for game in games:
            table.add_row(
                game.name, game.title, f"{game.min_players}-{game.max_players}", game.rules_version
            )
        console.print(table)
        for game in games:
            options = renderer_for(game).options()
            if options:
                grid = Table(
                    title=f"{game.name} options (--options '{{\"name\": value}}')",
                    title_justify="left",
                    box=None,
                    show_header=False,
                    padding=(0, 1),
                )
                grid.add_column(no_wrap=True, style="bold")
                grid.add_column()
                for name, meaning in options:
                    grid.add_row(name, meaning)
                console.print(grid)
        return 0
    finally:
        await s.close()


async def cmd_login(args: argparse.Namespace) -> int:
    s = Session()
    try:
        if args.new:
            old = s.credentials.remove(s.addr.match)
            if old is not None:
                say(f"forgot {old.player_id}", "dim")
        me = await s.login(args.name)
        s.notes = [n for n in s.notes if not n.startswith("signed in as a new guest")]
        announce(s)
        say(f"signed in as {me} on {s.addr.match}")
        say(f"(saved in {s.credentials.path})", "dim")
        return 0
    finally:
        await s.close()


async def cmd_logout(args: argparse.Namespace) -> int:
    s = Session()
    try:
        old = s.credentials.remove(s.addr.match)
        if old is None:
            say(f"not signed in on {s.addr.match}")
        else:
            say(f"signed out {old.player_id} (its token is removed from {s.credentials.path})")
        return 0
    finally:
        await s.close()


async def cmd_whoami(args: argparse.Namespace) -> int:
    s = Session()
    try:
        saved = s.credentials.get(s.addr.match)
        if saved is None:
            say(f"not signed in on {s.addr.match}: `tabletop login` signs in as a guest")
            return 1
        left = saved.expires_at - time.time()
        state = f"expires in {left / 3600:.0f} h" if left > 0 else "expired (renewed on next use)"
        say(f"{saved.player_id}{' (' + saved.name + ')' if saved.name else ''}")
        say(f"  on {s.addr.match}; token {state}; saved in {s.credentials.path}")
        return 0
    finally:
        await s.close()


async def cmd_play(args: argparse.Namespace) -> int:
    s = Session()
    try:
        me = await s.login(args.name)
        announce(s)
        if args.resume:
            m = await get_match(s, args.resume)
            if not m.HasField("your_seat"):
                raise CliError(f"{me} has no seat in match {args.resume}")
            game, match_id, seat = resolve_game(m.game), m.match_id, m.your_seat
        else:
            if not args.game:
                raise CliError("name a game (tabletop games lists them), or --resume MATCH")
            game = resolve_game(args.game)
            players = args.players or (args.bots + 1 if args.bots else game.min_players)
            if not game.min_players <= players <= game.max_players:
                raise CliError(
                    f"{game.name} plays with {game.min_players}-{game.max_players} players"
                )
            clock = clock_spec(args)
            match_id, seat = await find_match(
                s,
                game.name,
                players,
                args.options,
                True,
                time_control=clock,
                bot_level=args.level or "",
            )
        return await play_and_report(s, game, match_id, seat, args)
    finally:
        await s.close()


async def play_and_report(s: Session, game: Any, match_id: str, seat: int, args: Any) -> int:
    say(f"{game.title}: you are seat {seat}, signed in as {s.player_id}")
    say(f"match {match_id}")
    try:
        final = await play_match(
            s,
            game,
            match_id,
            seat,
            auto=args.auto,
            quiet=args.quiet,
            full=args.full,
            level=args.level or "greedy",
        )
    except Quit:
        say(f"left match {match_id}; go back to it with:")
        say(f"  tabletop play --resume {match_id}")
        return 130
    except asyncio.CancelledError:  # Ctrl-C while waiting for the other seats
        say(f"left match {match_id}; go back to it with:")
        say(f"  tabletop play --resume {match_id}")
        raise
    print_outcome(final, seat)
    return 0


async def cmd_queue(args: argparse.Namespace) -> int:
    game = resolve_game(args.game)
    s = Session()
    try:
        me = await s.login(args.name)
        announce(s)
        say(f"in the queue as {me}")
        players = args.players or game.min_players
        match_id, seat = await find_match(
            s,
            game.name,
            players,
            args.options,
            args.bots,
            time_control=clock_spec(args),
            bot_level=args.level or "",
        )
        say(f"matched: match {match_id}, seat {seat}")
        return await play_and_report(s, game, match_id, seat, args)
    finally:
        await s.close()


async def follow(
    s: Session, call: Any, game: Any, seat: int | None, full: bool, names: dict[int, str]
) -> None:
    """Print a stream of commits (watch, replay) in words, with the board at the end."""
    r = renderer_for(game, me=seat)
    r.seat_names = names
    t = MatchLog(r, full=full, summary=False, quiet=False)
    last = None
    async for c in call:
        last = c
        t.commit(c)
        if c.status == FINISHED:
            o = c.outcome
            say(
                f"finished at version {c.version}: ranks {list(o.ranks)}, scores "
                f"{list(o.scores)}, {o.reason}"
            )
    if last is not None and last.view_json:
        t.board(last.view_json, f"{game.title} at version {last.version}")


async def seat_in(s: Session, match_id: str) -> tuple[Any, int | None, Any]:
    m = await get_match(s, match_id)
    game = resolve_game(m.game)
    seat = m.your_seat if m.HasField("your_seat") else None
    return game, seat, m


async def cmd_watch(args: argparse.Namespace) -> int:
    s = Session()
    try:
        me = await s.login()
        announce(s)
        game, seat, m = await seat_in(s, args.match)
        who = f"seat {seat}" if seat is not None else "a spectator"
        say(f"watching match {m.match_id} ({game.title}) as {who} ({me}); Ctrl-C to stop")
        r = renderer_for(game, me=seat)
        r.seat_names = {x.seat: seat_label(x, me) for x in m.seats}
        MatchLog(r, full=True, summary=False, quiet=False).board(m.view_json, game.title)
        if m.status == FINISHED and args.after is None:
            o = m.outcome
            say(f"the match is over ({o.reason}, ranks {list(o.ranks)}); to see it again:")
            say(f"  tabletop replay {m.match_id}")
            return 0
        req = match_pb2.WatchMatchRequest(match_id=args.match, include_view=True)
        req.after_version = m.version if args.after is None else args.after
        await follow(
            s, s.match.WatchMatch(req, metadata=s.metadata), game, seat, args.full, r.seat_names
        )
        return 0
    finally:
        await s.close()


async def cmd_replay(args: argparse.Namespace) -> int:
    s = Session()
    try:
        await s.login()
        announce(s)
        me = s.player_id
        game, seat, m = await seat_in(s, args.match)
        names = {x.seat: seat_label(x, me) for x in m.seats}
        req = match_pb2.ReplayMatchRequest(
            match_id=args.match, from_version=args.start, speed=args.speed, include_view=True
        )
        await follow(s, s.match.ReplayMatch(req, metadata=s.metadata), game, seat, args.full, names)
        return 0
    finally:
        await s.close()


async def cmd_matches(args: argparse.Namespace) -> int:
    s = Session()
    try:
        me = await s.login()
        announce(s)
        player = args.player or me
        reply = await s.match.ListMatches(
            match_pb2.ListMatchesRequest(player=player), metadata=s.metadata, timeout=5
        )
        if not reply.matches:
            say(f"no matches of {player} yet")
            return 0
        # Match ids are never wrapped or shortened: they are there to be copied.
        table = Table(title=f"matches of {player}", expand=False)
        table.add_column("match", no_wrap=True, overflow="ignore", min_width=26)
        table.add_column("game", no_wrap=True)
        table.add_column("status", no_wrap=True)
        table.add_column("created")
        for m in reply.matches:
            table.add_row(
                m.match_id,
                m.game,
                match_pb2.MatchStatus.Name(m.status).split("_")[-1].lower(),
                m.created_at[:16].replace("T", " "),
            )
        console.print(table)
        return 0
    finally:
        await s.close()


async def cmd_demo(args: argparse.Namespace) -> int:
    """Bots play each game to the end through the stack, with progress bars."""
    names = [args.game] if args.game else default_registry().names()
    s = Session()
    played: list[tuple[str, str, int, str]] = []
    try:
        await s.login("demo", save=False)  # a throwaway guest: not your identity
        with Progress(
            TextColumn("{task.description:<34}"),
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
                    on_commit=lambda v, t=task: progress.update(t, completed=v),
                )
                o = final.outcome
                progress.update(
                    task,
                    completed=final.version,
                    total=final.version,
                    description=f"{name} ({players}p) {o.reason}",
                )
                played.append((name, match_id, final.version, o.reason))
        for name, match_id, moves, reason in played:
            say(f"{match_id}  {name}: {moves} moves, {reason}")
        say("replay one with: tabletop replay <match>")
        return 0
    finally:
        await s.close()


def cmd_local(args: argparse.Namespace) -> int:
    """Bots play in this process (no stack): the engine alone, one line per
    round (``--moves``: every move in words)."""
    registry = default_registry()
    names = [args.game] if args.game else registry.names()
    for name in names:
        game = resolve_game(name)
        players = args.players or game.min_players
        bot = bot_for(args.bot, game)
        say(f"== {game.title} ({name}), {players} players, seed {args.seed}, {bot.name} bots")
        r = renderer_for(game, me=None)
        rng = Rng(derive(seed_bytes(args.seed), "bots"))
        state, _events = start(game, players, None, setup_entropy(args.seed))
        rnd = None
        k = 0
        while game.outcome(state) is None:
            waiting = game.awaiting(state)
            seat = waiting[0] if len(waiting) == 1 else rng.choice(waiting)
            move = bot.choose(game, state, seat, rng)
            view = game.view(state, None)
            if args.moves:
                say(f"  {k + 1:4d}. {r.played_words(seat, move, view)}")
            state = fold(game, game.decide(state, seat, move, move_entropy(args.seed, k)), state)
            k += 1
            after = game.view(state, None)
            now = r.round(after)
            if not args.moves and now != rnd and rnd is not None:
                say(f"  {r.ROUND} {rnd} done: {r.standing(after)}")
            rnd = now
        final = game.view(state, None)
        if r.round(final) is None:
            console.print(board_panel(game.title, r.sections(final)))
        o = game.outcome(state)
        say(f"  result after {k} moves: {o.reason}; ranks {list(o.ranks)}; scores {list(o.scores)}")
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
    sub.add_parser("games", help="list the games and their options").set_defaults(func=cmd_games)

    li = sub.add_parser("login", help="sign in as a guest (kept for the next commands)")
    li.add_argument("--name", default="", help="your display name")
    li.add_argument("--new", action="store_true", help="forget the saved player, start anew")
    li.set_defaults(func=cmd_login)
    sub.add_parser("logout", help="forget the saved player").set_defaults(func=cmd_logout)
    sub.add_parser("whoami", help="the saved player").set_defaults(func=cmd_whoami)

    def playing(sp: argparse.ArgumentParser) -> None:
        sp.add_argument("--options", default="", help="the game's options as JSON")
        sp.add_argument("--auto", action="store_true", help="a bot plays your seat too")
        sp.add_argument(
            "--level",
            default=None,
            choices=LEVELS,
            help="difficulty of the bots: the bot seats of the match (default: the "
            "matchmaker's, TABLETOP_MATCHMAKING_BOT_LEVEL) and the --auto bot (default greedy)",
        )
        sp.add_argument("--quiet", action="store_true", help="print only the result")
        sp.add_argument("--full", action="store_true", help="the whole board at every turn")
        sp.add_argument("--name", default="", help="your display name (a new guest only)")
        sp.add_argument(
            "--clock",
            default="",
            help="turn clock: none, default (the game's), 30s (per move), 5m+3s (Fischer), "
            "then delay=2s timeouts=3 then=bot|forfeit (default: the matchmaker's)",
        )

    play = sub.add_parser("play", help="play a game against bots")
    play.add_argument("game", nargs="?")
    play.add_argument("--players", type=int, help="seats in the match (default: bots + 1)")
    play.add_argument("--bots", type=int, default=0, help="bot seats (default: the rest)")
    play.add_argument("--resume", metavar="MATCH", help="go back to a match you have a seat in")
    playing(play)
    play.set_defaults(func=cmd_play)

    q = sub.add_parser("queue", help="wait in matchmaking for a match, then play it")
    q.add_argument("game")
    q.add_argument("--players", type=int)
    q.add_argument("--bots", action="store_true", help="allow bots to fill empty seats")
    playing(q)
    q.set_defaults(func=cmd_queue)

    w = sub.add_parser("watch", help="follow a match")
    w.add_argument("match")
    w.add_argument("--after", type=int, help="the last version you have")
    w.add_argument("--full", action="store_true", help="the whole board at the end")
    w.set_defaults(func=cmd_watch)

    r = sub.add_parser("replay", help="re-stream a match from its events")
    r.add_argument("match")
    r.add_argument("--speed", type=float, default=0.0, help="1 = real pace, 0 = at once")
    r.add_argument("--from", dest="start", type=int, default=0, help="first version")
    r.add_argument("--full", action="store_true")
    r.set_defaults(func=cmd_replay)

    m = sub.add_parser("matches", help="list your matches (or a player's)")
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
    lo.add_argument("--moves", action="store_true", help="every move in words")
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
        say(str(e), "red")
        return 2
    except grpc.aio.AioRpcError as e:
        say(rpc_reason(e), "red")
        info = error_info(e)
        refused = info is not None and info.reason in ("invalid_token", "token_expired")
        if e.code() == grpc.StatusCode.UNAUTHENTICATED and refused:
            # Signed by another stack (or a secret since changed): forget it.
            gone = Credentials().remove(Addresses.from_env().match)
            if gone is not None:
                say(
                    f"this stack does not accept the saved sign-in of {gone.player_id}; "
                    "it is forgotten: run the command again to sign in as a new guest",
                    "red",
                )
        return 1
    except (KeyboardInterrupt, Quit):
        return 130


if __name__ == "__main__":
    sys.exit(main())
