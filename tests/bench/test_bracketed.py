"""Baselines measured before and after what is compared with them, and
the ratios to the mean of the two: boardgame.io around our stack's runs of
each G (``bench.boardgameio.bracketed``), the storage floor around the
end-to-end sections (``bench.floor.bracketed``)."""

from __future__ import annotations

from bench import floor
from bench.boardgameio import bracketed


def _run(moves_per_s: float, p50: float, server_cpu: float, client_cpu: float) -> dict:
    return {
        "loops": 10,
        "moves": int(moves_per_s * 5),
        "games": int(moves_per_s * 5) // 9,
        "seconds": 5.0,
        "moves_per_s": moves_per_s,
        "latency": {"n": int(moves_per_s * 5), "p50_ms": p50, "p99_ms": 4 * p50},
        "cpu_ms_per_move": {"server": server_cpu, "total_servers": server_cpu},
        "client_cpu_ms_per_move": client_cpu,
    }


def test_the_peer_is_the_mean_of_its_runs_before_and_after_ours() -> None:
    before, after = _run(1000.0, 4.0, 0.6, 0.8), _run(1400.0, 3.0, 0.5, 0.6)
    peer = bracketed(before, after)
    assert peer["moves_per_s"] == 1200.0
    assert peer["latency"] == {"n": 12000, "p50_ms": 3.5, "p99_ms": 14.0}
    assert peer["cpu_ms_per_move"] == {"server": 0.55, "total_servers": 0.55}
    assert peer["client_cpu_ms_per_move"] == 0.7
    assert (peer["moves"], peer["games"], peer["seconds"]) == (12000, 555 + 777, 10.0)
    assert peer["bracket"] == [before, after] and peer["loops"] == 10


def test_the_floor_is_the_mean_of_its_runs_before_and_after_the_end_to_end_sections() -> None:
    def run(p50: float, p99: float, mean: float) -> dict:
        return {"state_bytes": 4096, "n": 2000, "p50_ms": p50, "p99_ms": p99, "mean_ms": mean}

    before = {"floor": run(0.4, 0.6, 0.45), "raw_read": {"commits_per_s": 19000.0}}
    after = {"floor": run(0.6, 1.0, 0.65)}
    out = floor.bracketed(before, after)
    assert out["raw_read"] == {"commits_per_s": 19000.0}  # measured once, before
    f = out["floor"]
    assert (f["p50_ms"], f["p99_ms"], f["mean_ms"]) == (0.5, 0.8, 0.55)
    assert (f["n"], f["state_bytes"]) == (4000, 4096)
    assert f["bracket"] == [before["floor"], after["floor"]]
