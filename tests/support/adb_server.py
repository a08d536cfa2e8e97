"""A real adb server for the tests, on a free port, with its own HOME (so its keys stay in the test)."""
from __future__ import annotations

import os
import shutil
import socket
import subprocess
import time
from pathlib import Path

import adbutils

from tests.support.adb_fake import FakeDevice


def adb_binary() -> str:
    """Debian's `adb` when installed, else the one in adbutils' wheel."""
    return shutil.which("adb") or adbutils.adb_path()


def _free_port() -> int:
    while True:
        with socket.socket() as s:
            s.bind(("127.0.0.1", 0))
            port = s.getsockname()[1]
        if port not in (5037, 5555):
            return port


class AdbServer:
    """`adb nodaemon server` as a child process; stop() leaves nothing running."""

    def __init__(self, home: Path) -> None:
        self.home = Path(home)
        self.home.mkdir(parents=True, exist_ok=True)
        self.host, self.port = "127.0.0.1", _free_port()
        self.env = {**os.environ, "HOME": str(self.home), "ANDROID_USER_HOME": str(self.home / ".android"),
                    "ANDROID_ADB_SERVER_PORT": str(self.port), "ADB_MDNS": "0", "ADB_MDNS_AUTO_CONNECT": ""}  # fmt: skip
        self.proc: subprocess.Popen[bytes] | None = None

    def start(self) -> AdbServer:
        log = (self.home / "adb.log").open("ab")
        self.proc = subprocess.Popen([adb_binary(), "-P", str(self.port), "nodaemon", "server"], env=self.env,
                                     stdout=log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL)  # fmt: skip
        deadline = time.monotonic() + 20
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise RuntimeError(f"adb server exited: {(self.home / 'adb.log').read_text()}")
            with socket.socket() as probe:  # not adbutils: it would start a server on 5037 when refused
                if probe.connect_ex((self.host, self.port)) == 0:
                    return self
            time.sleep(0.05)
        raise RuntimeError("adb server did not start")

    def adb(self, *args: str, timeout: float = 30) -> str:
        done = subprocess.run([adb_binary(), "-P", str(self.port), *args], env=self.env, capture_output=True,
                              text=True, timeout=timeout)  # fmt: skip
        return done.stdout + done.stderr

    def devices(self) -> dict[str, str]:
        client = adbutils.AdbClient(self.host, self.port)
        return {info.serial: info.state for info in client.list()}

    def connect(self, fake: FakeDevice, timeout: float = 20) -> str:
        """Register the fake with the server; returns its serial once listed in the fake's mode."""
        serial = f"127.0.0.1:{fake.port}"
        self.adb("connect", serial, timeout=timeout)
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.devices().get(serial) == fake.mode:
                return serial
            time.sleep(0.05)
        raise RuntimeError(f"{serial} not listed as {fake.mode}: {self.devices()}")

    def disconnect(self, serial: str) -> None:
        self.adb("disconnect", serial)

    def stop(self) -> None:
        if self.proc is None:
            return
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        self.proc = None

    def __enter__(self) -> AdbServer:
        return self.start()

    def __exit__(self, *_: object) -> None:
        self.stop()
