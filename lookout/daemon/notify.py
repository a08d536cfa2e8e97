"""sd_notify(3) without libsystemd: a datagram of `KEY=value` lines to `$NOTIFY_SOCKET`, when systemd runs the
daemon as `Type=notify` (nothing otherwise)."""

from __future__ import annotations

import os
import socket


def notify(message: str) -> None:
    address = os.environ.get("NOTIFY_SOCKET")
    if not address or address[0] not in "/@":
        return
    if address[0] == "@":  # an abstract socket
        address = "\0" + address[1:]
    try:
        with socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM | socket.SOCK_CLOEXEC) as sock:
            sock.connect(address)
            sock.sendall(message.encode())
    except OSError:
        pass
