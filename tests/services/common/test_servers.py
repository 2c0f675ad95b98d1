"""The server helpers start real servers that answer, and restart them in place."""

from __future__ import annotations

import os
from pathlib import Path

import nats
import pytest
import redis.asyncio as redis

from services.common.servers import NatsServer, ValkeyServer, free_port, nats_gomaxprocs


def test_free_port_is_bindable() -> None:
    port = free_port()
    assert 1024 <= port < 65536


async def test_nats_server_has_jetstream_and_keeps_it_across_restart(
    nats_server: NatsServer,
) -> None:
    nc = await nats.connect(nats_server.url)
    js = nc.jetstream()
    await js.add_stream(name="T", subjects=["t.>"])
    ack = await js.publish("t.1", b"hello")
    assert ack.seq == 1
    await nc.close()

    port = nats_server.port
    nats_server.restart()
    assert nats_server.port == port

    nc = await nats.connect(nats_server.url)
    msg = await nc.jetstream().get_msg("T", seq=1)
    assert msg.data == b"hello"
    await nc.close()


async def test_valkey_server_answers(valkey_server: ValkeyServer) -> None:
    client = redis.from_url(valkey_server.url)
    await client.set("k", b"v")
    assert await client.get("k") == b"v"
    await client.aclose()


def test_close_removes_a_temporary_folder() -> None:
    server = NatsServer().start()
    folder = server.data_dir
    assert server.running and folder.exists()
    server.close()
    assert not server.running and not folder.exists()
    v = ValkeyServer().start()
    folder = v.data_dir
    v.close()
    assert not folder.exists()


def _environ(pid: int | None) -> dict[str, str]:
    raw = Path(f"/proc/{pid}/environ").read_bytes().decode()
    return dict(kv.split("=", 1) for kv in raw.split("\0") if "=" in kv)


@pytest.mark.parametrize(("cpus", "procs"), [(1, 1), (2, 1), (4, 1), (8, 2), (16, 4)])
def test_nats_gets_a_quarter_of_the_cores_at_least_one(cpus: int, procs: int) -> None:
    assert nats_gomaxprocs(cpus) == procs


@pytest.mark.skipif(not Path("/proc/self/environ").exists(), reason="reads /proc")
def test_nats_server_runs_with_its_gomaxprocs(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("GOMAXPROCS", raising=False)
    with NatsServer() as server:
        assert _environ(server.pid)["GOMAXPROCS"] == str(nats_gomaxprocs())
        assert _environ(server.pid)["PATH"] == os.environ["PATH"]  # the rest is inherited


@pytest.mark.skipif(not Path("/proc/self/environ").exists(), reason="reads /proc")
def test_an_operators_gomaxprocs_is_kept(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("GOMAXPROCS", "3")
    with NatsServer() as server:
        assert _environ(server.pid)["GOMAXPROCS"] == "3"
