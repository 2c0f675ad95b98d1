"""Fixtures that start real servers on free ports in temporary folders."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from services.common.servers import NatsServer, ValkeyServer


@pytest.fixture
def nats_server(tmp_path) -> Iterator[NatsServer]:
    """A fresh nats-server with JetStream (file store under ``tmp_path``)."""
    server = NatsServer(data_dir=tmp_path / "nats")
    with server:
        yield server


@pytest.fixture
def valkey_server(tmp_path) -> Iterator[ValkeyServer]:
    """A fresh valkey-server (in memory)."""
    server = ValkeyServer(data_dir=tmp_path / "valkey")
    with server:
        yield server
