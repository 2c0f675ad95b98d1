"""Benchmarks: ``make bench`` (``python -m bench``) runs them all and writes
``bench/results/<date>.json``. See docs/benchmarks.md for the method."""
