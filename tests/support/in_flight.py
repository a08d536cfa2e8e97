"""A request to the daemon that the test knows the daemon has read, for what must happen while one is in flight
(a stop, a kill -9), where a sleep would only guess: sent on a socket of the test's own, it is in the daemon's
hands once the kernel shows its bytes acknowledged and the daemon's end of the connection holding none unread
(/proc/net/tcp)."""

from __future__ import annotations

import json
import select
import socket
from pathlib import Path
from typing import Any

LOOPBACK = "0100007F"
"""127.0.0.1 as /proc/net/tcp writes it."""


def _queues() -> dict[tuple[int, int], tuple[int, int]]:
    """(local port, remote port) -> (bytes not yet acknowledged by the peer, bytes not yet read by the owner) of
    every TCP connection from 127.0.0.1 to 127.0.0.1."""
    found = {}
    for line in Path("/proc/net/tcp").read_text().splitlines()[1:]:
        local, remote, _, queues = line.split()[1:5]
        if local.startswith(LOOPBACK) and remote.startswith(LOOPBACK):
            tx, rx = (int(q, 16) for q in queues.split(":"))
            found[(int(local.split(":")[1], 16), int(remote.split(":")[1], 16))] = (tx, rx)
    return found


class InFlight:
    """`POST path` with the JSON `body` to the daemon on `port` (`body` None: `GET path`); `held`: only its line
    and headers are sent, its body once `send_body` is called (a request the daemon has begun and cannot end)."""

    def __init__(self, port: int, token: str, path: str, body: dict[str, Any] | None, held: bool = False) -> None:
        self.port = port
        self.sock = socket.create_connection(("127.0.0.1", port))
        self.mine = self.sock.getsockname()[1]
        self._body = b"" if body is None else json.dumps(body).encode()
        head = (f"{'GET' if body is None else 'POST'} {path} HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\n"
                f"Authorization: Bearer {token}\r\nConnection: close\r\n")
        if body is not None:
            head += f"Content-Type: application/json\r\nContent-Length: {len(self._body)}\r\n"
        self.sock.sendall(head.encode() + b"\r\n" + (b"" if held else self._body))

    def send_body(self) -> None:
        self.sock.sendall(self._body)

    def read_by_daemon(self) -> bool:
        queues = _queues()
        mine, theirs = queues.get((self.mine, self.port)), queues.get((self.port, self.mine))
        return mine is not None and theirs is not None and mine[0] == 0 and theirs[1] == 0

    def answered(self) -> bool:
        """Whether any of the answer has arrived (or the connection ended)."""
        return bool(select.select([self.sock], [], [], 0)[0])

    def answer(self, timeout: float = 60) -> tuple[int, dict[str, Any]] | None:
        """The status and JSON of the answer; None when the connection ended without one."""
        self.sock.settimeout(timeout)
        data = bytearray()
        try:
            while chunk := self.sock.recv(65536):
                data += chunk
        except ConnectionResetError:
            pass
        finally:
            self.sock.close()
        head, _, body = bytes(data).partition(b"\r\n\r\n")
        return (int(head.split()[1]), json.loads(body)) if head else None
