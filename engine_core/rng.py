"""Deterministic randomness from caller-supplied entropy.

The algorithm is fixed and documented, so that the same entropy gives the same
results on every Python version and platform (tests pin it with vectors):

* The stream is SHA-256 in counter mode: block ``i`` (from 0) is
  ``sha256(entropy || i as 8-byte big-endian)``; the stream is the blocks
  concatenated. Words are read as unsigned 64-bit big-endian integers, four
  per block, in order.
* ``below(n)`` draws a word ``w`` and rejects it while
  ``w >= 2**64 - (2**64 % n)``; it returns ``w % n`` (uniform, no bias).
* ``shuffle(seq)`` is Fisher-Yates from the last index down: for ``i`` from
  ``len-1`` to ``1``, swap ``i`` with ``below(i + 1)``.
* ``derive(entropy, label)`` makes an independent sub-stream:
  ``sha256(entropy || b"/" || label)``.

Python's ``random`` module is never used: its algorithms are not a stable API.
"""

from __future__ import annotations

import hashlib
import struct
from collections.abc import Sequence
from typing import TypeVar

T = TypeVar("T")

_WORD = 1 << 64
_BLOCK_WORDS = struct.Struct(">4Q")
"""A SHA-256 block read as four unsigned 64-bit big-endian words."""


def derive(entropy: bytes, label: str | bytes) -> bytes:
    """An independent 32-byte entropy for a named sub-purpose."""
    if isinstance(label, str):
        label = label.encode()
    return hashlib.sha256(entropy + b"/" + label).digest()


class Rng:
    """A reproducible stream of draws. Not thread-safe; cheap to create."""

    __slots__ = ("_block", "_entropy", "_next", "_words")

    def __init__(self, entropy: bytes) -> None:
        if not isinstance(entropy, (bytes, bytearray)):  # a tuple: no union built per call
            raise TypeError("entropy must be bytes")
        self._entropy = bytes(entropy)
        self._block = 0
        self._words: tuple[int, ...] = ()
        self._next = 0

    def word(self) -> int:
        """The next unsigned 64-bit word of the stream."""
        if self._next >= len(self._words):
            digest = hashlib.sha256(self._entropy + self._block.to_bytes(8, "big")).digest()
            self._words = _BLOCK_WORDS.unpack(digest)
            self._block += 1
            self._next = 0
        w = self._words[self._next]
        self._next += 1
        return w

    def below(self, n: int) -> int:
        """A uniform integer in ``[0, n)``."""
        if n <= 0:
            raise ValueError("n must be positive")
        limit = _WORD - (_WORD % n)
        while True:
            w = self.word()
            if w < limit:
                return w % n

    def between(self, low: int, high: int) -> int:
        """A uniform integer in ``[low, high]`` (both included)."""
        return low + self.below(high - low + 1)

    def choice(self, seq: Sequence[T]) -> T:
        """A uniform element of a non-empty sequence."""
        return seq[self.below(len(seq))]

    def shuffle(self, seq: Sequence[T]) -> tuple[T, ...]:
        """A new tuple with the elements of ``seq`` in uniform random order."""
        items = list(seq)
        for i in range(len(items) - 1, 0, -1):
            j = self.below(i + 1)
            items[i], items[j] = items[j], items[i]
        return tuple(items)

    def sample(self, seq: Sequence[T], k: int) -> tuple[T, ...]:
        """``k`` distinct elements (by position), in draw order."""
        if not 0 <= k <= len(seq):
            raise ValueError("sample larger than population")
        items = list(seq)
        out = []
        for _ in range(k):
            out.append(items.pop(self.below(len(items))))
        return tuple(out)

    def bytes(self, n: int = 32) -> bytes:
        """``n`` bytes of the stream (for handing entropy on to a sub-step)."""
        out = bytearray()
        while len(out) < n:
            out += self.word().to_bytes(8, "big")
        return bytes(out[:n])
