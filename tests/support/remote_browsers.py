"""Browsers elsewhere for the tests, on loopback: a Playwright browser server (`playwright launch-server`, the
Node driver the Python package ships) and a Chromium with a remote debugging port (CDP)."""
from __future__ import annotations

import contextlib
import json
import os
import re
import signal
import subprocess
import sys
import time
from collections.abc import AsyncIterator
from pathlib import Path

from lookout.browser.browser import FLAGS, BrowserHost, Remote, find_executable
from lookout.browser.registry import PageRegistry
from lookout.core.events import EventBus

START_S = 60


class PlaywrightServer:
    """`playwright launch-server` with this machine's Chromium, on `port` of 127.0.0.1 at the path /lookout (so a
    server started again is found at the same endpoint)."""

    def __init__(self, workdir: Path, port: int) -> None:
        self.config = workdir / "launch-server.json"
        self.log = workdir / "launch-server.log"
        self.port = port
        self.endpoint = ""
        self.proc: subprocess.Popen[bytes] | None = None

    def start(self) -> PlaywrightServer:
        options = {"executablePath": find_executable(None), "args": list(FLAGS), "headless": True,
                   "host": "127.0.0.1", "port": self.port, "wsPath": "/lookout"}  # fmt: skip
        self.config.write_text(json.dumps(options))
        with self.log.open("wb") as log:
            self.proc = subprocess.Popen([sys.executable, "-m", "playwright", "launch-server", "--browser", "chromium",
                                          "--config", str(self.config)], stdout=log, stderr=subprocess.STDOUT,
                                         start_new_session=True)  # fmt: skip
        self.endpoint = _wait_for(self.log, re.compile(rb"(ws://127\.0\.0\.1:\d+/\S+)"), self.proc)
        return self

    def stop(self) -> None:
        _end(self.proc)


class CdpChromium:
    """Chromium with `--remote-debugging-port` on 127.0.0.1 and a profile of its own in `workdir`."""

    def __init__(self, workdir: Path) -> None:
        self.workdir = workdir
        self.log = workdir / "chromium.log"
        self.url = ""
        self.proc: subprocess.Popen[bytes] | None = None

    def start(self) -> CdpChromium:
        executable = find_executable(None)
        assert executable, "a system Chromium"
        argv = [executable, "--headless", *FLAGS, "--remote-debugging-address=127.0.0.1", "--remote-debugging-port=0",
                f"--user-data-dir={self.workdir / 'profile'}", "about:blank"]  # fmt: skip
        with self.log.open("wb") as log:
            self.proc = subprocess.Popen(argv, stdout=log, stderr=subprocess.STDOUT, start_new_session=True)
        ws = _wait_for(self.log, re.compile(rb"DevTools listening on (ws://127\.0\.0\.1:\d+)/"), self.proc)
        self.url = "http" + ws[2:]
        return self

    def stop(self) -> None:
        _end(self.proc)


@contextlib.asynccontextmanager
async def registry_elsewhere(workdir: Path, kind: str, port: int) -> AsyncIterator[PageRegistry]:
    """Pages on a browser elsewhere: `ws`, a Playwright browser server on `port`; `cdp`, a Chromium over CDP."""
    far = PlaywrightServer(workdir, port).start() if kind == "ws" else CdpChromium(workdir).start()
    registry = PageRegistry(workdir / "pages", BrowserHost(None, Remote(kind, far.endpoint if kind == "ws" else far.url)),
                            EventBus(), workdir / "uploads")  # fmt: skip
    try:
        yield registry
    finally:
        await registry.shutdown()
        far.stop()


def _end(proc: subprocess.Popen[bytes] | None) -> None:
    """End the process and everything it started (the driver's Node.js, Chromium's helpers)."""
    if proc is None:
        return
    with contextlib.suppress(ProcessLookupError):
        os.killpg(proc.pid, signal.SIGKILL)
    proc.wait(timeout=20)


def _wait_for(log: Path, pattern: re.Pattern[bytes], proc: subprocess.Popen[bytes]) -> str:
    deadline = time.monotonic() + START_S
    while time.monotonic() < deadline:
        found = pattern.search(log.read_bytes())
        if found:
            return found.group(1).decode()
        if proc.poll() is not None:
            raise RuntimeError(f"{proc.args!r} exited: {log.read_text(errors='replace')[-2000:]}")
        time.sleep(0.05)
    raise RuntimeError(f"{proc.args!r} did not start: {log.read_text(errors='replace')[-2000:]}")
