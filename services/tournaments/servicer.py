"""The gRPC face of the tournament application: proto in, one call, proto out."""

from __future__ import annotations

from typing import Any

from services.common.auth import Principal, Tokens
from services.common.logging import bind
from services.match.model import rfc3339
from services.tournaments import formats
from services.tournaments.app import TournamentApp, round_deadline_ms
from services.tournaments.errors import BadRequest
from services.tournaments.model import (
    FORMAT_ELIMINATION,
    FORMAT_ROUND_ROBIN,
    FORMAT_SCORE_RACE,
    FORMAT_SWISS,
    FORMAT_SWISS_TABLES,
    STATUS_FINISHED,
    STATUS_REGISTERING,
    STATUS_RUNNING,
    Options,
    TimeControl,
    Tournament,
    event_json,
    event_type,
)
from tabletop.tournaments.v1 import tournaments_pb2 as pb
from tabletop.tournaments.v1 import tournaments_pb2_grpc as pb_grpc

FORMAT_PB = {
    FORMAT_SWISS: pb.FORMAT_SWISS,
    FORMAT_SWISS_TABLES: pb.FORMAT_SWISS_TABLES,
    FORMAT_ROUND_ROBIN: pb.FORMAT_ROUND_ROBIN,
    FORMAT_ELIMINATION: pb.FORMAT_SINGLE_ELIMINATION,
    FORMAT_SCORE_RACE: pb.FORMAT_SCORE_RACE,
}
FORMAT_OF = {v: k for k, v in FORMAT_PB.items()}
STATUS_PB = {
    STATUS_REGISTERING: pb.STATUS_REGISTERING,
    STATUS_RUNNING: pb.STATUS_RUNNING,
    STATUS_FINISHED: pb.STATUS_FINISHED,
}
STATUS_OF = {v: k for k, v in STATUS_PB.items()}
TC_PB = {
    "none": pb.TimeControl.KIND_NONE,
    "per_move": pb.TimeControl.KIND_PER_MOVE,
    "fischer": pb.TimeControl.KIND_FISCHER,
    "game_default": pb.TimeControl.KIND_GAME_DEFAULT,
}
TC_OF = {v: k for k, v in TC_PB.items()}


def options_of(o: pb.TournamentOptions) -> Options:
    return Options(
        table_size=o.table_size or 2,
        max_players=o.max_players,
        late_registration_rounds=o.late_registration_rounds,
        bot_fill=o.bot_fill,
        top_cut=o.top_cut,
        max_games=o.max_games or 3,
        race_seconds=o.race_seconds,
        race_scoring=o.race_scoring or "best",
        public_replay=o.public_replay,
        bot_level=o.bot_level,
        advance=o.advance,
        round_deadline_s=o.round_deadline_s,
        race_queue=o.race_queue,
        race_max_matches=o.race_max_matches,
    )


def options_pb(o: Options) -> pb.TournamentOptions:
    return pb.TournamentOptions(
        table_size=o.table_size,
        max_players=o.max_players,
        late_registration_rounds=o.late_registration_rounds,
        bot_fill=o.bot_fill,
        top_cut=o.top_cut,
        max_games=o.max_games,
        race_seconds=o.race_seconds,
        race_scoring=o.race_scoring,
        public_replay=o.public_replay,
        bot_level=o.bot_level,
        advance=o.advance,
        round_deadline_s=o.round_deadline_s,
        race_queue=o.race_queue,
        race_max_matches=o.race_max_matches,
    )


