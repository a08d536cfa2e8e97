"""The daemon's control socket, `<data>/daemon.sock`: how `lookout restart` reaches the daemon of a data dir.

Only the daemon that holds the data dir's lock listens there (a socket file left by one that crashed answers
nobody: `connection refused`), in the 0700 data dir, and serves only its own user (SO_PEERCRED); a connection
that says nothing for SILENT_S is closed, and a client follows no link planted there. One request a
connection, a JSON line: `{"op": "restart"}`, answered by progress lines (`{"step": "starting", "pid": N}`,
then `{"step": "serving", "pid": N}` or `{"error": "..."}`), `{"op": "status"}` (`{"pid", "version"}`), or
`{"op": "prune", "dry_run": bool}` (`lookout prune`: POST /v1/terminals/prune's answer).
"""

from __future__ import annotations

import asyncio
import json
import logging
import os
import socket
import struct
import time
from collections.abc import Awaitable, Callable, Iterator
from pathlib import Path
from typing import Any

from lookout.terminal.holder.protocol import ProtocolError, check_socket, open_dir, via_fd

SOCKET_FILE = "daemon.sock"
SILENT_S = 5.0
"""A connection that has not sent its request within this is closed."""
log = logging.getLogger("lookout")
Progress = Callable[[dict[str, Any]], Awaitable[None]]
Handler = Callable[[dict[str, Any], Progress], Awaitable[None]]


def _peer_uid(sock: socket.socket) -> int:
    creds = sock.getsockopt(socket.SOL_SOCKET, socket.SO_PEERCRED, struct.calcsize("3i"))
    return int(struct.unpack("3i", creds)[1])


class ControlServer:
    """Listens on the control socket while this daemon holds the data dir; `handle` answers each request."""

    def __init__(self, data_dir: Path, handle: Handler) -> None:
        self.path = data_dir / SOCKET_FILE
        self._handle = handle
        self._server: asyncio.AbstractServer | None = None

    async def start(self) -> None:
        dir_fd = open_dir(self.path.parent)
        sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM | socket.SOCK_CLOEXEC)
        try:
            try:
                os.unlink(self.path.name, dir_fd=dir_fd)  # a crashed daemon's: this one holds the lock now
            except FileNotFoundError:
                pass
            old = os.umask(0o177)
            try:
                sock.bind(via_fd(dir_fd, self.path.name))  # any length of data dir path (see holder.protocol)
            finally:
                os.umask(old)
            sock.listen(16)
        except OSError:
            sock.close()
            raise
        finally:
            os.close(dir_fd)
        self._server = await asyncio.start_unix_server(self._serve, sock=sock)

    def stop(self) -> None:
        """Stop listening (the file stays: the daemon that takes the data dir over binds it anew)."""
        if self._server is not None:
            self._server.close()
            self._server = None

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        sock = writer.get_extra_info("socket")

        async def progress(message: dict[str, Any]) -> None:
            writer.write(json.dumps(message).encode() + b"\n")
            await writer.drain()

        try:
            if sock is None or _peer_uid(sock) != os.getuid():
                return
            try:
                line = await asyncio.wait_for(reader.readline(), SILENT_S)
            except TimeoutError:
                return  # a connection that says nothing holds no descriptor for long
            try:
                request = json.loads(line)
            except ValueError:
                request = None
            if not isinstance(request, dict):
                await progress({"error": "not a request"})
                return
            await self._handle(request, progress)
        except (ConnectionError, OSError):
            pass
        except Exception:  # a fault in one request must not end the daemon; it is logged with its traceback
            log.exception("the control socket's request failed")
        finally:
            writer.close()


class NoDaemon(Exception):
    """No daemon serves the data dir."""


def request(data_dir: Path, message: dict[str, Any], timeout: float) -> Iterator[dict[str, Any]]:
    """Send `message` to the daemon of `data_dir`; yields its answers, a line at a time (blocking). NoDaemon
    when none listens."""
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as sock:
        sock.settimeout(timeout)
        try:
            dir_fd = open_dir(data_dir)
        except OSError as exc:
            raise NoDaemon(f"no lookout daemon serves {data_dir} ({exc.strerror})") from exc
        try:
            check_socket(dir_fd, SOCKET_FILE)  # a link planted there would lead to another data dir's daemon
            sock.connect(via_fd(dir_fd, SOCKET_FILE))
            if _peer_uid(sock) != os.getuid():
                raise NoDaemon(f"the process listening on {data_dir / SOCKET_FILE} runs as another user")
        except (FileNotFoundError, ConnectionRefusedError) as exc:
            raise NoDaemon(f"no lookout daemon serves {data_dir}") from exc
        except ProtocolError as exc:
            raise NoDaemon(f"refusing {data_dir / SOCKET_FILE}: {exc}") from exc
        finally:
            os.close(dir_fd)
        sock.sendall(json.dumps(message).encode() + b"\n")
        with sock.makefile("rb") as answers:
            for line in answers:
                try:
                    answer = json.loads(line)
                except ValueError:
                    continue
                if isinstance(answer, dict):
                    yield answer


def answers_as_lookout(data_dir: Path, pid: int, within_s: float) -> bool:
    """Whether process `pid` is the lookout daemon of `data_dir`: the daemon answering on its control socket
    says it is that pid (asked again until `within_s` has passed: a daemon listens there once it has
    started). A process that merely holds the lock file (any program can flock it) does not answer so."""
    deadline = time.monotonic() + within_s
    while True:
        try:
            if any(answer.get("pid") == pid for answer in request(data_dir, {"op": "status"}, 2.0)):
                return True
        except (NoDaemon, OSError):
            pass
        if time.monotonic() >= deadline:
            return False
        time.sleep(0.2)
