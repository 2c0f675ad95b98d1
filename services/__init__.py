"""Tabletop's services.

Every service process imports this package before anything of gRPC (``python
-m services.<name>`` loads it first, and a spawned rules worker too), so the
gRPC runtime setting every service runs with is made here, once:

``GRPC_EXPERIMENTS`` defaults to ``-event_engine_client,-event_engine_listener``:
grpcio's I/O on its long-standing polling engine (the one grpcio for Python
ran on until 1.80) rather than on the EventEngine that 1.80 turned on. With
the EventEngine, each message crosses one more thread on its way between the
socket and the event loop; on the polling engine, the thread that waits for
completions reads and writes the sockets itself. Measured on two cores
(docs/benchmarks.md): a unary round trip 0.60 -> 0.45 ms, a streamed echo's
server CPU 33 -> 25 us a message pair, the match service's CPU per move 5-10 %
lower. grpc reads the variable once, when it is imported, so it must be set
before that; an operator's own ``GRPC_EXPERIMENTS`` (even empty: grpc's
defaults) is kept. A grpcio that no longer has these experiments logs
"Unknown experiment" once and runs as its defaults say.

A process that imports this package passes the variable on to the processes
it starts; ``GRPC_EXPERIMENTS_BY_OPERATOR`` says whether it was there before
(a harness that runs services of another revision leaves it out otherwise,
so each revision runs as its own code says).
"""

import os

GRPC_EXPERIMENTS = "-event_engine_client,-event_engine_listener"

GRPC_EXPERIMENTS_BY_OPERATOR = "GRPC_EXPERIMENTS" in os.environ

os.environ.setdefault("GRPC_EXPERIMENTS", GRPC_EXPERIMENTS)
