"""A real rules service process on a free port, shared by the module's tests."""

from collections.abc import Iterator

import grpc
import pytest
from grpc_health.v1 import health_pb2, health_pb2_grpc

from services.rules.process import RulesProcess
from tabletop.rules.v1 import rules_pb2_grpc


@pytest.fixture(scope="module")
def rules_process() -> Iterator[RulesProcess]:
    with RulesProcess(workers=1) as proc:
        yield proc


@pytest.fixture(scope="module")
def rules_address(rules_process: RulesProcess) -> str:
    return rules_process.address


@pytest.fixture(scope="module")
def channel(rules_address: str) -> Iterator[grpc.Channel]:
    with grpc.insecure_channel(rules_address) as ch:
        yield ch


@pytest.fixture(scope="module")
def stub(channel: grpc.Channel) -> rules_pb2_grpc.RulesServiceStub:
    return rules_pb2_grpc.RulesServiceStub(channel)


@pytest.fixture(scope="module")
def health(channel: grpc.Channel) -> health_pb2_grpc.HealthStub:
    return health_pb2_grpc.HealthStub(channel)


def assert_serving(health: health_pb2_grpc.HealthStub) -> None:
    reply = health.Check(health_pb2.HealthCheckRequest(service=""), timeout=5)
    assert reply.status == health_pb2.HealthCheckResponse.SERVING
