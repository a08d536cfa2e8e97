"""Fixtures shared by every test layer."""
from __future__ import annotations

import gc
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from starlette.testclient import TestClient

from lookout.daemon.lock import lock_holder
from tests.support.adb_server import AdbServer

sys.modules.setdefault("tests.conftest", sys.modules[__name__])
"""pytest loads this file as `conftest`; tests import it as `tests.conftest`: one module, so the daemons a test
starts (Daemon.started) are the ones its teardown stops, also when the test fails (two copies leaked them)."""

REPO = Path(__file__).resolve().parent.parent
pytest_plugins = ["tests.support.adb_fixtures"]
SLOW_SUITES = ("integration", "e2e", "security")
"""The folders of tests/ whose tests are marked `slow` (`make test-fast` leaves them out: it runs tests/unit)."""


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for item in items:
        if item.path.relative_to(REPO / "tests").parts[0] in SLOW_SUITES:
            item.add_marker(pytest.mark.slow)


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


TEST_HOME = Path(tempfile.mkdtemp(prefix="lookout-tests-home-"))
"""The HOME of this test run (an empty folder), set here before any test, daemon or terminal starts: every shell
the tests open (in this process, in a daemon, through a CLI) inherits it, so the machine's rc files (here root's
~/.bashrc runs `pyenv init`, whose `pyenv rehash` can wait 60 s on a lock) cannot slow or fail a test. A test of
rc files writes them into a HOME of its own and gives it in the terminal's `env`."""
os.environ["HOME"] = str(TEST_HOME)


def pytest_unconfigure(config: pytest.Config) -> None:
    shutil.rmtree(TEST_HOME, ignore_errors=True)


TOKEN = "test-token-0123456789"
"""The API token of the test daemons and of the in-process app."""
START_DEADLINE_S = 120
"""Generous: on a loaded 2-core machine a start has taken over 20 s; a daemon that exits is seen at once."""
READY_LINE = b"lookout: ready at "
"""What the daemon prints once it has taken the data dir over and its socket listens."""


class Daemon:
    """`lookout serve` as a subprocess on a free port with its own data dir and token."""

    started: list[Daemon] = []
    """Every daemon started in this test (stopped after it, whatever the test did)."""

    def __init__(self, data_dir: Path, token: str = TOKEN, **env: str) -> None:
        self.data_dir = data_dir
        self.token = token
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.env = {**os.environ, "LOOKOUT_TOKEN": token, **env}
        self.proc: subprocess.Popen[bytes] | None = None
        self.log = data_dir.parent / f"daemon-{self.port}.log"
        self.start_command: list[str] = []
        """Put in front of the daemon's command (e.g. prlimit ...)."""
        self.source = REPO
        """The source tree the daemon runs from (another checkout shows an upgrade)."""

    def start(self) -> Daemon:
        """Starts the daemon and returns once it printed its readiness line into `self.log`; a daemon that exits
        first is reported at once with its output."""
        cmd = [*self.start_command, sys.executable, "-m", "lookout", "serve", "--port", str(self.port),
               "--data-dir", str(self.data_dir)]  # fmt: skip
        with self.log.open("ab") as log:
            this_run = log.tell()  # a restarted daemon appends to the same log
            self.proc = subprocess.Popen(cmd, cwd=self.source, env=self.env, stdout=log, stderr=subprocess.STDOUT)
        Daemon.started.append(self)
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
        """Stop the daemon, and the one that replaced it if `lookout restart` did (its terminals go on under
        their holders: see `end_terminals`); the exit status of the one this started."""
        assert self.proc is not None
        if self.proc.poll() is None:
            self.proc.send_signal(sig)
            try:
                self.proc.wait(timeout=15)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        successor = lock_holder(self.data_dir)
        if successor is not None and successor != self.proc.pid:
            os.kill(successor, sig)
            deadline = time.monotonic() + 15
            while Path(f"/proc/{successor}").exists() and time.monotonic() < deadline:
                time.sleep(0.02)
            if Path(f"/proc/{successor}").exists():
                os.kill(successor, signal.SIGKILL)
        return self.proc.returncode

    def end_terminals(self) -> None:
        """End every terminal of the data dir, as `lookout kill --all` does (with or without the daemon)."""
        subprocess.run([sys.executable, "-m", "lookout", "kill", "--all", "--data-dir", str(self.data_dir)], cwd=REPO,
                       env=self.env, capture_output=True, timeout=60, check=False)  # fmt: skip

    def finish(self) -> None:
        """Stop the daemon and end its terminals (what a test's teardown does)."""
        self.stop()
        self.end_terminals()


@pytest.fixture(autouse=True)
def _end_holders(tmp_path: Path) -> Iterator[None]:
    """After each test, every daemon it started is stopped, and (terminals outlive their daemon: each has a
    holder process) every terminal it started under its tmp_path is ended, whatever the test did."""
    yield
    for daemon in Daemon.started:
        if daemon.proc is not None and daemon.proc.poll() is None:
            daemon.stop()
    Daemon.started.clear()
    from lookout.terminal.process.holders import NotEnded, kill

    for holders in tmp_path.rglob("holders"):
        for sock in holders.glob("*.sock"):
            try:
                kill(holders.parent, sock.name.removesuffix(".sock"), followed=False)  # its daemons are stopped
            except (OSError, NotEnded):  # planted by the test: not a holder of ours
                pass


@pytest.fixture
def daemon(tmp_path: Path) -> Iterator[Daemon]:
    d = Daemon(tmp_path / "data").start()
    yield d
    d.finish()


@pytest.fixture
def api(daemon: Daemon) -> Iterator[httpx.Client]:
    with daemon.client() as client:
        yield client


DEVICE_TIMEOUT_S = 5
"""`LOOKOUT_DEVICE_TIMEOUT_S` of `adb_daemon`: short, so that a test of an adb command that hangs ends soon."""


@pytest.fixture
def adb_daemon(tmp_path: Path, adb_server: AdbServer) -> Iterator[Daemon]:
    """The daemon using this test's real adb server (devices come from `make_device`)."""
    daemon = Daemon(tmp_path / "data", LOOKOUT_ADB_PORT=str(adb_server.port),
                    LOOKOUT_DEVICE_TIMEOUT_S=str(DEVICE_TIMEOUT_S)).start()  # fmt: skip
    yield daemon
    daemon.finish()


@pytest.fixture
def adb_api(adb_daemon: Daemon) -> Iterator[httpx.Client]:
    with adb_daemon.client() as client:
        yield client


@pytest.fixture
def app_api(tmp_path: Path) -> Iterator[TestClient]:
    """The app from `create_app`, in this process, behind Starlette's TestClient (an httpx.Client that speaks to
    the app's ASGI interface, with its lifespan run): for route tests that need no daemon process. Keep
    `daemon` for what the process matters to: signals, restarts, its environment and limits, real sockets,
    uvicorn's own timeouts. The data dir is `app_api.app.state.settings.data_dir`."""
    from lookout.config import Settings
    from lookout.server import create_app

    app = create_app(Settings(data_dir=tmp_path / "data", token=TOKEN))
    try:
        with TestClient(app, base_url="http://127.0.0.1", headers={"Authorization": f"Bearer {TOKEN}"}) as client:
            yield client
    finally:
        gc.unfreeze()  # the lifespan froze what was alive (the daemon's GC tuning); not for the test process
