"""A real adb server for the tests: its own free port and HOME (so its keys stay in the test), no USB, no
mDNS, no emulator scan (so it sees only the fakes it is told to connect), and nothing left running after
stop(). It never starts or touches a server on 5037.
"""
from __future__ import annotations

import os
import re
import signal
import socket
import subprocess
import time
from pathlib import Path
from typing import Self

import adbutils

from tests.support.adb_fake import FakeDevice

# ADB_USB=0: no USB backend at all (also saves the ~3 s libusb scan that delays the first `host:devices`);
# ADB_LIBUSB=0 does the latter on older servers. ADB_MDNS=0: no mDNS discovery or auto-connect.
# ADB_EMU=0: no scan of the emulator ports 5555..5585.
ISOLATION = {"ADB_USB": "0", "ADB_LIBUSB": "0", "ADB_MDNS": "0", "ADB_EMU": "0"}


class AdbServerError(RuntimeError):
    """The server refused a request, or did not get where it was asked to in time."""


def adb_binary() -> str:
    """adbutils' choice: $ADBUTILS_ADB_PATH, then `adb` on PATH, then the binary in its wheel (adb 36)."""
    return adbutils.adb_path()


def _free_port() -> int:
    while True:
        with socket.socket() as s:
            s.bind(("127.0.0.1", 0))
            port = s.getsockname()[1]
        if port != 5037 and not 5554 <= port <= 5585:
            return port


def _recv_exact(sock: socket.socket, n: int) -> bytes:
    data = bytearray()
    while len(data) < n:
        chunk = sock.recv(n - len(data))
        if not chunk:
            raise ConnectionError("the adb server closed the connection")
        data += chunk
    return bytes(data)


