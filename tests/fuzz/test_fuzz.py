"""Seeded bad inputs into every public RPC of the real servers (tests.fuzz.runner):
no crash, no INTERNAL/UNKNOWN answer, no hang, no corrupted match."""

from __future__ import annotations

import pytest

from tests.fuzz.runner import fuzz


def _check(figures) -> None:  # type: ignore[no-untyped-def]
    print(figures.line())
    for example in figures.examples:
        print("  " + example)
    assert figures.crashes == 0, figures.examples
    assert figures.internal == 0, figures.examples
    assert figures.hangs == 0, figures.examples
    assert figures.corrupted == 0, figures.examples
    assert figures.matches_audited >= 5


async def test_a_few_thousand_fuzzed_calls() -> None:
    figures = await fuzz(3000, seed=20261201, concurrency=8)
    assert figures.inputs >= 3000
    _check(figures)


@pytest.mark.slow
@pytest.mark.timeout(900)  # about 230 s on a quiet 2-core machine; the runner finds hangs itself
async def test_a_hundred_thousand_fuzzed_calls() -> None:
    figures = await fuzz(100_000, seed=15, concurrency=8)
    assert figures.inputs >= 100_000
    _check(figures)
