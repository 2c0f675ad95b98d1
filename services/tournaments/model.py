"""A tournament as events, and the projection folded from them.

Each tournament is the subject ``tournament.<id>`` of the ``TOURNAMENTS``
stream; every event is one message, appended with the expected last subject
sequence (the stream is the lock: no leader, any number of replicas).

Events (msgpack, tagged by ``type``)::

    TournamentCreated   the game, format, options, time control, rounds, seed
    PlayerRegistered    a player (or a bot) joined (late: at a later round)
    PlayerWithdrawn     a player left; never paired again
    RegistrationClosed  the field and its seeds (ratings read at the start)
    RoundPaired         the next round's tables (players in seat order), byes
    RoundStarted        its matches created: the tables with their match ids
    RematchStarted      another game at an elimination table that was drawn
    MatchResultRecorded one match's result (once per match id)
    RoundDeadlinePassed the round's deadline came with matches unfinished
    MatchAdjudicated    such a match decided by the deadline rule (once per match id)
    RoundCompleted      every table of the round decided
    RaceQueued          a score race queued an entrant through the matchmaker
    RaceMatched         that ticket became a match (the race's own: only these count)
    RaceTicketEnded     that ticket ended unmatched (cancelled, expired)
    TournamentFinished  the final standings

The projection (``Tournament``) is a pure fold; standings and tiebreaks are
computed from it (``services.tournaments.standings``).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import msgspec

FORMAT_SWISS = "swiss"
FORMAT_SWISS_TABLES = "swiss_tables"
FORMAT_ROUND_ROBIN = "round_robin"
FORMAT_ELIMINATION = "single_elimination"
FORMAT_SCORE_RACE = "score_race"
FORMATS = (
    FORMAT_SWISS,
    FORMAT_SWISS_TABLES,
    FORMAT_ROUND_ROBIN,
    FORMAT_ELIMINATION,
    FORMAT_SCORE_RACE,
)

STATUS_REGISTERING = "registering"
STATUS_RUNNING = "running"
STATUS_FINISHED = "finished"

TC_NONE = "none"
TC_PER_MOVE = "per_move"
TC_FISCHER = "fischer"
TC_GAME_DEFAULT = "game_default"
TIME_CONTROL_KINDS = (TC_NONE, TC_PER_MOVE, TC_FISCHER, TC_GAME_DEFAULT)


class TimeControl(msgspec.Struct, frozen=True, kw_only=True):
    """The clock of every match of the tournament: ``per_move`` gives each move
    ``seconds``; ``fischer`` a bank of ``seconds`` plus ``increment`` after
    each move (``delay``: seconds free at the start of each decision);
    ``game_default`` the game's own clock. After ``max_timeouts`` timeouts in
    a row a seat forfeits its match (a player who has gone loses; the round
    goes on)."""

    kind: str = TC_NONE
    seconds: float = 0.0
    increment: float = 0.0
    delay: float = 0.0
    max_timeouts: int = 3


class Options(msgspec.Struct, frozen=True, kw_only=True):
    """The tournament's own options (the game's are ``game_options`` JSON)."""

    table_size: int = 2
    max_players: int = 0  # 0: no limit
    late_registration_rounds: int = 0  # registration stays open up to this round
    bot_fill: bool = False  # a bot makes an odd field even (2-player formats)
    top_cut: int = 0  # swiss: then single elimination of the top N (0: none)
    max_games: int = 3  # elimination: games at a table before the seed decides a draw
    race_seconds: float = 0.0  # score race: the window's length
    race_scoring: str = "best"  # score race: "best" or "sum" of match points
    public_replay: bool = False
    bot_level: str = ""  # the fill bot's level (engine_core.bots.LEVELS; "": the worker's)
    advance: int = 0  # elimination of tables of 3+: the best N of each table go through (0: 1)
    round_deadline_s: float = 0.0  # a round still running this long after its start is adjudicated
    race_queue: bool = False  # score race: queue the entrants through the matchmaker
    race_max_matches: int = 0  # score race with race_queue: matches per entrant (0: no limit)


class TournamentCreated(msgspec.Struct, frozen=True, kw_only=True, tag="created"):
    tournament_id: str
    name: str
    game: str
    format: str
    rounds: int
    seed: str
    options: Options
    game_options: str = ""
    time_control: TimeControl = TimeControl()
    organiser: str = ""
    at_ms: int = 0


class PlayerRegistered(msgspec.Struct, frozen=True, kw_only=True, tag="registered"):
    player: str
    by: str = ""
    at_round: int = 0  # 0: before the start; n: joined for round n (late)
    at_ms: int = 0


class PlayerWithdrawn(msgspec.Struct, frozen=True, kw_only=True, tag="withdrawn"):
    player: str
    by: str = ""
    at_ms: int = 0


class RegistrationClosed(msgspec.Struct, frozen=True, kw_only=True, tag="closed"):
    seeds: tuple[str, ...]  # best first
    ratings: tuple[float, ...] = ()
    at_ms: int = 0


class Table(msgspec.Struct, frozen=True, kw_only=True):
    table: int  # 1-based
    players: tuple[str, ...]  # seat order
    match_id: str


class RoundPaired(msgspec.Struct, frozen=True, kw_only=True, tag="round_paired"):
    """The next round decided (players in seat order per table), before its
    matches exist: from here on its tables are fixed, so whoever creates the
    matches (after a crash: another replica) creates exactly these."""

    round: int
    tables: tuple[tuple[str, ...], ...]
    byes: tuple[str, ...] = ()
    stage: str = ""
    at_ms: int = 0


class RoundStarted(msgspec.Struct, frozen=True, kw_only=True, tag="round_started"):
    round: int
    tables: tuple[Table, ...]
    byes: tuple[str, ...] = ()
    stage: str = ""  # "elimination" for the top cut of a Swiss
    at_ms: int = 0


class RematchStarted(msgspec.Struct, frozen=True, kw_only=True, tag="rematch"):
    round: int
    table: int
    game: int  # 2, 3, ...
    players: tuple[str, ...]
    match_id: str
    at_ms: int = 0


class MatchResultRecorded(msgspec.Struct, frozen=True, kw_only=True, tag="result"):
    round: int
    table: int
    match_id: str
    players: tuple[str, ...]
    ranks: tuple[int, ...]
    scores: tuple[float, ...]
    reason: str = ""
    finished_at: str = ""
    at_ms: int = 0


class RoundDeadlinePassed(msgspec.Struct, frozen=True, kw_only=True, tag="round_deadline"):
    """The round's deadline (``RoundStarted.at_ms + round_deadline_s``) came
    with matches unfinished: from here no table of the round is replayed, and
    every match still unrecorded is adjudicated (``MatchAdjudicated``)."""

    round: int
    deadline_ms: int
    at_ms: int = 0


class MatchAdjudicated(msgspec.Struct, frozen=True, kw_only=True, tag="adjudicated"):
    """A match unfinished at its round's deadline, decided by the rule: the
    seats the game was waiting for rank last (score 0), the others share
    first (score 1); ``void`` (the game waited for every seat, or for none
    that could be told): nobody scores a point for it. The match service was
    told first (``EndMatch``) and ended the match with these ranks and
    scores (outcome reason ``adjudicated:round_deadline``): this event is a
    copy of what it stored. (Against a match service without ``EndMatch``,
    the match runs on there and its late result does not count here.)"""

    round: int
    table: int
    match_id: str
    players: tuple[str, ...]
    ranks: tuple[int, ...]
    scores: tuple[float, ...]
    void: bool = False
    awaiting: tuple[int, ...] = ()
    reason: str = "round_deadline"
    at_ms: int = 0


class RaceQueued(msgspec.Struct, frozen=True, kw_only=True, tag="race_queued"):
    """A score race (``race_queue``) queued an entrant through the matchmaker,
    in the race's own pool: the ticket."""

    player: str
    ticket_id: str
    at_ms: int = 0


