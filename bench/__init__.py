"""Benchmarks: ``make bench`` (``python -m bench``) runs them all and writes
``bench/results/<date>.json``. See docs/benchmarks.md for the method.

Every benchmark process runs gRPC as the services do: this package imports
``services`` (which sets ``GRPC_EXPERIMENTS``, read once when grpc is
imported) before any of its modules can import grpc. Without it, a harness
whose first module imported grpc first ran its own clients on grpcio's
defaults while the same module run alone did not, and the two disagreed."""

import services  # noqa: F401  (before grpc: the services' gRPC settings)
