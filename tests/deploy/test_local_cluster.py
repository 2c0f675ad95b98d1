"""The deployment's promise, on one machine: a 3-node NATS JetStream cluster
(three nats-server processes routed on loopback), two match service replicas
and two rules service replicas, each a real ``python -m services.<name>``
process, with client-side round robin in front of both tiers.

Matches are played through the replicas. In the middle, the node leading the
MATCHES stream is killed (SIGKILL), and later one match replica too. Then:
every match finishes; every move the client saw accepted is in the stream at
the version it was told; no move is applied twice (retries carry the same
idempotency key); the stream folds to the state the client kept; both rules
replicas and both match replicas served calls.
"""

from __future__ import annotations

import asyncio
import json
import time
from pathlib import Path
from typing import Any

import grpc
import msgspec
import nats
import pytest

pytest.importorskip("services.match.server", reason="the match service is not in this tree")
pytest.importorskip("services.rules.server", reason="the rules service is not in this tree")

from engine_core.bots import RandomBot
from engine_core.decider import fold
from engine_core.registry import default_registry
from engine_core.rng import Rng
from services.common.auth import AuthSettings, Tokens, bearer_metadata
from services.common.cluster import NatsCluster
from services.common.servers import ValkeyServer
from services.match.model import decode_commit
from tabletop.match.v1 import match_pb2, match_pb2_grpc
from tests.deploy.processes import ServiceProcess
from tests.waiting import wait_until

SECRET = "local-cluster-test-secret-0123456789abcdef"
GAME = "tic_tac_toe"
MATCHES = 24
CONCURRENCY = 8
RETRYABLE = {
    grpc.StatusCode.UNAVAILABLE,
    grpc.StatusCode.DEADLINE_EXCEEDED,
    grpc.StatusCode.ABORTED,
}
ROUND_ROBIN = json.dumps({"loadBalancingConfig": [{"round_robin": {}}]})
_json = msgspec.json.Encoder()


def _targets(processes: list[ServiceProcess]) -> str:
    """A gRPC target naming every replica: the round_robin policy spreads
    calls over them and skips those that are down (as `dns:///` does with
    the addresses of a headless Service)."""
    return "ipv4:" + ",".join(p.address for p in processes)


class Log:
    """What the client saw: every accepted move, every retry, every error."""

    def __init__(self) -> None:
        self.accepted: dict[
            str, list[tuple[int, int, str, str]]
        ] = {}  # match -> (version, seat, move, key)
        self.retries: dict[str, int] = {}
        self.moves = 0

    def retry(self, code: grpc.StatusCode) -> None:
        self.retries[code.name] = self.retries.get(code.name, 0) + 1


async def _call(log: Log, fn: Any, request: Any, metadata: Any, deadline_s: float = 30.0) -> Any:
    """One logical call, retried with the same request (same idempotency key)
    while replicas or NATS nodes come and go."""
    deadline = time.monotonic() + deadline_s
    while True:
        try:
            return await fn(request, metadata=metadata, timeout=5.0, wait_for_ready=True)
        except grpc.aio.AioRpcError as e:
            if e.code() not in RETRYABLE or time.monotonic() > deadline:
                raise
            log.retry(e.code())
            await asyncio.sleep(0.2)


async def _play(
    n: int, stub: Any, tokens: Tokens, log: Log, game: Any, on_move: Any
) -> tuple[str, Any]:
    players = [f"guest:m{n}-p{s}" for s in range(2)]
    token = {p: bearer_metadata(tokens.issue(p)) for p in players}
    created = await _call(
        log,
        stub.CreateMatch,
        match_pb2.CreateMatchRequest(game=GAME, players=players, idempotency_key=f"create-{n}"),
        token[players[0]],
    )
    match_id = created.match_id
    info = await _call(
        log, stub.GetMatch, match_pb2.GetMatchRequest(match_id=match_id), token[players[0]]
    )
    # Seats are assigned by the service; each seat moves with its player's token.
    meta = {s.seat: token[s.player] for s in info.seats}
    # The client keeps the truth by folding the events it is sent (tic-tac-toe
    # has no secrets, so nothing is redacted away).
    codec = game.codec()
    state = None
    async for commit in _replay(log, stub, match_id, meta[0]):
        state = fold(game, [codec.event_json.decode(e) for e in commit.events_json], state)
    assert info.version == 0
    rng = Rng(n.to_bytes(8, "big"))
    bot = RandomBot()
    log.accepted[match_id] = []
    k = 0
    while game.outcome(state) is None:
        (seat,) = game.awaiting(state)
        move = bot.choose(game, state, seat, rng)
        move_json = _json.encode(move).decode()
        key = f"{match_id}-{k}"
        reply = await _call(
            log,
            stub.SubmitMove,
            match_pb2.SubmitMoveRequest(
                match_id=match_id, move_json=move_json, idempotency_key=key
            ),
            meta[seat],
        )
        assert reply.seat == seat
        assert reply.version == k + 1, "the accepted version skipped or repeated"
        log.accepted[match_id].append((reply.version, seat, move_json, key))
        state = fold(game, [codec.event_json.decode(e) for e in reply.events_json], state)
        k += 1
        log.moves += 1
        await on_move()
    assert reply.status == match_pb2.MATCH_STATUS_FINISHED
    return match_id, state


async def _replay(log: Log, stub: Any, match_id: str, metadata: Any) -> Any:
    deadline = time.monotonic() + 30
    while True:
        try:
            commits = []
            async for c in stub.ReplayMatch(
                match_pb2.ReplayMatchRequest(match_id=match_id), metadata=metadata, timeout=10
            ):
                commits.append(c)
            for c in commits:
                yield c
            return
        except grpc.aio.AioRpcError as e:
            if e.code() not in RETRYABLE or time.monotonic() > deadline:
                raise
            log.retry(e.code())
            await asyncio.sleep(0.2)