class RaceMatched(msgspec.Struct, frozen=True, kw_only=True, tag="race_matched"):
    """The entrant's ticket became a match: a match of the race (the tag:
    only matches named here count for a queued race)."""

    player: str
    ticket_id: str
    match_id: str
    at_ms: int = 0


class RaceTicketEnded(msgspec.Struct, frozen=True, kw_only=True, tag="race_ticket_ended"):
    player: str
    ticket_id: str
    state: str  # cancelled, expired
    reason: str = ""
    at_ms: int = 0


class RoundCompleted(msgspec.Struct, frozen=True, kw_only=True, tag="round_completed"):
    round: int
    at_ms: int = 0


class Standing(msgspec.Struct, frozen=True, kw_only=True):
    rank: int
    player: str
    points: float
    played: int
    wins: int
    tiebreaks: dict[str, float] = {}


class TournamentFinished(msgspec.Struct, frozen=True, kw_only=True, tag="finished"):
    standings: tuple[Standing, ...]
    at_ms: int = 0


Event = (
    TournamentCreated
    | PlayerRegistered
    | PlayerWithdrawn
    | RegistrationClosed
    | RoundPaired
    | RoundStarted
    | RematchStarted
    | MatchResultRecorded
    | RoundDeadlinePassed
    | MatchAdjudicated
    | RoundCompleted
    | RaceQueued
    | RaceMatched
    | RaceTicketEnded
    | TournamentFinished
)

_encoder = msgspec.msgpack.Encoder()
_decoder = msgspec.msgpack.Decoder(Event)
_json = msgspec.json.Encoder()


