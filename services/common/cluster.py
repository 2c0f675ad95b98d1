"""A NATS JetStream cluster on loopback: several ``nats-server`` processes
with routes between them, for tests that kill a node while matches go on.

Each node is a :class:`~services.common.servers.NatsServer` with a cluster
port and routes to every node (its own route is ignored by the server), a
server name, and a monitoring port whose ``/healthz`` says when JetStream is
usable (a meta leader elected, streams current)::

    with NatsCluster(3) as cluster:
        nc = await nats.connect(cluster.urls)   # any node; learns the others
        cluster.nodes[1].stop(kill=True)        # a node dies
        cluster.nodes[1].start()                # and comes back, store intact

The cluster is what ``k8s/`` runs as a StatefulSet, on one machine.
"""

from __future__ import annotations

import json
import time
import urllib.error
import urllib.request
from pathlib import Path
from types import TracebackType
from typing import Self

from services.common.servers import NatsServer, ServerError, free_port

CLUSTER_NAME = "tabletop"


class NatsClusterNode(NatsServer):
    """One node: client, cluster and monitoring ports, routes to its peers."""

    def __init__(
        self,
        *,
        server_name: str,
        cluster_port: int,
        routes: list[str],
        cluster_name: str = CLUSTER_NAME,
        port: int = 0,
        data_dir: str | Path | None = None,
    ) -> None:
        super().__init__(port=port, data_dir=data_dir)
        self.server_name = server_name
        self.cluster_port = cluster_port
        self.routes = routes
        self.cluster_name = cluster_name
        self.monitor_port = free_port()

    def _command(self) -> list[str]:
        return [
            *super()._command(),
            "--server_name", self.server_name,
            "--cluster_name", self.cluster_name,
            "--cluster", f"nats://{self.host}:{self.cluster_port}",
            "--routes", ",".join(self.routes),
            "--http_port", str(self.monitor_port),
        ]  # fmt: skip

    def healthz(self, *, js_enabled_only: bool = False, timeout: float = 1.0) -> tuple[int, str]:
        """``GET /healthz`` of the monitoring port: (HTTP status, body)."""
        query = "?js-enabled-only=true" if js_enabled_only else ""
        url = f"http://{self.host}:{self.monitor_port}/healthz{query}"
        try:
            with urllib.request.urlopen(url, timeout=timeout) as r:
                return r.status, r.read().decode()
        except urllib.error.HTTPError as e:
            return e.code, e.read().decode(errors="replace")
        except OSError as e:
            return 0, str(e)

    def jsz(self, timeout: float = 1.0) -> dict:  # type: ignore[type-arg]
        """``GET /jsz``: this node's view of JetStream (meta leader, peers)."""
        url = f"http://{self.host}:{self.monitor_port}/jsz"
        with urllib.request.urlopen(url, timeout=timeout) as r:
            return json.loads(r.read())  # type: ignore[no-any-return]


class NatsCluster:
    """``size`` nats-server nodes with JetStream, routed to each other."""

    def __init__(
        self, size: int = 3, *, data_dir: str | Path | None = None, name: str = CLUSTER_NAME
    ) -> None:
        if size < 1:
            raise ValueError("a cluster has at least one node")
        self.size = size
        self.name = name
        self.data_dir = data_dir
        self.nodes = self._nodes()

    def _nodes(self) -> list[NatsClusterNode]:
        """Nodes on fresh free ports, each routed to all of them."""
        cluster_ports = [free_port() for _ in range(self.size)]
        routes = [f"nats://127.0.0.1:{p}" for p in cluster_ports]
        return [
            NatsClusterNode(
                server_name=f"{self.name}-{i}",
                cluster_port=cluster_ports[i],
                routes=routes,
                cluster_name=self.name,
                data_dir=None if self.data_dir is None else Path(self.data_dir) / f"node-{i}",
            )
            for i in range(self.size)
        ]

    @property
    def urls(self) -> list[str]:
        """Client URLs of every node (a list, as nats-py's ``connect`` takes)."""
        return [n.url for n in self.nodes]

    @property
    def url(self) -> str:
        """The same, comma-separated (as a ``TABLETOP_NATS_URL`` value)."""
        return ",".join(self.urls)

    def start(self, timeout: float = 30.0, *, attempts: int = 3) -> Self:
        for attempt in range(attempts):
            try:
                for node in self.nodes:
                    node.start(timeout)
                break
            except ServerError as e:
                # A "free" port taken by another process meanwhile (tests run
                # in parallel): start over on new ports.
                if "address already in use" not in str(e) or attempt == attempts - 1:
                    raise
                self.close()
                self.nodes = self._nodes()
        self.wait_healthy(timeout)
        return self

    def wait_healthy(self, timeout: float = 30.0) -> None:
        """Until every running node reports JetStream healthy (meta leader
        known, its streams current)."""
        deadline = time.monotonic() + timeout
        while True:
            running = [n for n in self.nodes if n.running]
            sick = [(n.server_name, n.healthz()) for n in running]
            sick = [(name, h) for name, h in sick if h[0] != 200]
            if not sick:
                return
            if time.monotonic() > deadline:
                raise ServerError(f"cluster not healthy after {timeout}s: {sick}")
            time.sleep(0.1)

    def meta_leader(self) -> str | None:
        """The server name of the JetStream meta leader, as a live node sees it."""
        for node in self.nodes:
            if node.running:
                try:
                    leader = node.jsz().get("meta_cluster", {}).get("leader")
                except OSError:
                    continue
                if leader:
                    return str(leader)
        return None

    def node(self, server_name: str) -> NatsClusterNode:
        return next(n for n in self.nodes if n.server_name == server_name)

    def stop(self) -> None:
        for node in self.nodes:
            node.stop()

    def close(self) -> None:
        for node in self.nodes:
            node.close()

    def __enter__(self) -> Self:
        try:
            return self.start()
        except BaseException:
            self.close()
            raise

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()
