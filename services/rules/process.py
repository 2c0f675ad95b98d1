"""Start a real rules service process (for tests, benchmarks and local runs).

::

    with RulesProcess(workers=1) as rules:
        client = RulesClient(rules.address)

The process runs ``python -m services.rules --port 0`` with the current
interpreter, its log goes to a file (``rules.log_path``), and the bound port
is read from its start-up line. Leaving the block sends SIGTERM and waits for
a graceful exit (then kills it if it hangs).
"""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from types import TracebackType

_LISTENING = re.compile(r"rules service listening on port (\d+)")
_METRICS = re.compile(r"rules metrics on port (\d+)")


class RulesProcess:
    def __init__(
        self,
        *,
        workers: int = 1,
        env: dict[str, str] | None = None,
        log_dir: str | Path | None = None,
        start_timeout: float = 30.0,
    ) -> None:
        self.workers = workers
        self.extra_env = dict(env or {})
        self._tmp = None if log_dir is not None else tempfile.TemporaryDirectory(prefix="rules-")
        self.log_path = Path(log_dir if log_dir is not None else self._tmp.name) / "rules.log"  # type: ignore[union-attr]
        self.start_timeout = start_timeout
        self.proc: subprocess.Popen[bytes] | None = None
        self.port: int | None = None

    @property
    def address(self) -> str:
        if self.port is None:
            raise RuntimeError("the rules process is not started")
        return f"127.0.0.1:{self.port}"

    @property
    def metrics_port(self) -> int | None:
        """The ``/metrics`` port, when started with ``TABLETOP_RULES_METRICS_PORT``."""
        match = _METRICS.search(self.log_path.read_text(errors="replace"))
        return int(match.group(1)) if match else None

    def log_lines(self) -> list[str]:
        return self.log_path.read_text(errors="replace").splitlines()

    def start(self) -> RulesProcess:
        env = {
            **os.environ,
            "TABLETOP_LOG_FORMAT": "json",
            "PYTHONUNBUFFERED": "1",
            **self.extra_env,
        }
        root = str(Path(__file__).resolve().parents[2])
        env["PYTHONPATH"] = os.pathsep.join(p for p in (root, env.get("PYTHONPATH", "")) if p)
        log = self.log_path.open("wb")
        self.proc = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "services.rules",
                "--host",
                "127.0.0.1",
                "--port",
                "0",
                "--workers",
                str(self.workers),
            ],
            stdout=log,
            stderr=subprocess.STDOUT,
            env=env,
            cwd=root,
        )
        log.close()
        deadline = time.monotonic() + self.start_timeout
        while time.monotonic() < deadline:
            match = _LISTENING.search(self.log_path.read_text(errors="replace"))
            if match:
                self.port = int(match.group(1))
                return self
            if self.proc.poll() is not None:
                break
            time.sleep(0.05)
        self.stop()
        raise RuntimeError(f"the rules service did not start; log:\n{self.log_path.read_text()}")

    def stop(self, timeout: float = 15.0) -> int | None:
        """SIGTERM, wait for a graceful exit, kill if it hangs; the exit code."""
        if self.proc is None:
            return None
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(timeout)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        return self.proc.returncode

    def close(self) -> None:
        self.stop()
        if self._tmp is not None:
            self._tmp.cleanup()

    def __enter__(self) -> RulesProcess:
        return self.start()

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()