def encode_event(event: Event) -> bytes:
    return _encoder.encode(event)


def decode_event(data: bytes) -> Event:
    return _decoder.decode(data)


def event_type(event: Any) -> str:
    return type(event).__struct_config__.tag  # type: ignore[no-any-return]


def event_json(event: Any) -> str:
    return _json.encode(event).decode()


# ---------------------------------------------------------------- projection
@dataclass
class Result:
    match_id: str
    players: tuple[str, ...]
    ranks: tuple[int, ...]
    scores: tuple[float, ...]
    reason: str
    void: bool = False  # adjudicated with no points for anyone
    adjudicated: bool = False

    @property
    def decisive(self) -> bool:
        return len(set(self.ranks)) > 1


@dataclass
class TableState:
    table: int
    players: tuple[str, ...]
    matches: list[str]  # game 1, then rematches
    results: dict[str, Result] = field(default_factory=dict)

    @property
    def last_result(self) -> Result | None:
        return self.results.get(self.matches[-1])

    @property
    def finished(self) -> bool:
        return self.matches[-1] in self.results


@dataclass
class RoundState:
    number: int
    tables: list[TableState]
    byes: tuple[str, ...]
    stage: str
    completed: bool = False
    started_ms: int = 0
    deadline_passed: bool = False


@dataclass
class RaceTicket:
    player: str
    state: str = "searching"  # searching, matched, cancelled, expired
    match_id: str = ""


@dataclass
class Entrant:
    player: str
    order: int  # registration order
    at_round: int = 0
    withdrawn: bool = False
    seq: int = 0  # when registered
    withdrawn_seq: int = 0


