"""A tournament on the deployment's shape, on one machine: a 3-node NATS
JetStream cluster, 2 rules, 2 match and 2 tournament replicas and a bot
worker, each a real ``python -m services.<name>`` process, client-side round
robin in front of the rules and match tiers.

A Swiss of bots is played through them; mid-round one replica of each tier
is SIGKILLed (a tournament replica first, then a match replica, then a rules
replica). The tournament finishes; every table's match exists once and its
result is recorded once; and the pairings and standings are exactly those
of an undisturbed run with the same seed and the same results.
"""

from __future__ import annotations

import asyncio
from pathlib import Path

import grpc
import nats
import pytest

from services.common.auth import AuthSettings, Tokens, bearer_metadata
from services.common.cluster import NatsCluster
from services.common.servers import ValkeyServer
from services.tournaments.model import MatchResultRecorded, RoundStarted, decode_event
from tabletop.tournaments.v1 import tournaments_pb2 as pb
from tabletop.tournaments.v1 import tournaments_pb2_grpc as pb_grpc
from tests.deploy.processes import ServiceProcess
from tests.services.tournaments.test_crash import same_as_undisturbed

SECRET = "local-cluster-tournament-secret-0123456789"
PLAYERS = 12
ROUNDS = 4


def _targets(processes: list[ServiceProcess]) -> str:
    return "ipv4:" + ",".join(p.address for p in processes)


async def _events(urls: list[str], tid: str) -> list:
    nc = await nats.connect(urls)
    try:
        js = nc.jetstream()
        out, seq = [], 0
        while True:
            try:
                msg = await js.get_msg(
                    "TOURNAMENTS", seq=seq + 1, subject=f"tournament.{tid}", next=True
                )
            except nats.js.errors.NotFoundError:
                return out
            seq = msg.seq
            out.append(decode_event(msg.data))
    finally:
        await nc.close()


async def _match_subjects(urls: list[str]) -> set[str]:
    nc = await nats.connect(urls)
    try:
        info = await nc.jetstream().stream_info("MATCHES", subjects_filter="match.*")
        return set(info.state.subjects or {})
    finally:
        await nc.close()


@pytest.fixture
def cluster_stack(tmp_path: Path):  # type: ignore[no-untyped-def]
    logs = tmp_path / "logs"
    logs.mkdir()
    started: list[ServiceProcess] = []
    with (
        NatsCluster(3, data_dir=tmp_path / "nats") as cluster,
        ValkeyServer(data_dir=tmp_path / "valkey") as valkey,
    ):
        common = {
            "TABLETOP_LOG_FORMAT": "json",
            "TABLETOP_LOG_LEVEL": "INFO",
            "TABLETOP_JWT_SECRET": SECRET,
            "TABLETOP_REDIS_URL": valkey.url,
        }
        try:
            rules = [
                ServiceProcess(
                    f"rules-{i}",
                    "services.rules",
                    {**common, "TABLETOP_RULES_MAX_CONNECTION_AGE_SECONDS": "0"},
                    r"listening on port (\d+)",
                    logs,
                    args=("--host", "127.0.0.1", "--port", "0", "--workers", "1"),
                )
                for i in range(2)
            ]
            for p in rules:
                started.append(p.start())
            match = [
                ServiceProcess(
                    f"match-{i}",
                    "services.match",
                    {
                        **common,
                        "TABLETOP_MATCH_HOST": "127.0.0.1",
                        "TABLETOP_MATCH_PORT": "0",
                        "TABLETOP_NATS_URL": cluster.nodes[i].url,
                        "TABLETOP_RULES_ADDR": _targets(rules),
                        "TABLETOP_MATCH_STREAM_REPLICAS": "3",
                        "TABLETOP_MATCH_GRACE_S": "1",
                        "TABLETOP_MATCH_PLAYERS_MAY_CREATE": "0",
                    },
                    r"listening on [0-9.]+:(\d+)",
                    logs,
                )
                for i in range(2)
            ]
            for p in match:
                started.append(p.start(timeout=60))
            bots = ServiceProcess(
                "bots",
                "services.bots",
                {
                    **common,
                    "TABLETOP_MATCH_ADDR": _targets(match),
                    "TABLETOP_BOTS_KIND": "random",
                    "TABLETOP_BOTS_CLAIM_IDLE_S": "3",
                },
                r"grpc_port=(\d+)",
                logs,
            )
            started.append(bots.start())
            tournaments = [
                ServiceProcess(
                    f"tournaments-{i}",
                    "services.tournaments",
                    {
                        **common,
                        "TABLETOP_TOURNAMENTS_HOST": "127.0.0.1",
                        "TABLETOP_TOURNAMENTS_PORT": "0",
                        "TABLETOP_NATS_URL": cluster.nodes[(i + 1) % 3].url,
                        "TABLETOP_MATCH_ADDR": _targets(match),
                        "TABLETOP_TOURNAMENTS_STREAM_REPLICAS": "3",
                        "TABLETOP_TOURNAMENTS_SWEEP_S": "0.3",
                        "TABLETOP_TOURNAMENTS_RECONCILE_S": "2",
                    },
                    r"listening on [0-9.]+:(\d+)",
                    logs,
                )
                for i in range(2)
            ]
            for p in tournaments:
                started.append(p.start(timeout=60))
            yield cluster, rules, match, tournaments
        finally:
            for p in started:
                p.kill()


