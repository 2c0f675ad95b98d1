"""The rules service's optional token check (TABLETOP_RULES_REQUIRE_SERVICE_TOKEN)."""

from __future__ import annotations

import grpc
import pytest
from grpc_health.v1 import health_pb2, health_pb2_grpc

from services.common.auth import AuthSettings, Tokens, bearer_metadata
from services.common.errors import error_info
from services.rules.server import build_server
from services.rules.settings import RulesSettings
from tabletop.rules.v1 import rules_pb2, rules_pb2_grpc

SECRET = "rules-test-secret-0123456789-0123456789"
TOKENS = Tokens(AuthSettings(secret=SECRET))


@pytest.fixture
async def guarded():
    settings = RulesSettings(
        host="127.0.0.1",
        port=0,
        grace_seconds=0.1,
        require_service_token=True,
        auth=AuthSettings(secret=SECRET),
    )
    server = build_server(settings)
    await server.start()
    channel = grpc.aio.insecure_channel(f"127.0.0.1:{server.port}")
    yield channel
    await channel.close()
    await server.stop(0.1)


async def _refused(call, code, reason):
    with pytest.raises(grpc.aio.AioRpcError) as e:
        await call
    assert e.value.code() == code, e.value.details()
    assert error_info(e.value).reason == reason


async def test_calls_need_a_service_token(guarded) -> None:
    stub = rules_pb2_grpc.RulesServiceStub(guarded)
    new_game = rules_pb2.NewGameRequest(game="tic_tac_toe", players=2)
    await _refused(stub.NewGame(new_game), grpc.StatusCode.UNAUTHENTICATED, "missing_token")
    await _refused(
        stub.NewGame(new_game, metadata=bearer_metadata("forged")),
        grpc.StatusCode.UNAUTHENTICATED,
        "invalid_token",
    )
    await _refused(
        stub.ListGames(rules_pb2.ListGamesRequest(), metadata=bearer_metadata(TOKENS.issue("p"))),
        grpc.StatusCode.PERMISSION_DENIED,
        "service_only",
    )
    service = bearer_metadata(TOKENS.issue("service:match", role="service"))
    reply = await stub.NewGame(new_game, metadata=service)
    assert list(reply.status.awaiting) == [0]


async def test_health_stays_open(guarded) -> None:
    health = health_pb2_grpc.HealthStub(guarded)
    reply = await health.Check(health_pb2.HealthCheckRequest(service=""))
    assert reply.status == health_pb2.HealthCheckResponse.SERVING


def test_the_setting_is_read_from_the_environment() -> None:
    env = {"TABLETOP_RULES_REQUIRE_SERVICE_TOKEN": "1", "TABLETOP_JWT_SECRET": SECRET}
    s = RulesSettings.from_env(env)
    assert s.require_service_token and s.auth.secret == SECRET
    assert not RulesSettings.from_env(
        {"TABLETOP_RULES_REQUIRE_SERVICE_TOKEN": "0"}
    ).require_service_token
    assert not RulesSettings.from_env({}).require_service_token
    with pytest.raises(ValueError, match="REQUIRE_SERVICE_TOKEN"):
        RulesSettings.from_env({"TABLETOP_RULES_REQUIRE_SERVICE_TOKEN": "maybe"})