@dataclass
class Tournament:
    """The fold of one tournament's events."""

    created: TournamentCreated
    seq: int = 0  # the stream sequence of the last event folded in
    events: int = 0
    status: str = STATUS_REGISTERING
    entrants: dict[str, Entrant] = field(default_factory=dict)
    seeds: tuple[str, ...] = ()
    ratings: dict[str, float] = field(default_factory=dict)
    rounds: list[RoundState] = field(default_factory=list)
    matches: dict[str, tuple[int, int]] = field(default_factory=dict)  # id -> (round, table)
    race_results: list[Result] = field(default_factory=list)
    standings: tuple[Standing, ...] = ()
    started_ms: int = 0
    finished_ms: int = 0
    paired: RoundPaired | None = None  # a round paired, its matches not created yet
    race_tickets: dict[str, RaceTicket] = field(default_factory=dict)  # ticket id -> ticket
    race_matches: set[str] = field(default_factory=set)  # a queued race's own match ids
    race_recorded: set[str] = field(default_factory=set)  # race match ids with a result
    # Indexes of a queued race, so who is due is O(1) per entrant:
    race_open: dict[str, str] = field(default_factory=dict)  # player -> searching ticket
    race_playing: dict[str, set[str]] = field(default_factory=dict)  # player -> unrecorded
    race_count: dict[str, int] = field(default_factory=dict)  # player -> race matches
    race_queued: dict[str, int] = field(default_factory=dict)  # player -> RaceQueued so far

    @property
    def id(self) -> str:
        return self.created.tournament_id

    @property
    def game(self) -> str:
        return self.created.game

    @property
    def format(self) -> str:
        return self.created.format

    @property
    def options(self) -> Options:
        return self.created.options

    @property
    def current(self) -> RoundState | None:
        return self.rounds[-1] if self.rounds else None

    def active_players(self) -> list[str]:
        """Registered and not withdrawn, in registration order."""
        return [e.player for e in self.entrants.values() if not e.withdrawn]

    def out(self, player: str) -> bool:
        return self.entrants[player].withdrawn

    def pairable(self) -> list[str]:
        """The players of the next round, in registration order."""
        return [
            p for p in self.active_players() if self.entrants[p].at_round <= len(self.rounds) + 1
        ]

    def seed_of(self, player: str) -> int:
        """1 = the best seed; late entrants after every seed, by registration."""
        try:
            return self.seeds.index(player) + 1
        except ValueError:
            return len(self.seeds) + 1 + self.entrants[player].order

    def table_of(self, match_id: str) -> TableState | None:
        where = self.matches.get(match_id)
        if where is None:
            return None
        return self.rounds[where[0] - 1].tables[where[1] - 1]

    def round_of(self, table: TableState) -> RoundState:
        return self.rounds[self.matches[table.matches[0]][0] - 1]

    def recorded(self, match_id: str) -> bool:
        t = self.table_of(match_id)
        if t is not None:
            return match_id in t.results
        return match_id in self.race_recorded

    def race_open_ticket(self, player: str) -> str | None:
        """The entrant's ticket still searching, if any."""
        return self.race_open.get(player)

    def race_busy(self, player: str) -> bool:
        """Searching, or in a race match without a result yet."""
        return player in self.race_open or bool(self.race_playing.get(player))

    def race_matches_of(self, player: str) -> int:
        return self.race_count.get(player, 0)

    def race_queued_of(self, player: str) -> int:
        """How many tickets the race has queued the entrant with (the ``n`` of
        the next ticket's idempotency key)."""
        return self.race_queued.get(player, 0)

    def apply(self, seq: int, e: Event) -> None:
        self.seq = seq
        self.events += 1
        if isinstance(e, PlayerRegistered):
            self.entrants[e.player] = Entrant(e.player, len(self.entrants), e.at_round, seq=seq)
        elif isinstance(e, PlayerWithdrawn):
            self.entrants[e.player].withdrawn = True
            self.entrants[e.player].withdrawn_seq = seq
        elif isinstance(e, RegistrationClosed):
            self.status = STATUS_RUNNING
            self.seeds = e.seeds
            self.ratings = dict(zip(e.seeds, e.ratings, strict=False))
            self.started_ms = e.at_ms
        elif isinstance(e, RoundStarted):
            tables = [TableState(t.table, t.players, [t.match_id]) for t in e.tables]
            self.rounds.append(RoundState(e.round, tables, e.byes, e.stage, started_ms=e.at_ms))
            self.paired = None
            for t in e.tables:
                self.matches[t.match_id] = (e.round, t.table)
        elif isinstance(e, RematchStarted):
            t = self.rounds[e.round - 1].tables[e.table - 1]
            t.matches.append(e.match_id)
            t.players = e.players
            self.matches[e.match_id] = (e.round, e.table)
        elif isinstance(e, MatchResultRecorded):
            r = Result(e.match_id, e.players, e.ranks, e.scores, e.reason)
            if e.round == 0:
                self.race_results.append(r)
                self.race_recorded.add(e.match_id)
                for p in e.players:
                    self.race_playing.get(p, set()).discard(e.match_id)
            else:
                self.rounds[e.round - 1].tables[e.table - 1].results[e.match_id] = r
        elif isinstance(e, RoundDeadlinePassed):
            self.rounds[e.round - 1].deadline_passed = True
        elif isinstance(e, MatchAdjudicated):
            r = Result(e.match_id, e.players, e.ranks, e.scores, e.reason, e.void, True)
            self.rounds[e.round - 1].tables[e.table - 1].results[e.match_id] = r
        elif isinstance(e, RoundCompleted):
            self.rounds[e.round - 1].completed = True
        elif isinstance(e, RaceQueued):
            self.race_tickets[e.ticket_id] = RaceTicket(e.player)
            self.race_open[e.player] = e.ticket_id
            self.race_queued[e.player] = self.race_queued.get(e.player, 0) + 1
        elif isinstance(e, RaceMatched):
            tk = self.race_tickets.setdefault(e.ticket_id, RaceTicket(e.player))
            tk.state, tk.match_id = "matched", e.match_id
            self.race_matches.add(e.match_id)
            if self.race_open.get(e.player) == e.ticket_id:
                del self.race_open[e.player]
            self.race_count[e.player] = self.race_count.get(e.player, 0) + 1
            if e.match_id not in self.race_recorded:
                self.race_playing.setdefault(e.player, set()).add(e.match_id)
        elif isinstance(e, RaceTicketEnded):
            self.race_tickets.setdefault(e.ticket_id, RaceTicket(e.player)).state = e.state
            if self.race_open.get(e.player) == e.ticket_id:
                del self.race_open[e.player]
        elif isinstance(e, RoundPaired):
            self.paired = e
        elif isinstance(e, TournamentFinished):
            self.status = STATUS_FINISHED
            self.standings = e.standings
            self.finished_ms = e.at_ms


def fold(items: list[tuple[int, Event]], base: Tournament | None = None) -> Tournament:
    t = base
    for seq, e in items:
        if t is not None and seq <= t.seq:
            continue  # folded in already (two readers caught up at once)
        if t is None:
            if not isinstance(e, TournamentCreated):
                raise ValueError("a tournament stream must begin with TournamentCreated")
            t = Tournament(created=e, seq=seq, events=1)
            continue
        t.apply(seq, e)
    if t is None:
        raise ValueError("no events")
    return t


def placing_points(ranks: tuple[int, ...], seat: int) -> float:
    """Points for a placing: one per player placed below, a half per player
    tied with (2 players: win 1, draw 1/2, loss 0; 4: 3, 2, 1, 0)."""
    mine = ranks[seat]
    below = sum(1 for r in ranks if r > mine)
    tied = sum(1 for r in ranks if r == mine) - 1
    return below + tied / 2