@pytest.mark.slow
@pytest.mark.timeout(300)
async def test_a_swiss_survives_losing_a_replica_of_each_tier(cluster_stack) -> None:  # type: ignore[no-untyped-def]
    cluster, rules, match, tournaments = cluster_stack
    md = bearer_metadata(Tokens(AuthSettings(secret=SECRET)).issue("service:test", role="service"))
    kills: list[str] = []
    channels = [grpc.aio.insecure_channel(p.address) for p in tournaments]
    stubs = [pb_grpc.TournamentServiceStub(c) for c in channels]
    try:
        tid = (
            await stubs[1].CreateTournament(
                pb.CreateTournamentRequest(
                    game="dwarves_duel", format=pb.FORMAT_SWISS, rounds=ROUNDS, seed="cluster"
                ),
                metadata=md,
            )
        ).tournament_id
        for i in range(PLAYERS):
            await stubs[1].Register(
                pb.RegisterRequest(tournament_id=tid, player=f"bot:c{i}"), metadata=md
            )
        await stubs[1].Start(pb.StartRequest(tournament_id=tid), metadata=md)

        async def state() -> pb.Tournament:
            return await stubs[1].GetTournament(
                pb.GetTournamentRequest(tournament_id=tid), metadata=md
            )

        async def mid_round(n: int) -> None:
            """Wait for round ``n`` to have started and some of its tables done."""
            while True:
                t = await state()
                if len(t.rounds) >= n and any(tb.finished for tb in t.rounds[n - 1].tables):
                    return
                await asyncio.sleep(0.2)

        await asyncio.wait_for(mid_round(1), 120)
        tournaments[0].kill()
        kills.append("tournaments-0 in round 1")
        await asyncio.wait_for(mid_round(2), 120)
        match[1].kill()
        kills.append("match-1 in round 2")
        await asyncio.wait_for(mid_round(3), 120)
        rules[1].kill()
        kills.append("rules-1 in round 3")

        async def done() -> pb.Tournament:
            while True:
                t = await state()
                if t.status == pb.STATUS_FINISHED:
                    return t
                await asyncio.sleep(0.3)

        t = await asyncio.wait_for(done(), 180)
    finally:
        for c in channels:
            await c.close()
    assert len(kills) == 3 and len(t.rounds) == ROUNDS
    live = [n.url for n in cluster.nodes if n.running]
    events = await _events(live, tid)
    ids = [tb.match_id for e in events if isinstance(e, RoundStarted) for tb in e.tables]
    assert len(ids) == len(set(ids)) == ROUNDS * PLAYERS // 2
    assert {f"match.{m}" for m in ids} == await _match_subjects(live)
    recorded = [e.match_id for e in events if isinstance(e, MatchResultRecorded)]
    assert sorted(recorded) == sorted(ids)
    same_as_undisturbed(events)
    print(f"\n{PLAYERS}-player Swiss, {ROUNDS} rounds; killed {', '.join(kills)}")
