"""The whole backend on one machine, as supervised child processes.

``make run`` and ``tabletop up`` call ``Stack.run()``: nats-server with
JetStream (data under ``.data/nats``), valkey-server (``.data/valkey``), the
rules service (workers), the match service, the matchmaking service and the
bot worker. Each is waited for (gRPC health, server pings) before the next
starts; endpoints are printed; Ctrl-C or SIGTERM stops everything in reverse
order. A child that dies is reported with its last log lines and the stack
stops rather than run half-broken.

Each service's log (JSON lines, stdout and stderr) is
``.data/logs/<service>.log``, rotated by size: past ``TABLETOP_LOG_MAX_BYTES``
(default 10 MiB) it is copied to ``<service>.log.1`` (older copies shift up to
``.log.<TABLETOP_LOG_KEEP>``, default 3, the oldest dropped) and truncated in
place; the service keeps writing (append mode) without a restart.

Every address comes from the environment: with ``TABLETOP_NATS_URL`` or
``TABLETOP_REDIS_URL`` set, the embedded server is not started and the
services use the external one.
"""

from __future__ import annotations

import os
import secrets
import shutil
import signal
import subprocess
import sys
import time
import urllib.request
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

import grpc
from grpc_health.v1 import health_pb2, health_pb2_grpc

from services.common.auth import DEV_SECRET
from services.common.servers import NatsServer, ServerError, ValkeyServer, free_port


class StackError(RuntimeError):
    """A part of the stack failed to start or died."""


@dataclass(frozen=True)
class StackSettings:
    data_dir: Path = Path(".data")
    host: str = "127.0.0.1"
    nats_url: str | None = None  # external NATS: do not start one
    redis_url: str | None = None  # external Redis: do not start one
    nats_port: int = 4222
    redis_port: int = 6379
    rules_port: int = 50051
    match_port: int = 50052
    matchmaking_port: int = 50053
    tournaments_port: int = 50054
    tournaments_metrics_port: int = 9105
    metrics_ports: tuple[int, int, int, int] = (9101, 9102, 9103, 9104)
    """Prometheus ports of rules, match, matchmaking and the bot worker."""
    gateway_port: int = 8080
    gateway_metrics_port: int = 9106
    rules_workers: int = 0  # 0: one per core
    log_max_bytes: int = 10 * 1024 * 1024
    log_keep: int = 3
    jwt_secret: str | None = None
    extra_env: Mapping[str, str] = field(default_factory=dict)

    @classmethod
    def from_env(cls, env: Mapping[str, str] = os.environ, **overrides: object) -> StackSettings:
        def port(name: str, default: int) -> int:
            return int(env.get(name, default))

        values: dict[str, object] = {
            "data_dir": Path(env.get("TABLETOP_DATA_DIR", ".data")),
            "nats_url": env.get("TABLETOP_NATS_URL") or None,
            "redis_url": env.get("TABLETOP_REDIS_URL") or None,
            "nats_port": port("TABLETOP_NATS_PORT", 4222),
            "redis_port": port("TABLETOP_REDIS_PORT", 6379),
            "rules_port": port("TABLETOP_RULES_PORT", 50051),
            "match_port": port("TABLETOP_MATCH_PORT", 50052),
            "matchmaking_port": port("TABLETOP_MATCHMAKING_PORT", 50053),
            "tournaments_port": port("TABLETOP_TOURNAMENTS_PORT", 50054),
            "tournaments_metrics_port": port("TABLETOP_TOURNAMENTS_METRICS_PORT", 9105),
            "metrics_ports": tuple(
                port(f"TABLETOP_{name}_METRICS_PORT", 9101 + i)
                for i, name in enumerate(("RULES", "MATCH", "MATCHMAKING", "BOTS"))
            ),
            "gateway_port": port("TABLETOP_GATEWAY_PORT", 8080),
            "gateway_metrics_port": port("TABLETOP_GATEWAY_METRICS_PORT", 9106),
            "rules_workers": int(env.get("TABLETOP_RULES_WORKERS", "0")),
            "log_max_bytes": int(env.get("TABLETOP_LOG_MAX_BYTES", 10 * 1024 * 1024)),
            "log_keep": int(env.get("TABLETOP_LOG_KEEP", 3)),
            "jwt_secret": env.get("TABLETOP_JWT_SECRET") or None,
        }
        values.update(overrides)
        return cls(**values)  # type: ignore[arg-type]

    @classmethod
    def ephemeral(cls, data_dir: Path, **overrides: object) -> StackSettings:
        """Every port free, for tests."""
        values: dict[str, object] = {
            "data_dir": data_dir,
            "nats_port": free_port(),
            "redis_port": free_port(),
            "rules_port": free_port(),
            "match_port": free_port(),
            "matchmaking_port": free_port(),
            "tournaments_port": free_port(),
            "tournaments_metrics_port": free_port(),
            "metrics_ports": (free_port(), free_port(), free_port(), free_port()),
            "gateway_port": free_port(),
            "gateway_metrics_port": free_port(),
            "rules_workers": 1,
        }
        values.update(overrides)
        return cls(**values)  # type: ignore[arg-type]