async def _stream_commits(urls: list[str], match_id: str) -> list[Any]:
    """The match's commits as stored in JetStream, straight from the cluster."""
    nc = await nats.connect(urls)
    try:
        js = nc.jetstream(timeout=10)
        out, seq = [], 0
        while True:
            try:
                msg = await js.get_msg(
                    "MATCHES", seq=seq + 1, subject=f"match.{match_id}", next=True
                )
            except nats.js.errors.NotFoundError:
                return out
            seq = msg.seq
            out.append(decode_commit(msg.data))
    finally:
        await nc.close()


async def _stream_leader(urls: list[str]) -> str:
    nc = await nats.connect(urls)
    try:
        info = await nc.jetstream(timeout=10).stream_info("MATCHES")
        assert info.config.num_replicas == 3
        assert info.cluster is not None and info.cluster.leader
        return info.cluster.leader
    finally:
        await nc.close()


def _served(p: ServiceProcess, method: str) -> int:
    return sum(1 for line in p.log_tail(10**6).splitlines() if method in line)


@pytest.fixture
def stack(tmp_path: Path):  # type: ignore[no-untyped-def]
    logs = tmp_path / "logs"
    logs.mkdir()
    started: list[ServiceProcess] = []
    with (
        NatsCluster(3, data_dir=tmp_path / "nats") as cluster,
        ValkeyServer(data_dir=tmp_path / "valkey") as valkey,
    ):
        try:
            common = {"TABLETOP_LOG_FORMAT": "json", "TABLETOP_LOG_LEVEL": "INFO"}
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
                        # Each replica starts on a different node and learns
                        # the others from the cluster.
                        "TABLETOP_NATS_URL": cluster.nodes[i].url,
                        "TABLETOP_REDIS_URL": valkey.url,
                        "TABLETOP_RULES_ADDR": _targets(rules),
                        "TABLETOP_MATCH_STREAM_REPLICAS": "3",
                        "TABLETOP_MATCH_GRACE_S": "1",
                        "TABLETOP_JWT_SECRET": SECRET,
                    },
                    r"listening on [0-9.]+:(\d+)",
                    logs,
                )
                for i in range(2)
            ]
            for p in match:
                started.append(p.start(timeout=60))
            yield cluster, rules, match
        finally:
            for p in started:
                p.kill()


@pytest.mark.timeout(180)
async def test_matches_survive_a_lost_nats_node_and_a_lost_match_replica(stack) -> None:  # type: ignore[no-untyped-def]
    cluster, rules, match = stack
    game = default_registry().get(GAME)
    tokens = Tokens(AuthSettings(secret=SECRET))
    log = Log()
    leader = await _stream_leader(cluster.urls)
    total_estimate = MATCHES * 7
    events: list[str] = []

    async def on_move() -> None:
        # Faults land mid-play, with matches in flight on both replicas.
        if log.moves == total_estimate // 4 and not events:
            cluster.node(leader).stop(kill=True)
            events.append(f"killed NATS node {leader} (MATCHES leader) at move {log.moves}")
        elif log.moves == total_estimate // 2 and len(events) == 1:
            match[1].kill()
            events.append(f"killed {match[1].name} at move {log.moves}")

    channel = grpc.aio.insecure_channel(
        _targets(match), options=[("grpc.service_config", ROUND_ROBIN)]
    )
    try:
        stub = match_pb2_grpc.MatchServiceStub(channel)
        gate = asyncio.Semaphore(CONCURRENCY)

        async def one(n: int) -> tuple[str, Any]:
            async with gate:
                return await _play(n, stub, tokens, log, game, on_move)

        t0 = time.monotonic()
        finished = await asyncio.gather(*(one(n) for n in range(MATCHES)))
        elapsed = time.monotonic() - t0
    finally:
        await channel.close()

    assert len(events) == 2, f"the faults did not happen mid-play: {events}"
    assert not cluster.node(leader).running and not match[1].running

    # Every match finished, and the stream holds exactly what the client saw.
    live = [n.url for n in cluster.nodes if n.running]
    new_leader = await _stream_leader(live)
    assert new_leader != leader
    for match_id, state in finished:
        assert game.outcome(state) is not None
        commits = await _stream_commits(live, match_id)
        accepted = log.accepted[match_id]
        # Version 0 is the creation; then one commit per accepted move, in order:
        # none lost, none applied twice.
        assert [c.version for c in commits] == list(range(len(accepted) + 1))
        for (version, seat, move_json, _key), c in zip(accepted, commits[1:], strict=True):
            assert (c.version, c.seat) == (version, seat)
            assert msgspec.json.decode(c.move) == msgspec.json.decode(move_json)
        keys = [c.key for c in commits[1:]]
        assert len(set(keys)) == len(keys), "an idempotency key was applied twice"
        folded = None
        for c in commits:
            folded = fold(game, [game.codec().event_json.decode(e) for e in c.events], folded)
        assert folded == state

    print(
        f"\n{MATCHES} matches, {log.moves} moves in {elapsed:.1f}s; {'; '.join(events)}; "
        f"retries {log.retries}; MATCHES leader {leader} -> {new_leader}"
    )

    # Both tiers spread the calls: every replica served some.
    # (a log line is written just after its answer: wait for it)
    for p in rules:
        wait_until(lambda p=p: _served(p, "ApplyMove") > 0, what=f"ApplyMove on {p.name}")
    for p in match:
        wait_until(lambda p=p: _served(p, "SubmitMove") > 0, what=f"SubmitMove on {p.name}")
