"""The rules service as an operator and a client developer meet it: health,
reflection, ListGames, views, the log line, SIGTERM and --workers."""

import json
import os
import signal
import time
import urllib.request

import grpc
import pytest
from grpc_health.v1 import health_pb2, health_pb2_grpc
from grpc_reflection.v1alpha import reflection_pb2, reflection_pb2_grpc

from engine_core.registry import default_registry
from services.rules.process import RulesProcess
from tabletop.rules.v1 import rules_pb2, rules_pb2_grpc
from tests.waiting import wait_until

RULES = "tabletop.rules.v1.RulesService"


def test_health_reports_serving(health):
    for service in ("", RULES):
        reply = health.Check(health_pb2.HealthCheckRequest(service=service), timeout=5)
        assert reply.status == health_pb2.HealthCheckResponse.SERVING


def test_reflection_lists_the_services(channel):
    stub = reflection_pb2_grpc.ServerReflectionStub(channel)
    replies = list(
        stub.ServerReflectionInfo(
            iter([reflection_pb2.ServerReflectionRequest(list_services="")]), timeout=5
        )
    )
    names = {s.name for s in replies[0].list_services_response.service}
    assert {RULES, "grpc.health.v1.Health", "grpc.reflection.v1alpha.ServerReflection"} <= names


def test_list_games_describes_every_game_with_schemas(stub):
    reply = stub.ListGames(rules_pb2.ListGamesRequest(), timeout=5)
    registry = default_registry()
    assert [g.info.id for g in reply.games] == registry.names()
    for g in reply.games:
        game = registry.get(g.info.id)
        assert (g.info.min_players, g.info.max_players) == (game.min_players, game.max_players)
        assert g.info.rules_version == game.rules_version and g.info.title == game.title
        for text in (g.schemas.options, g.schemas.move, g.schemas.event, g.schemas.view):
            assert "$defs" in json.loads(text) or "type" in json.loads(text)
    ttt = next(g for g in reply.games if g.info.id == "tic_tac_toe")
    move_schema = json.loads(ttt.schemas.move)
    assert move_schema["$defs"]["PlaceMark"]["properties"]["type"]["enum"] == ["place_mark"]


def test_new_game_view_for_seat_and_spectator(stub):
    new = stub.NewGame(rules_pb2.NewGameRequest(game="tic_tac_toe", players=2), timeout=5)
    assert [json.loads(e)["type"] for e in new.events] == ["game_started"]
    assert len(new.entropy) == 32  # drawn by the server when none was sent
    assert list(new.status.awaiting) == [0] and not new.status.HasField("outcome")
    for request in (
        rules_pb2.ViewRequest(game="tic_tac_toe", state=new.state, seat=1),
        rules_pb2.ViewRequest(game="tic_tac_toe", state=new.state),
    ):
        view = json.loads(stub.View(request, timeout=5).view)
        assert view["board"] == [-1] * 9
    moves = stub.LegalMoves(
        rules_pb2.LegalMovesRequest(game="tic_tac_toe", state=new.state, seat=0), timeout=5
    )
    assert len(moves.moves) == 9 and moves.texts[4] == "place_mark cell=4"
    assert (
        stub.LegalMoves(
            rules_pb2.LegalMovesRequest(game="tic_tac_toe", state=new.state, seat=1), timeout=5
        ).moves
        == []
    )


def test_one_log_line_per_call_with_game_seat_move_outcome(stub, rules_process):
    new = stub.NewGame(rules_pb2.NewGameRequest(game="tic_tac_toe", players=2), timeout=5)
    stub.ApplyMove(
        rules_pb2.ApplyMoveRequest(
            game="tic_tac_toe", state=new.state, seat=0, move='{"type":"place_mark","cell":4}'
        ),
        timeout=5,
    )

    def applied() -> list[dict]:  # the server writes the line just after it answered
        lines = [json.loads(line) for line in rules_process.log_lines() if line.startswith("{")]
        return [
            line
            for line in lines
            if line.get("event") == "rpc" and line["method"].endswith("/ApplyMove")
            and line["code"] == "OK"
        ]  # fmt: skip

    last = wait_until(applied, what="the ApplyMove log line")[-1]
    assert last["game"] == "tic_tac_toe" and last["seat"] == 0
    assert last["move"] == "place_mark" and last["outcome"] == "ongoing"
    assert last["duration_ms"] >= 0 and last["service"] == "rules"
    lines = [json.loads(line) for line in rules_process.log_lines() if line.startswith("{")]
    assert not any("state" in line or "entropy" in line for line in lines)