class PersistentValkey(ValkeyServer):
    """valkey-server with an append-only file: the local stack keeps ratings
    and tickets across restarts (the projections are a cache either way)."""

    def _command(self) -> list[str]:
        return [*super()._command(), "--appendonly", "yes", "--save", "60 1"]


@dataclass
class Child:
    """One supervised service process."""

    name: str
    argv: list[str]
    env: dict[str, str]
    grpc_port: int | None
    log_path: Path
    proc: subprocess.Popen[bytes] | None = None
    http_port: int | None = None  # an HTTP service: ready when /healthz answers

    def start(self) -> None:
        self.log_path.parent.mkdir(parents=True, exist_ok=True)
        log = open(self.log_path, "ab")  # noqa: SIM115 - owned by the child
        self.proc = subprocess.Popen(
            self.argv,
            env=self.env,
            stdout=log,
            stderr=subprocess.STDOUT,
            stdin=subprocess.DEVNULL,
            start_new_session=True,
        )
        log.close()

    @property
    def alive(self) -> bool:
        return self.proc is not None and self.proc.poll() is None

    def log_tail(self, lines: int = 25) -> str:
        try:
            return "\n".join(self.log_path.read_text(errors="replace").splitlines()[-lines:])
        except OSError:
            return ""

    def stop(self, timeout: float = 10.0) -> None:
        if self.proc is None or self.proc.poll() is not None:
            return
        self.proc.send_signal(signal.SIGTERM)
        try:
            self.proc.wait(timeout)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait(timeout)


def rotate_log(path: Path, max_bytes: int, keep: int) -> bool:
    """Copy-and-truncate ``path`` once it is larger than ``max_bytes``, keeping
    ``keep`` older copies (``path.1`` the newest). The writer holds the file
    open in append mode, so it goes on writing at the new end. True if rotated."""
    try:
        if max_bytes <= 0 or path.stat().st_size <= max_bytes:
            return False
    except FileNotFoundError:
        return False
    if keep > 0:
        for i in range(keep - 1, 0, -1):
            older = path.with_name(f"{path.name}.{i}")
            if older.exists():
                older.replace(path.with_name(f"{path.name}.{i + 1}"))
        shutil.copyfile(path, path.with_name(f"{path.name}.1"))
    with open(path, "r+b") as f:
        f.truncate(0)
    return True


def grpc_serving(port: int, host: str = "127.0.0.1", timeout: float = 1.0) -> bool:
    """True once the server at ``host:port`` answers its health check SERVING."""
    try:
        with grpc.insecure_channel(f"{host}:{port}") as channel:
            reply = health_pb2_grpc.HealthStub(channel).Check(
                health_pb2.HealthCheckRequest(service=""), timeout=timeout
            )
            return reply.status == health_pb2.HealthCheckResponse.SERVING
    except grpc.RpcError:
        return False


def http_serving(port: int, host: str = "127.0.0.1", timeout: float = 1.0) -> bool:
    """True once the HTTP server at ``host:port`` answers ``/healthz`` with 200."""
    try:
        with urllib.request.urlopen(f"http://{host}:{port}/healthz", timeout=timeout) as r:
            return r.status == 200
    except (OSError, ValueError):
        return False


def _echo(line: str) -> None:
    print(line, flush=True)


def _interrupt(signum: int, frame: object) -> None:
    """SIGTERM stops the stack the way Ctrl-C does."""
    raise KeyboardInterrupt