def tournament_pb(t: Tournament) -> pb.Tournament:
    tc = t.created.time_control
    standings = t.standings if t.status == STATUS_FINISHED else formats.standings(t)
    rounds = []
    for r in t.rounds:
        tables = []
        for tb in r.tables:
            msg = pb.Table(
                table=tb.table, players=list(tb.players), match_ids=list(tb.matches),
                finished=tb.finished,
            )  # fmt: skip
            last = tb.last_result
            if last is not None:
                msg.result.CopyFrom(
                    pb.TableResult(
                        ranks=list(last.ranks), scores=list(last.scores), reason=last.reason
                    )
                )
            tables.append(msg)
        rounds.append(
            pb.Round(
                round=r.number,
                tables=tables,
                byes=list(r.byes),
                completed=r.completed,
                stage=r.stage,
                deadline=rfc3339(deadline) if (deadline := round_deadline_ms(t, r)) else "",
                deadline_passed=r.deadline_passed,
            )
        )
    return pb.Tournament(
        tournament_id=t.id,
        name=t.created.name,
        game=t.game,
        format=FORMAT_PB[t.format],
        status=STATUS_PB[t.status],
        round=len(t.rounds),
        total_rounds=formats.total_rounds(t)
        if t.status != STATUS_REGISTERING
        else t.created.rounds,
        entrants=[
            pb.Entrant(
                player=e.player,
                seed=t.seeds.index(e.player) + 1 if e.player in t.seeds else 0,
                withdrawn=e.withdrawn,
                joined_round=e.at_round,
            )
            for e in t.entrants.values()
        ],
        standings=[
            pb.Standing(
                rank=s.rank,
                player=s.player,
                points=s.points,
                played=s.played,
                wins=s.wins,
                tiebreaks=s.tiebreaks,
            )
            for s in standings
        ],
        rounds=rounds,
        options=options_pb(t.options),
        time_control=pb.TimeControl(
            kind=TC_PB[tc.kind],
            seconds=tc.seconds,
            increment=tc.increment,
            delay=tc.delay,
            max_timeouts=tc.max_timeouts,
        ),
        organiser=t.created.organiser,
        created_at=rfc3339(t.created.at_ms),
        seq=t.seq,
        seed=t.created.seed,
    )


class TournamentServicer(pb_grpc.TournamentServiceServicer):
    def __init__(self, app: TournamentApp, tokens: Tokens) -> None:
        self.app = app
        self.tokens = tokens

    def _principal(self, context: Any) -> Principal:
        principal = self.tokens.from_metadata(context.invocation_metadata())
        bind(player=principal.subject)
        return principal

    async def CreateTournament(self, request: Any, context: Any) -> Any:
        principal = self._principal(context)
        bind(game=request.game)
        if request.format not in FORMAT_OF:
            raise BadRequest("unknown_format", "set a format")
        if request.time_control.kind not in TC_OF:
            raise BadRequest("bad_time_control", "unknown time control kind")
        tc = request.time_control
        tid = await self.app.create(
            principal,
            name=request.name,
            game=request.game,
            format=FORMAT_OF[request.format],
            rounds=request.rounds,
            options=options_of(request.options),
            game_options=request.game_options_json,
            time_control=TimeControl(
                kind=TC_OF[tc.kind],
                seconds=tc.seconds,
                increment=tc.increment,
                delay=tc.delay,
                max_timeouts=tc.max_timeouts if tc.HasField("max_timeouts") else 3,
            ),
            seed=request.seed,
            idempotency_key=request.idempotency_key,
        )
        bind(tournament=tid)
        return pb.CreateTournamentResponse(tournament_id=tid)

    async def Register(self, request: Any, context: Any) -> Any:
        principal = self._principal(context)
        bind(tournament=request.tournament_id)
        return tournament_pb(
            await self.app.register(principal, request.tournament_id, request.player)
        )

    async def Withdraw(self, request: Any, context: Any) -> Any:
        principal = self._principal(context)
        bind(tournament=request.tournament_id)
        return tournament_pb(
            await self.app.withdraw(principal, request.tournament_id, request.player)
        )

    async def Start(self, request: Any, context: Any) -> Any:
        principal = self._principal(context)
        bind(tournament=request.tournament_id)
        return tournament_pb(await self.app.start(principal, request.tournament_id))

    async def GetTournament(self, request: Any, context: Any) -> Any:
        self._principal(context)
        bind(tournament=request.tournament_id)
        return tournament_pb(await self.app.get(request.tournament_id))

    async def WatchTournament(self, request: Any, context: Any) -> Any:
        self._principal(context)
        bind(tournament=request.tournament_id)
        async for seq, e in self.app.watch(request.tournament_id, request.after_seq):
            yield pb.TournamentEvent(seq=seq, type=event_type(e), event_json=event_json(e))

    async def ListTournaments(self, request: Any, context: Any) -> Any:
        self._principal(context)
        status = STATUS_OF.get(request.status, "")
        found = await self.app.list(status, request.game)
        return pb.ListTournamentsResponse(
            tournaments=[
                pb.TournamentSummary(
                    tournament_id=t.id,
                    name=t.created.name,
                    game=t.game,
                    format=FORMAT_PB[t.format],
                    status=STATUS_PB[t.status],
                    players=len(t.entrants),
                    round=len(t.rounds),
                    created_at=rfc3339(t.created.at_ms),
                )
                for t in found
            ]
        )