def _health_status(address: str) -> int:
    with grpc.insecure_channel(address) as ch:
        return (
            health_pb2_grpc.HealthStub(ch)
            .Check(health_pb2.HealthCheckRequest(service=RULES), timeout=2)
            .status
        )


def _metrics(port: int) -> str:
    with urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=5) as reply:
        return reply.read().decode()


def _new_game_and_refusal(address: str) -> None:
    with grpc.insecure_channel(address) as ch:
        stub = rules_pb2_grpc.RulesServiceStub(ch)
        stub.NewGame(rules_pb2.NewGameRequest(game="tic_tac_toe", players=2), timeout=5)
        with pytest.raises(grpc.RpcError):
            stub.NewGame(rules_pb2.NewGameRequest(game="tic_tac_toe", players=9), timeout=5)


def test_sigterm_goes_not_serving_then_exits_cleanly():
    env = {
        "TABLETOP_RULES_DRAIN_SECONDS": "5",
        "TABLETOP_RULES_GRACE_SECONDS": "1",
        "TABLETOP_RULES_METRICS_PORT": "0",
    }
    with RulesProcess(workers=1, env=env) as proc:
        assert _health_status(proc.address) == health_pb2.HealthCheckResponse.SERVING
        _new_game_and_refusal(proc.address)
        # The counters are incremented as the answer leaves: wait for them.
        ok = 'tabletop_rules_rpc_seconds_count{code="OK",game="tic_tac_toe",method="NewGame"} 1.0'
        refused = 'tabletop_rules_rejections_total{method="NewGame",reason="bad_player_count"} 1.0'
        wait_until(lambda: ok in _metrics(proc.metrics_port), what=ok)
        wait_until(lambda: refused in _metrics(proc.metrics_port), what=refused)
        proc.proc.terminate()
        # Health turns NOT_SERVING while the server drains (5 s), before it stops;
        # poll rather than sleep a fixed time, which a loaded machine can outrun.
        status = health_pb2.HealthCheckResponse.SERVING
        deadline = time.monotonic() + 4
        while status == health_pb2.HealthCheckResponse.SERVING and time.monotonic() < deadline:
            time.sleep(0.05)
            status = _health_status(proc.address)
        assert status == health_pb2.HealthCheckResponse.NOT_SERVING
        assert proc.proc.wait(20) == 0
        events = [json.loads(x).get("event") for x in proc.log_lines() if x.startswith("{")]
        assert events.index("signal") < events.index("stopping") < events.index("stopped")


@pytest.mark.skipif(not hasattr(__import__("socket"), "SO_REUSEPORT"), reason="no SO_REUSEPORT")
def test_workers_share_one_port():
    with RulesProcess(workers=2, env={"TABLETOP_RULES_METRICS_PORT": "0"}) as proc:
        for _ in range(24):  # new connections: the kernel spreads them over the workers
            with grpc.insecure_channel(
                proc.address, options=[("grpc.use_local_subchannel_pool", 1)]
            ) as ch:
                reply = ch.unary_unary(
                    f"/{RULES}/ListGames",
                    request_serializer=rules_pb2.ListGamesRequest.SerializeToString,
                    response_deserializer=rules_pb2.ListGamesResponse.FromString,
                )(rules_pb2.ListGamesRequest(), timeout=10)
                assert reply.games

        def served() -> list[dict]:  # each worker logs its calls just after answering
            lines = [json.loads(x) for x in proc.log_lines() if x.startswith("{")]
            return [x for x in lines if x.get("event") == "rpc" and "ListGames" in x["method"]]

        wait_until(lambda: len(served()) == 24, what="24 ListGames log lines")
        pids = {line["pid"] for line in served()}
        assert len(pids) == 2
        # the parent serves the sum of both workers' metrics
        total = 'tabletop_rules_rpc_seconds_count{code="OK",game="",method="ListGames"} 24.0'
        wait_until(lambda: total in _metrics(proc.metrics_port), what=total)
        # a worker that dies is replaced, and the port keeps answering
        victim = min(pids)
        os.kill(victim, signal.SIGKILL)
        for _ in range(200):
            listening = [
                json.loads(x)
                for x in proc.log_lines()
                if x.startswith("{") and '"listening"' in x and '"worker"' in x
            ]
            if len({line["pid"] for line in listening}) == 3:
                break
            time.sleep(0.05)
        assert len({line["pid"] for line in listening}) == 3
        assert any('"worker_died"' in x for x in proc.log_lines())
        for _ in range(6):
            assert _health_status(proc.address) == health_pb2.HealthCheckResponse.SERVING
        assert proc.stop() == 0
