"""The edge to the adb server (adbutils, synchronous: call it from worker threads only).

lookout talks to the adb server it was told about and never starts one: adbutils runs `adb start-server`
when a connection is refused, so connections here are made without that fallback, and a server that
cannot be reached is an `Unavailable` error naming the address tried.

adbutils (with the requests and urllib3 it pulls in) is imported on the first adb call, in the worker thread
that makes it, not when the daemon starts: it costs about 0.1 s that a daemon answering its first request, or
never asked about a device, should not pay.
"""

from __future__ import annotations

import functools
import socket
import threading
from dataclasses import dataclass
from typing import TYPE_CHECKING

from lookout.core.errors import BackendFailure, BackendTimeout, Unavailable

if TYPE_CHECKING:
    from adbutils import AdbClient, AdbDevice

CONNECT_TIMEOUT_S = 3.0


@dataclass(frozen=True, slots=True)
class ShellResult:
    stdout: bytes
    stderr: bytes
    exit_code: int

    @property
    def text(self) -> str:
        return self.stdout.decode("utf-8", "replace")


@functools.cache
def _client_class() -> type[AdbClient]:
    """adbutils' client whose connections fail instead of starting a server (imports adbutils)."""
    from adbutils import AdbClient
    from adbutils._adb import AdbConnection

    class Connection(AdbConnection):
        def _safe_connect(self) -> socket.socket:
            return self._create_socket()

    class Client(AdbClient):
        def make_connection(self, timeout: float | None = None) -> AdbConnection:
            connection = Connection(self.host, self.port)
            if timeout:
                connection.conn.settimeout(timeout)
            return connection

    return Client


class Adb:
    """One adb server: the devices it knows, shell commands and file reads on them."""

    def __init__(self, host: str, port: int, timeout_s: float) -> None:
        self.host, self.port, self.timeout_s = host, port, timeout_s
        self._client: AdbClient | None = None
        self._client_lock = threading.Lock()
        self._devices: dict[str, AdbDevice] = {}

    @property
    def address(self) -> str:
        return f"{self.host}:{self.port}"

    def devices(self) -> list[tuple[str, str]]:
        """(serial, state) of every device the server knows, offline and unauthorized ones included."""
        with self._errors("list devices"):
            return [(info.serial, info.state) for info in self._adb_client().list()]

    def shell(self, serial: str, command: str, timeout_s: float | None = None) -> ShellResult:
        """Run `command` in the device's shell; stdout and stderr apart when the device has shell v2."""
        with self._errors(f"run {command.split()[0]!r} on {serial}"):
            result = self._device(serial).shell2(command, timeout=timeout_s or self.timeout_s, encoding=None, v2=True)
        stdout = result.stdout if (result.stdout or result.stderr) else result.output
        return ShellResult(stdout, result.stderr, result.returncode)

    def read_file(self, serial: str, path: str) -> bytes:
        with self._errors(f"read {path} on {serial}"):
            return self._device(serial).sync.read_bytes(path)

    def _device(self, serial: str) -> AdbDevice:
        """The device handle, kept so that its feature list (shell v2 or not) is asked once."""
        device = self._devices.get(serial)
        if device is None:
            device = self._devices[serial] = self._adb_client().device(serial)
        return device

    def _adb_client(self) -> AdbClient:
        """adbutils' client, built on the first adb call (concurrent first calls build one)."""
        with self._client_lock:
            if self._client is None:
                self._client = _client_class()(self.host, self.port, socket_timeout=self.timeout_s)
            return self._client

    def _errors(self, what: str) -> _AdbErrors:
        return _AdbErrors(self, what)


class _AdbErrors:
    """Turns adbutils' and the socket's exceptions into lookout's errors."""

    def __init__(self, adb: Adb, what: str) -> None:
        self.adb, self.what = adb, what

    def __enter__(self) -> None:
        return None

    def __exit__(self, kind: type[BaseException] | None, exc: BaseException | None, tb: object) -> None:
        if exc is None:
            return
        from adbutils.errors import AdbConnectionError, AdbError, AdbTimeout  # loaded by the call that raised

        if isinstance(exc, (AdbTimeout, TimeoutError)):
            raise BackendTimeout(f"adb did not answer within {self.adb.timeout_s:g} s trying to {self.what}") from exc
        if isinstance(exc, (AdbConnectionError, ConnectionError)):
            raise Unavailable(
                f"no adb server at {self.adb.address} ({exc}); start one with `adb -P {self.adb.port} start-server` "
                "or set LOOKOUT_ADB_HOST / LOOKOUT_ADB_PORT",
                adb_server=self.adb.address,
            ) from exc
        if isinstance(exc, EOFError):  # the server closed the stream in the middle of an answer
            raise Unavailable(
                f"the device went away while lookout tried to {self.what}: the adb server at {self.adb.address} "
                "ended the transfer (unplugged, disconnected, rebooting?); GET /v1/devices lists what is there now"
            ) from exc
        if isinstance(exc, AdbError):
            raise BackendFailure(f"adb failed to {self.what}: {exc}") from exc
