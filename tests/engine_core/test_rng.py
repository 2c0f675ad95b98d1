"""The RNG is a documented algorithm: these vectors pin it on every platform."""

import hashlib

import pytest
from hypothesis import given
from hypothesis import strategies as st

from engine_core.rng import Rng, derive


def test_words_are_sha256_counter_mode() -> None:
    block0 = hashlib.sha256(b"tabletop" + (0).to_bytes(8, "big")).digest()
    r = Rng(b"tabletop")
    assert r.word() == int.from_bytes(block0[:8], "big")
    assert [Rng(b"tabletop").word() for _ in range(1)] == [13736692549885342869]
    r = Rng(b"tabletop")
    assert [r.word() for _ in range(3)] == [
        13736692549885342869,
        6229268652323483458,
        8040851146181373201,
    ]


def test_pinned_vectors() -> None:
    r = Rng(b"tabletop")
    assert [r.below(6) for _ in range(10)] == [3, 4, 3, 2, 5, 3, 4, 1, 5, 4]
    assert Rng(b"tabletop").shuffle(range(10)) == (6, 3, 8, 2, 4, 5, 0, 1, 7, 9)
    assert derive(b"tabletop", "setup").hex() == (
        "6ae0f40f588db54f0b996cb45a60b443a36ecb11637913ba5c59fc700d19a3b4"
    )
    r = Rng(bytes(32))
    assert (r.below(3), r.between(5, 9), r.bytes(8).hex()) == (0, 7, "d3067ed509ff25f1")


@given(st.binary(max_size=64), st.integers(min_value=1, max_value=10**12))
def test_below_stays_in_range(entropy: bytes, n: int) -> None:
    r = Rng(entropy)
    assert all(0 <= r.below(n) < n for _ in range(20))


@given(st.binary(max_size=64), st.lists(st.integers(), max_size=30))
def test_shuffle_is_a_permutation(entropy: bytes, items: list[int]) -> None:
    assert sorted(Rng(entropy).shuffle(items)) == sorted(items)


def test_below_is_roughly_uniform() -> None:
    r = Rng(b"uniform")
    counts = [0] * 6
    for _ in range(60_000):
        counts[r.below(6)] += 1
    assert all(9_500 < c < 10_500 for c in counts), counts


def test_bad_arguments() -> None:
    with pytest.raises(ValueError):
        Rng(b"x").below(0)
    with pytest.raises(TypeError):
        Rng("text")  # type: ignore[arg-type]
    with pytest.raises(ValueError):
        Rng(b"x").sample([1, 2], 3)
