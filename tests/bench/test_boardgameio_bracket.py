"""The peer is measured before and after our stack's runs of each G, and
the ratios are to the mean of the two (``bench.boardgameio.bracketed``)."""

from __future__ import annotations

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
