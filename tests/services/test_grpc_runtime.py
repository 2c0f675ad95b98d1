"""Every service process runs gRPC with the setting ``services/__init__.py``
makes, and an operator's own ``GRPC_EXPERIMENTS`` wins."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

import services

_PROBE = (
    "import os, sys; import services; import grpc; "
    "print(os.environ.get('GRPC_EXPERIMENTS', '<unset>'))"
)


def _seen(env_value: str | None) -> str:
    env = {k: v for k, v in os.environ.items() if k != "GRPC_EXPERIMENTS"}
    if env_value is not None:
        env["GRPC_EXPERIMENTS"] = env_value
    done = subprocess.run(
        [sys.executable, "-c", _PROBE], env=env, capture_output=True, text=True, timeout=60
    )
    assert done.returncode == 0, done.stderr
    return done.stdout.strip()


def test_a_service_process_runs_grpc_on_its_polling_engine():
    assert services.GRPC_EXPERIMENTS == "-event_engine_client,-event_engine_listener"
    assert _seen(None) == services.GRPC_EXPERIMENTS


@pytest.mark.parametrize("value", ["", "-event_engine_client"])
def test_an_operators_setting_is_kept(value):
    assert _seen(value) == value


def test_grpc_accepts_the_setting():
    """grpcio names every experiment it does not know on stderr: this one it knows."""
    env = {k: v for k, v in os.environ.items() if k != "GRPC_EXPERIMENTS"}
    probe = (
        "import services, grpc, asyncio\n"
        "async def main():\n"
        "    server = grpc.aio.server()\n"
        "    server.add_insecure_port('127.0.0.1:0')\n"
        "    await server.start()\n"
        "    await server.stop(None)\n"
        "asyncio.run(main())\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", probe], env=env, capture_output=True, text=True, timeout=60
    )
    assert done.returncode == 0, done.stderr
    assert "Unknown experiment" not in done.stderr
