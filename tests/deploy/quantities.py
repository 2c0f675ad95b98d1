"""Kubernetes resource quantities and Redis memory sizes, as numbers."""

from __future__ import annotations

import re
from fractions import Fraction

_SUFFIX = {
    "": 1,
    "m": Fraction(1, 1000),
    "k": 10**3,
    "M": 10**6,
    "G": 10**9,
    "T": 10**12,
    "Ki": 2**10,
    "Mi": 2**20,
    "Gi": 2**30,
    "Ti": 2**40,
}


def parse_quantity(q: str | int | float) -> Fraction:
    """``"500m"`` -> 1/2, ``"2Gi"`` -> 2147483648 (cores or bytes)."""
    m = re.fullmatch(r"(\d+(?:\.\d+)?)([a-zA-Z]*)", str(q))
    if not m or m.group(2) not in _SUFFIX:
        raise ValueError(f"not a quantity: {q!r}")
    return Fraction(m.group(1)) * _SUFFIX[m.group(2)]


def parse_redis_bytes(s: str) -> int:
    """Redis/valkey memory notation: ``1gb`` = 2**30, ``1g`` = 10**9, bytes bare."""
    m = re.fullmatch(r"(\d+)(k|kb|m|mb|g|gb)?", s.lower())
    if not m:
        raise ValueError(f"not a redis memory size: {s!r}")
    unit = {
        None: 1,
        "k": 1000,
        "kb": 1024,
        "m": 1000**2,
        "mb": 1024**2,
        "g": 1000**3,
        "gb": 1024**3,
    }[m.group(2)]
    return int(m.group(1)) * unit
