"""Fixtures shared by every test layer."""
from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

REPO = Path(__file__).resolve().parent.parent
pytest_plugins = ["tests.support.adb_fixtures"]


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


START_DEADLINE_S = 120
"""Generous: on a loaded 2-core machine a start has taken over 20 s; a daemon that exits is seen at once."""
READY_LINE = b"Uvicorn running on "
"""What the daemon prints once its lifespan has started and its socket listens (uvicorn's own line)."""


class Daemon:
    """`lookout serve` as a subprocess on a free port with its own data dir and token."""

    def __init__(self, data_dir: Path, token: str = "test-token-0123456789", **env: str) -> None:
        self.data_dir = data_dir
        self.token = token
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.env = {**os.environ, "LOOKOUT_TOKEN": token, **env}
        self.proc: subprocess.Popen[bytes] | None = None
        self.log = data_dir.parent / f"daemon-{self.port}.log"
        self.start_command: list[str] = []
        """Put in front of the daemon's command (e.g. prlimit ...)."""

    def start(self) -> Daemon:
        """Starts the daemon and returns once it printed its readiness line into `self.log`; a daemon that exits
        first is reported at once with its output."""
        cmd = [*self.start_command, sys.executable, "-m", "app", "serve", "--port", str(self.port),
               "--data-dir", str(self.data_dir)]  # fmt: skip
        with self.log.open("ab") as log:
            this_run = log.tell()  # a restarted daemon appends to the same log
            self.proc = subprocess.Popen(cmd, cwd=REPO, env=self.env, stdout=log, stderr=subprocess.STDOUT)
        deadline = time.monotonic() + START_DEADLINE_S
        while READY_LINE not in self._output(this_run):
            if self.proc.poll() is not None:
                raise RuntimeError(f"daemon exited with {self.proc.returncode}: {self._output(this_run).decode()}")
            if time.monotonic() > deadline:
                self.stop()
                raise RuntimeError(f"daemon not ready within {START_DEADLINE_S} s: {self._output(this_run).decode()}")
            time.sleep(0.02)
        return self

    def _output(self, since: int) -> bytes:
        with self.log.open("rb") as log:
            log.seek(since)
            return log.read()

    def client(self, token: str | None = None, timeout: float = 30) -> httpx.Client:
        headers = {"Authorization": f"Bearer {token or self.token}"}
        return httpx.Client(base_url=self.url, headers=headers, timeout=timeout)

    def stop(self, sig: int = signal.SIGTERM) -> int:
        assert self.proc is not None
        if self.proc.poll() is None:
            self.proc.send_signal(sig)
            try:
                self.proc.wait(timeout=15)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        return self.proc.returncode


@pytest.fixture
def daemon(tmp_path: Path) -> Iterator[Daemon]:
    d = Daemon(tmp_path / "data").start()
    yield d
    d.stop()


@pytest.fixture
def api(daemon: Daemon) -> Iterator[httpx.Client]:
    with daemon.client() as client:
        yield client
