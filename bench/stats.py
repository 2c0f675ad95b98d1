"""Small helpers for latency figures."""

from __future__ import annotations


def percentile(sorted_values: list[float], q: float) -> float:
    """Nearest-rank percentile of an ascending list (q in 0..100)."""
    if not sorted_values:
        return float("nan")
    k = max(0, min(len(sorted_values) - 1, round(q / 100 * len(sorted_values) + 0.5) - 1))
    return sorted_values[k]


def summary_ms(samples_ns: list[int]) -> dict[str, float]:
    s = sorted(x / 1e6 for x in samples_ns)
    return {
        "n": len(s),
        "p50_ms": percentile(s, 50),
        "p99_ms": percentile(s, 99),
        "mean_ms": sum(s) / len(s),
    }