class AdbServer:
    """`adb nodaemon server` as a child process on 127.0.0.1:<free port>."""

    def __init__(self, home: Path, port: int | None = None, listen_all: bool = False) -> None:
        """`listen_all`: `adb -a`, the server listens on every address (as for clients on other hosts)."""
        self.listen_all = listen_all
        self.home = Path(home)
        self.home.mkdir(parents=True, exist_ok=True)
        self.host, self.port = "127.0.0.1", port or _free_port()
        if self.port == 5037:
            raise ValueError("the test adb server never uses 5037")
        self.log = self.home / "adb.log"
        inherited = {k: v for k, v in os.environ.items() if not k.startswith(("ADB_", "ANDROID_"))}
        self.env = {**inherited, **ISOLATION, "HOME": str(self.home), "ANDROID_ADB_SERVER_PORT": str(self.port)}
        self.proc: subprocess.Popen[bytes] | None = None

    # ------------------------------------------------------------------ lifecycle

    def start(self, timeout: float = 20) -> Self:
        """Start the server and wait until it answers `host:version`."""
        with self.log.open("ab") as log:
            every = ["-a"] if self.listen_all else []
            self.proc = subprocess.Popen([adb_binary(), *every, "-P", str(self.port), "nodaemon", "server"], env=self.env,
                                         stdin=subprocess.DEVNULL, stdout=log, stderr=subprocess.STDOUT)  # fmt: skip
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise AdbServerError(f"adb server exited with {self.proc.returncode}: {self.log.read_text()}")
            try:
                self.request("host:version")
                return self
            except (OSError, AdbServerError):
                time.sleep(0.02)
        self.stop()
        raise AdbServerError(f"adb server did not answer on port {self.port}: {self.log.read_text()}")

    def stop(self) -> None:
        """`host:kill`, then SIGKILL if it lingers; then any adb process on this port is gone (idempotent)."""
        proc, self.proc = self.proc, None
        if proc is not None and proc.poll() is None:
            try:
                with socket.create_connection((self.host, self.port), timeout=2) as sock:
                    sock.sendall(b"0009host:kill")
                    sock.recv(4)
            except OSError:
                pass
            try:
                proc.wait(timeout=5)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()
        for pid in self.pids():  # e.g. a server an adb client forked on this port after ours died
            try:
                os.kill(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass

    def __enter__(self) -> Self:
        return self.start()

    def __exit__(self, *_: object) -> None:
        self.stop()

    @property
    def running(self) -> bool:
        return self.proc is not None and self.proc.poll() is None

    def pids(self) -> list[int]:
        """Every live adb process whose command line names this server's port (from /proc)."""
        pattern = re.compile(rf"(^|[\s:])({self.port})(\s|$)")
        found = []
        for entry in Path("/proc").iterdir():
            if not entry.name.isdigit():
                continue
            try:
                argv = (entry / "cmdline").read_bytes().rstrip(b"\0").split(b"\0")
            except OSError:
                continue
            args = b" ".join(argv[1:]).decode(errors="replace")
            if os.path.basename(argv[0]) == b"adb" and pattern.search(args):
                found.append(int(entry.name))
        return found

    # ------------------------------------------------------------------ requests

    def request(self, service: str, timeout: float = 5) -> str:
        """One host request (`host:version`, `host:devices`, ...) over the smart-socket protocol."""
        with socket.create_connection((self.host, self.port), timeout=timeout) as sock:
            sock.sendall(f"{len(service):04x}{service}".encode())
            status = _recv_exact(sock, 4)
            payload = _recv_exact(sock, int(_recv_exact(sock, 4), 16)).decode()
        if status != b"OKAY":
            raise AdbServerError(f"{service}: {payload}")
        return payload

    def adb(self, *args: str, timeout: float = 30) -> str:
        """Run the adb client against this server; returns its stdout and stderr."""
        self._require_running()
        done = subprocess.run([adb_binary(), "-P", str(self.port), *args], env=self.env, capture_output=True,
                              text=True, timeout=timeout, check=False)  # fmt: skip
        return done.stdout + done.stderr

    def _require_running(self) -> None:
        """The adb client starts a server of its own when none answers: never let it."""
        if not self.running:
            raise AdbServerError(f"the adb server on port {self.port} is not running")

    def devices(self) -> dict[str, str]:
        """{serial: state} as `adb devices` lists them."""
        lines = self.request("host:devices").splitlines()
        return dict(line.split("\t", 1) for line in lines if "\t" in line)

    def wait_for(self, serial: str, state: str | None, timeout: float = 10) -> None:
        """Wait until `serial` is listed in `state` (None: not listed at all)."""
        deadline = time.monotonic() + timeout
        while (current := self.devices().get(serial)) != state:
            if time.monotonic() > deadline:
                raise AdbServerError(f"{serial} is {current or 'not listed'}, not {state or 'gone'}: {self.devices()}")
            time.sleep(0.02)

    def connect(self, fake: FakeDevice, timeout: float = 10) -> str:
        """`adb connect` the fake; returns its serial once listed in the fake's mode (device/unauthorized/offline)."""
        self._require_running()
        serial = f"127.0.0.1:{fake.start()}"
        command = [adb_binary(), "-P", str(self.port), "connect", serial]
        client = subprocess.Popen(command, env=self.env, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                                  stderr=subprocess.STDOUT)  # fmt: skip
        output = b""
        try:
            self.wait_for(serial, fake.mode, timeout)
            if fake.mode != "offline":  # an offline device never answers: `adb connect` would wait 10 s
                output = client.communicate(timeout=timeout)[0]
        finally:
            if client.poll() is None:
                client.kill()
                client.communicate()
        if fake.mode != "offline" and f"to {serial}" not in output.decode(errors="replace"):
            raise AdbServerError(f"adb connect {serial}: {output!r}")
        return serial

    def disconnect(self, serial: str, timeout: float = 10) -> None:
        """`adb disconnect`, then wait until the serial is no longer listed."""
        self.adb("disconnect", serial, timeout=timeout)
        self.wait_for(serial, None, timeout)
