"""Health, reflection, and a graceful stop of the real process."""

from __future__ import annotations

import asyncio
import json
import os
import signal
import subprocess
import sys
import urllib.request

import grpc
from grpc_health.v1 import health_pb2, health_pb2_grpc
from grpc_reflection.v1alpha import reflection_pb2, reflection_pb2_grpc

from services.common.auth import Tokens, bearer_metadata
from tabletop.match.v1 import match_pb2, match_pb2_grpc


async def test_health_and_reflection(service) -> None:
    health = health_pb2_grpc.HealthStub(service.channel)
    for name in ("", "tabletop.match.v1.MatchService"):
        reply = await health.Check(health_pb2.HealthCheckRequest(service=name))
        assert reply.status == health_pb2.HealthCheckResponse.SERVING
    stub = reflection_pb2_grpc.ServerReflectionStub(service.channel)
    call = stub.ServerReflectionInfo()
    await call.write(reflection_pb2.ServerReflectionRequest(list_services=""))
    reply = await call.read()
    await call.done_writing()
    names = {s.name for s in reply.list_services_response.service}
    assert {"tabletop.match.v1.MatchService", "tabletop.match.v1.AuthService"} <= names
    assert "grpc.health.v1.Health" in names


async def test_metrics_are_served(start_service) -> None:
    service = await start_service(metrics_port=0)
    p = service.player("guest:a")
    match_id = await p.create("tic_tac_toe", ["guest:a", "guest:b"])
    await p.submit(match_id, '{"type": "place_mark", "cell": 4}')
    url = f"http://127.0.0.1:{service.server.metrics_port}/metrics"
    text = await asyncio.to_thread(lambda: urllib.request.urlopen(url, timeout=5).read().decode())
    assert 'tabletop_match_submit_seconds_count{result="active"}' in text
    assert "tabletop_match_created_total" in text


async def test_stop_turns_health_not_serving(start_service) -> None:
    service = await start_service()
    health = health_pb2_grpc.HealthStub(service.channel)
    await service.server.grpc.health.enter_graceful_shutdown()
    reply = await health.Check(health_pb2.HealthCheckRequest(service=""))
    assert reply.status == health_pb2.HealthCheckResponse.NOT_SERVING


def spawn(settings, lines: list[str] | None = None, **env_changes) -> tuple[subprocess.Popen, str]:
    env = {
        **os.environ,
        "TABLETOP_NATS_URL": settings.nats_url,
        "TABLETOP_REDIS_URL": settings.redis_url,
        "TABLETOP_JWT_SECRET": settings.auth.secret,
        "TABLETOP_MATCH_PORT": "0",
        "TABLETOP_MATCH_GRACE_S": "1",
        "TABLETOP_LOG_FORMAT": "json",
        **env_changes,
    }
    proc = subprocess.Popen(
        [sys.executable, "-m", "services.match"],
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    assert proc.stdout is not None
    line = ""
    while "listening on" not in line:
        line = proc.stdout.readline()
        assert line, "the service exited before listening"
        if lines is not None:
            lines.append(line)
    return proc, json.loads(line)["address"]


def test_every_start_up_line_is_json_and_the_dev_secret_is_warned_of(settings) -> None:
    lines: list[str] = []
    proc, address = spawn(settings, lines, TABLETOP_JWT_SECRET="")
    try:
        records = [json.loads(line) for line in lines]  # every line is JSON
        warned = [r for r in records if r["event"] == "dev_jwt_secret"]
        assert warned and warned[0]["level"] == "warning", records
        listening = records[-1]
        assert listening["event"] == "listening" and listening["address"] == address
        proc.send_signal(signal.SIGTERM)
        rest, _ = proc.communicate(timeout=15)
        for line in rest.splitlines():
            json.loads(line)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()


async def test_the_process_restarted_mid_game_loses_nothing(settings) -> None:
    tokens = Tokens(settings.auth)
    meta = {p: bearer_metadata(tokens.issue(p)) for p in ("guest:a", "guest:b")}
    moves = [("guest:a", 0), ("guest:b", 3), ("guest:a", 1), ("guest:b", 4), ("guest:a", 2)]
    match_id = ""
    for first, last in ((0, 2), (2, 5)):  # two moves, restart, the rest
        proc, address = spawn(settings)
        try:
            async with grpc.aio.insecure_channel(address) as channel:
                stub = match_pb2_grpc.MatchServiceStub(channel)
                if not match_id:
                    match_id = (
                        await stub.CreateMatch(
                            match_pb2.CreateMatchRequest(
                                game="tic_tac_toe", players=["guest:a", "guest:b"]
                            ),
                            metadata=meta["guest:a"],
                        )
                    ).match_id
                for player, cell in moves[first:last]:
                    reply = await stub.SubmitMove(
                        match_pb2.SubmitMoveRequest(
                            match_id=match_id, move_json=f'{{"type": "place_mark", "cell": {cell}}}'
                        ),
                        metadata=meta[player],
                    )
            proc.send_signal(signal.SIGTERM)
            assert proc.wait(timeout=15) == 0
        finally:
            if proc.poll() is None:
                proc.kill()
                proc.wait()
    assert reply.version == 5 and reply.status == match_pb2.MATCH_STATUS_FINISHED
    assert list(reply.outcome.ranks) == [1, 2]
