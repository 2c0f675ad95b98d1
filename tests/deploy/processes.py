"""Service processes for the local cluster test: ``python -m services.<name>``
started like a container would start them (settings from the environment),
their bound port read from what they print, killed like a crashed pod."""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

from tests.deploy.manifests import ROOT


class ServiceProcess:
    """One replica of a service, as a child process with its output in a file."""

    def __init__(
        self,
        name: str,
        module: str,
        env: dict[str, str],
        port_pattern: str,
        log_dir: Path,
        args: tuple[str, ...] = (),
    ) -> None:
        self.name = name
        self.module = module
        self.env = env
        self.port_pattern = re.compile(port_pattern)
        self.args = args
        self.log_path = log_dir / f"{name}.log"
        self.port = 0
        self._proc: subprocess.Popen[bytes] | None = None

    @property
    def address(self) -> str:
        return f"127.0.0.1:{self.port}"

    @property
    def running(self) -> bool:
        return self._proc is not None and self._proc.poll() is None

    def start(self, timeout: float = 30.0) -> ServiceProcess:
        env = {**os.environ, "PYTHONPATH": str(ROOT), **self.env}
        with open(self.log_path, "ab") as log:
            self._proc = subprocess.Popen(
                [sys.executable, "-m", self.module, *self.args],
                stdout=log,
                stderr=subprocess.STDOUT,
                stdin=subprocess.DEVNULL,
                env=env,
                cwd=ROOT,
                start_new_session=True,
            )
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self._proc.poll() is not None:
                raise RuntimeError(f"{self.name} exited:\n{self.log_tail()}")
            m = self.port_pattern.search(self.log_path.read_text(errors="replace"))
            if m:
                self.port = int(m.group(1))
                return self
            time.sleep(0.05)
        self.kill()
        raise RuntimeError(f"{self.name} did not report its port:\n{self.log_tail()}")

    def kill(self) -> None:
        """SIGKILL, as a crashed process or a lost node: no graceful anything."""
        self._signal(signal.SIGKILL)

    def terminate(self, timeout: float = 15.0) -> None:
        """SIGTERM and wait (a graceful stop), SIGKILL after ``timeout``."""
        self._signal(signal.SIGTERM, timeout)

    def _signal(self, sig: signal.Signals, timeout: float = 10.0) -> None:
        proc, self._proc = self._proc, None
        if proc is None or proc.poll() is not None:
            return
        proc.send_signal(sig)
        try:
            proc.wait(timeout)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(timeout)

    def log_tail(self, lines: int = 40) -> str:
        try:
            text = self.log_path.read_text(errors="replace")
        except OSError:
            return ""
        return "\n".join(text.splitlines()[-lines:])
