"""The daemon's listening socket: one the daemon was given, or one it binds.

A socket that outlives the daemon is what makes a restart invisible: connections that arrive while no daemon
accepts wait in the socket's backlog instead of being refused. It is given

- by systemd's socket activation (`LISTEN_FDS`, `LISTEN_PID`: the first socket is descriptor 3; see
  sd_listen_fds(3)), so that even a crash refuses nothing while systemd starts the daemon again;
- by the daemon before it (`lookout restart`: the new daemon inherits the old one's socket) or by
  `lookout supervise`, which holds it for the daemons it runs: `LOOKOUT_LISTEN_FD` names the descriptor.
"""

from __future__ import annotations

import ipaddress
import os
import socket
from dataclasses import dataclass

LISTEN_FD_ENV = "LOOKOUT_LISTEN_FD"
SYSTEMD_FIRST_FD = 3
BACKLOG = 4096
MAX_FD = 2**31 - 1


@dataclass(frozen=True, slots=True)
class Listener:
    sock: socket.socket
    origin: str
    """Where it came from: "bound", "systemd" or "inherited"."""
    address: tuple[str, int]
    """Where a client reaches it (a wildcard address as its loopback)."""

    @classmethod
    def of(cls, sock: socket.socket, origin: str) -> Listener:
        host, port = sock.getsockname()[:2]
        return cls(sock, origin, ("127.0.0.1" if host == "0.0.0.0" else "::1" if host == "::" else host, port))

    def loopback_only(self) -> bool:
        """Whether only this machine can reach the socket (bound to a loopback address, not a wildcard one),
        whichever way it came: a socket handed over is judged by the address it is bound to, not by settings."""
        address = ipaddress.ip_address(self.sock.getsockname()[0])
        if isinstance(address, ipaddress.IPv6Address) and address.ipv4_mapped is not None:
            address = address.ipv4_mapped
        return address.is_loopback

    def inheritable_fd(self) -> int:
        """Its descriptor, made inheritable (to pass it to the next daemon)."""
        fd = self.sock.fileno()
        os.set_inheritable(fd, True)
        return fd


def listener(host: str, port: int) -> Listener:
    """The socket to serve on: systemd's, else an inherited one, else a new one bound to host:port. A socket
    handed over must be a listening TCP socket (ValueError says what it is instead)."""
    if _systemd_fds() >= 1:
        return Listener.of(_adopt(SYSTEMD_FIRST_FD, "LISTEN_FDS"), "systemd")
    inherited = os.environ.pop(LISTEN_FD_ENV, None)
    if inherited is not None:
        if not (inherited.isdigit() and int(inherited) <= MAX_FD):
            raise ValueError(f"{LISTEN_FD_ENV}={inherited[:40]!r} is not a descriptor number")
        return Listener.of(_adopt(int(inherited), LISTEN_FD_ENV), "inherited")
    return Listener.of(bind(host, port), "bound")


def bind(host: str, port: int) -> socket.socket:
    """A new listening socket on host:port (the address may be reused at once after a crash)."""
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM)
    try:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind((host, port))
        sock.listen(BACKLOG)
    except OSError:
        sock.close()
        raise
    return sock


def _systemd_fds() -> int:
    """How many sockets systemd passed to this process (0 when none, or when they were meant for another:
    LISTEN_PID names the process they are for); the variables are unset, as sd_listen_fds(1) does."""
    pid, count = os.environ.pop("LISTEN_PID", None), os.environ.pop("LISTEN_FDS", None)
    os.environ.pop("LISTEN_FDNAMES", None)
    if pid is None or count is None or not pid.isdigit() or int(pid) != os.getpid():
        return 0
    return int(count) if count.isdigit() else 0


def _adopt(fd: int, source: str) -> socket.socket:
    try:
        sock = socket.socket(fileno=fd)
    except OSError as exc:
        raise ValueError(f"{source}: descriptor {fd} is not a socket ({exc.strerror})") from None
    if sock.type != socket.SOCK_STREAM or sock.family not in (socket.AF_INET, socket.AF_INET6):
        raise ValueError(f"{source}: descriptor {fd} is not a TCP socket")
    if not sock.getsockopt(socket.SOL_SOCKET, socket.SO_ACCEPTCONN):
        raise ValueError(f"{source}: descriptor {fd} is not listening")
    os.set_inheritable(fd, False)
    return sock
