"""The rules service's /metrics: every RPC listed from start-up (also with
several workers), then counted by status once called."""

from __future__ import annotations

import struct
import time
import urllib.request

import grpc
import pytest

from services.rules.process import RulesProcess
from tabletop.rules.v1 import rules_pb2, rules_pb2_grpc

SERVICE = "tabletop.rules.v1.RulesService"


def scrape(port: int) -> dict[str, float]:
    body = urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=5).read().decode()
    out = {}
    for line in body.splitlines():
        if line and not line.startswith("#"):
            name, _, value = line.rpartition(" ")
            out[name] = float(value)
    return out


def series(method: str, code: str) -> str:
    return f'tabletop_rpc_seconds_count{{code="{code}",method="{method}",service="{SERVICE}"}}'


def wait_for(port: int, name: str, value: float, timeout: float = 10.0) -> dict[str, float]:
    deadline = time.monotonic() + timeout
    while True:
        got = scrape(port)
        if got.get(name) == value:
            return got
        if time.monotonic() > deadline:
            raise AssertionError(f"{name} = {got.get(name)}, wanted {value}")
        time.sleep(0.05)


@pytest.mark.parametrize("workers", [1, 2])
def test_every_rpc_is_listed_at_start_and_counted_by_status(workers: int) -> None:
    env = {"TABLETOP_RULES_METRICS_PORT": "0"}
    with RulesProcess(workers=workers, env=env) as rules:
        port = rules.metrics_port
        assert port is not None
        # before any call: every method is there, at zero
        got = wait_for(port, series("NewGame", "OK"), 0.0)
        for method in ("ListGames", "ApplyMove", "LegalMoves", "View", "Outcome", "Fold"):
            assert got[series(method, "OK")] == 0.0, method
        assert any(k.startswith("tabletop_rules_rpc_seconds_count") for k in got)

        with grpc.insecure_channel(rules.address) as channel:
            stub = rules_pb2_grpc.RulesServiceStub(channel)
            stub.ListGames(rules_pb2.ListGamesRequest(), timeout=10)
            with pytest.raises(grpc.RpcError) as refused:
                stub.NewGame(rules_pb2.NewGameRequest(game="chess", players=2), timeout=10)
            assert refused.value.code() is grpc.StatusCode.NOT_FOUND
        wait_for(port, series("ListGames", "OK"), 1.0)
        got = wait_for(port, series("NewGame", "NOT_FOUND"), 1.0)
        assert got[series("NewGame", "OK")] == 0.0
        # health probes are not RPCs of the service
        assert not any("grpc.health" in k for k in got if k.startswith("tabletop_rpc"))


def test_a_worker_file_not_yet_sized_does_not_fail_the_scrape(tmp_path) -> None:
    """A worker creates its metrics file, then sizes it: a scrape in between
    sees 0 bytes. The parent's collector serves the other workers' sums."""
    from prometheus_client import CollectorRegistry, generate_latest
    from prometheus_client.mmap_dict import MmapedDict, mmap_key
    from prometheus_client.multiprocess import MultiProcessCollector

    from services.rules.server import _WorkerFiles

    sized = MmapedDict(str(tmp_path / "counter_1.db"))
    sized.write_value(mmap_key("jobs_total", "jobs_total", [], [], "jobs"), 3.0, 0.0)
    sized.close()
    (tmp_path / "counter_2.db").touch()  # the other worker, between create and size

    upstream = CollectorRegistry()
    MultiProcessCollector(upstream, path=str(tmp_path))
    with pytest.raises(struct.error):  # what the library alone does with it
        generate_latest(upstream)

    ours = CollectorRegistry()
    _WorkerFiles(ours, path=str(tmp_path))
    assert "jobs_total 3.0" in generate_latest(ours).decode()