class Stack:
    """The supervisor. ``start()`` brings everything up in order, ``stop()``
    takes it down in reverse; ``run()`` does both around a watch loop."""

    def __init__(self, settings: StackSettings, *, echo=None) -> None:
        """``echo``: where the supervisor's lines go; by default standard
        output, each line flushed as it is written (a ``make run`` whose
        output goes to a file or a pipe shows its endpoints at once, not
        when it stops)."""
        self.s = settings
        self.echo = echo or _echo
        self.data_dir = settings.data_dir.resolve()
        self.nats: NatsServer | None = None
        self.valkey: ValkeyServer | None = None
        self.children: list[Child] = []
        self.nats_url = settings.nats_url or ""
        self.redis_url = settings.redis_url or ""
        self._stopping = False

    # ------------------------------------------------------------ addresses
    def _secret(self) -> str:
        if self.s.jwt_secret:
            return self.s.jwt_secret
        path = self.data_dir / "jwt-secret"
        if not path.exists():
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(secrets.token_urlsafe(32))
            path.chmod(0o600)
        return path.read_text().strip()

    def _metrics(self, index: int) -> str:
        return str(self.s.metrics_ports[index])

    def metrics_address(self, name: str) -> str:
        """Where a service's Prometheus ``/metrics`` is served."""
        ports = dict(
            zip(("rules", "match", "matchmaking", "bots"), self.s.metrics_ports, strict=True)
        )
        ports["tournaments"] = self.s.tournaments_metrics_port
        ports["gateway"] = self.s.gateway_metrics_port
        return f"http://{self.s.host}:{ports[name]}/metrics"

    def rotate_logs(self) -> None:
        for child in self.children:
            rotate_log(child.log_path, self.s.log_max_bytes, self.s.log_keep)

    def endpoints(self) -> dict[str, str]:
        h = self.s.host
        return {
            "rules": f"{h}:{self.s.rules_port}",
            "match": f"{h}:{self.s.match_port}",
            "matchmaking": f"{h}:{self.s.matchmaking_port}",
            "tournaments": f"{h}:{self.s.tournaments_port}",
            "gateway": f"http://{h}:{self.s.gateway_port}",
            "nats": self.nats_url,
            "redis": self.redis_url,
        }

    def client_env(self) -> dict[str, str]:
        """What a CLI in another terminal needs to reach this stack."""
        e = self.endpoints()
        return {
            "TABLETOP_MATCH_ADDR": e["match"],
            "TABLETOP_MATCHMAKING_ADDR": e["matchmaking"],
            "TABLETOP_RULES_ADDR": e["rules"],
            "TABLETOP_TOURNAMENTS_ADDR": e["tournaments"],
        }

    def _env(self) -> dict[str, str]:
        env = dict(os.environ)
        env.update(self.s.extra_env)
        h = self.s.host
        env.update(
            {
                "TABLETOP_NATS_URL": self.nats_url,
                "TABLETOP_REDIS_URL": self.redis_url,
                "TABLETOP_JWT_SECRET": self._secret(),
                "TABLETOP_LOG_FORMAT": env.get("TABLETOP_LOG_FORMAT", "json"),
                "TABLETOP_RULES_HOST": h,
                "TABLETOP_RULES_PORT": str(self.s.rules_port),
                "TABLETOP_RULES_WORKERS": str(self.s.rules_workers),
                "TABLETOP_RULES_ADDR": f"{h}:{self.s.rules_port}",
                "TABLETOP_MATCH_HOST": h,
                "TABLETOP_MATCH_PORT": str(self.s.match_port),
                "TABLETOP_MATCH_METRICS_PORT": self._metrics(1),
                "TABLETOP_MATCH_ADDR": f"{h}:{self.s.match_port}",
                "TABLETOP_MATCHMAKING_HOST": h,
                "TABLETOP_MATCHMAKING_GRPC_PORT": str(self.s.matchmaking_port),
                "TABLETOP_MATCHMAKING_ADDR": f"{h}:{self.s.matchmaking_port}",
                "TABLETOP_MATCHMAKING_METRICS_PORT": self._metrics(2),
                "TABLETOP_RULES_METRICS_PORT": self._metrics(0),
                "TABLETOP_BOTS_METRICS_PORT": self._metrics(3),
                "TABLETOP_TOURNAMENTS_HOST": h,
                "TABLETOP_TOURNAMENTS_PORT": str(self.s.tournaments_port),
                "TABLETOP_TOURNAMENTS_METRICS_PORT": str(self.s.tournaments_metrics_port),
                "TABLETOP_TOURNAMENTS_ADDR": f"{h}:{self.s.tournaments_port}",
                "TABLETOP_GATEWAY_HOST": h,
                "TABLETOP_GATEWAY_PORT": str(self.s.gateway_port),
                "TABLETOP_GATEWAY_METRICS_PORT": str(self.s.gateway_metrics_port),
            }
        )
        # On one machine people are scarce: offer bots after a short wait.
        env.setdefault("TABLETOP_MATCHMAKING_BOT_FILL_AFTER_S", "2")
        return env

    def _specs(self) -> list[tuple[str, str, int | None]]:
        return [
            ("rules", "services.rules", self.s.rules_port),
            ("match", "services.match", self.s.match_port),
            ("matchmaking", "services.matchmaking", self.s.matchmaking_port),
            ("bots", "services.bots", None),
            ("tournaments", "services.tournaments", self.s.tournaments_port),
        ]

    def _http_specs(self) -> list[tuple[str, str, int]]:
        """Services that answer HTTP, started after the gRPC ones."""
        return [("gateway", "services.gateway", self.s.gateway_port)]

    # ------------------------------------------------------------ lifecycle
    def start(self, timeout: float = 60.0) -> None:
        self.data_dir.mkdir(parents=True, exist_ok=True)
        try:
            if not self.s.nats_url:
                self.nats = NatsServer(port=self.s.nats_port, data_dir=self.data_dir / "nats")
                self.nats.start()
                self.nats_url = self.nats.url
                self.echo(f"  nats        {self.nats_url} (JetStream in {self.nats.data_dir})")
            if not self.s.redis_url:
                self.valkey = PersistentValkey(
                    port=self.s.redis_port, data_dir=self.data_dir / "valkey"
                )
                self.valkey.start()
                self.redis_url = self.valkey.url
                self.echo(f"  valkey      {self.redis_url}")
            env = self._env()
            if env["TABLETOP_JWT_SECRET"] == DEV_SECRET:
                self.echo(
                    "  WARNING     TABLETOP_JWT_SECRET is the development secret: "
                    "anyone can forge tokens"
                )
            specs = [(n, m, p, False) for n, m, p in self._specs()]
            specs += [(n, m, p, True) for n, m, p in self._http_specs()]
            for name, module, port, http in specs:
                child = Child(
                    name,
                    [sys.executable, "-m", module],
                    env,
                    None if http else port,
                    self.data_dir / "logs" / f"{name}.log",
                    http_port=port if http else None,
                )
                child.start()
                self.children.append(child)
                self._wait_ready(child, timeout)
                if http:
                    where = f"http://{self.s.host}:{port}"
                else:
                    where = f"{self.s.host}:{port}" if port else "(no port)"
                metrics = self.metrics_address(name)
                self.echo(f"  {name:<11} {where}  metrics: {metrics}  log: {child.log_path}")
        except BaseException:
            self.stop()
            raise

    def _wait_ready(self, child: Child, timeout: float) -> None:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if not child.alive:
                raise StackError(f"{child.name} exited while starting:\n{child.log_tail()}")
            if child.http_port is not None:
                if http_serving(child.http_port, self.s.host):
                    return
            elif child.grpc_port is None or grpc_serving(child.grpc_port, self.s.host):
                return
            time.sleep(0.1)
        raise StackError(f"{child.name} not healthy after {timeout:.0f}s:\n{child.log_tail()}")

    def check(self) -> Child | None:
        """The first child that died, if any (servers count too)."""
        for child in self.children:
            if not child.alive:
                return child
        for server in (self.nats, self.valkey):
            if server is not None and not server.running:
                raise StackError(f"{server.name} died:\n{server.log_tail()}")
        return None

    def stop(self) -> None:
        """Everything down, services first (reverse order), servers last."""
        for child in reversed(self.children):
            child.stop()
        self.children.clear()
        for server in (self.valkey, self.nats):
            if server is not None:
                server.stop()

    def run(self) -> int:
        """Start, print the endpoints, watch until Ctrl-C/SIGTERM or a death."""
        self.echo("Starting the Tabletop stack ...")
        signal.signal(signal.SIGTERM, _interrupt)
        try:
            self.start()
        except (StackError, ServerError) as e:
            self.echo(f"the stack could not start: {e}")
            return 1
        self.echo("")
        self.echo(f"Tabletop is up. Play in a browser: http://{self.s.host}:{self.s.gateway_port}")
        self.echo("Or, in another terminal:")
        self.echo("  .venv/bin/tabletop play tic_tac_toe --bots 1")
        self.echo("  .venv/bin/tabletop play dice_forge --bots 3")
        self.echo(
            f"Logs: {self.data_dir / 'logs'} (JSON lines; each rotated past "
            f"{self.s.log_max_bytes // (1024 * 1024)} MiB, {self.s.log_keep} kept)."
        )
        self.echo("Ctrl-C stops everything.")
        code = 0
        try:
            while True:
                dead = self.check()
                if dead is not None:
                    self.echo(
                        f"{dead.name} died (exit {dead.proc.returncode if dead.proc else '?'}):"
                    )
                    self.echo(dead.log_tail())
                    self.echo("stopping the stack rather than running half-broken")
                    code = 1
                    break
                self.rotate_logs()
                time.sleep(0.5)
        except KeyboardInterrupt:
            self.echo("\nstopping ...")
        except StackError as e:
            self.echo(str(e))
            code = 1
        finally:
            self.stop()
        self.echo("stopped.")
        return code
