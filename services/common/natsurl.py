"""``TABLETOP_NATS_URL``: one server or a comma-separated list of them.

``nats://nats-0:4222,nats://nats-1:4222,nats://nats-2:4222`` lets a client
connect to whichever node answers first and reconnect to any other when that
one goes away, without a load balancer in front of the cluster (nats-py also
learns the rest of a cluster from the node it reached, but it needs one that
answers at start-up). Every service that connects to NATS reads the variable
through ``nats_servers``.
"""

from __future__ import annotations

__all__ = ["nats_servers"]


def nats_servers(url: str) -> list[str]:
    """The servers of a ``TABLETOP_NATS_URL`` value, in order (spaces and
    empty entries dropped; an entry without a scheme gets ``nats://``)."""
    servers = []
    for part in url.split(","):
        part = part.strip()
        if not part:
            continue
        servers.append(part if "://" in part else f"nats://{part}")
    if not servers:
        raise ValueError(f"TABLETOP_NATS_URL names no server: {url!r}")
    return servers
