"""What the daemon and a terminal's holder say to each other, and where they meet.

A holder listens on a unix socket, `<data>/holders/<terminal id>.sock`, in a 0700 directory; both sides
reach it through `/proc/self/fd/<directory fd>/<name>`, so a data dir of any length works (a socket path
is limited to 108 bytes) and no link on the way is followed. Each side checks the other's credentials
(SO_PEERCRED): only the daemon's own user is served or trusted.

Messages are JSON objects, one per line, each with an `op`:

- daemon -> holder: `hello` {version}; `input` {data: base64, redact}; `answer` {data: base64} (a reply to a
  terminal query, written ahead of queued input, not recorded); `resize` {cols, rows}; `mark` {label};
  `stop` (the signal ladder); since version 2, `sync` {id}: read what the PTY holds now into the journal,
  then answer `synced`.
- holder -> daemon: `hello` {version, id, pid, size, cols, rows, exit, failure, started_at (version 2: the
  Unix time of the journal's t = 0)} with the PTY master attached (SCM_RIGHTS: the daemon reads the
  terminal's modes and foreground process from it, and never reads or writes through it); `out` {size,
  failure?} when the journal grew (coalesced: only the newest size matters; `failure` says why output is
  missing from it, a full disk); `synced` {id, size}: every byte the program wrote before the `sync` is in the
  journal, which is `size` bytes long; `exit` {code, size, signal?} once the program has exited and its
  output is all in the journal (`signal`: the rung of the stop ladder that ended it, when one did); `error`
  {message, refused?}: a message it refused (`refused`: its op; the connection then stays; without, the
  message was not the protocol at all, and the connection is closed); `failed` {message}: a new terminal's
  holder could not take up its spec (why), and ends without starting the program.

Every field a holder takes is checked (types, sizes within lookout.terminal.holder.sizes, lengths): a message it
does not accept is answered with an `error`, never applied. VERSION changes when a message changes meaning;
a daemon speaks every version in SUPPORTED, so a newer lookout adopts the holders an older one left running.
"""

from __future__ import annotations

import json
import os
import socket
import stat
import struct
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from pathlib import Path

VERSION = 2
SUPPORTED = frozenset({1, 2})
MAX_LINE = 4 << 20
"""The longest message accepted (an input of max_input_bytes, base64)."""
SUFFIX = ".sock"
SPEC_FDS = ("output.raw", "output.idx", "holder.log", "socket")
"""The descriptors that come with a holder's spec, in this order: its journal's two files
(lookout.terminal.holder.journal.open_journal), its log (its stderr) and its listening socket (`listen`). The
daemon makes them before the terminal is asked for (lookout.terminal.places), so a holder makes no file."""
SPARES = 2
"""Holders the fork server keeps forked and ready for a spec (lookout.terminal.holder.server): an open takes one
while the next is made."""


class ProtocolError(Exception):
    """The other side is not a lookout holder (or daemon) of this user speaking this protocol."""


class Refused(Exception):
    """A well-formed message that is not accepted (a size out of range, a field of the wrong type): answered
    with an `error` naming its op, never applied; the connection stays."""


def encode(op: str, **fields: Any) -> bytes:
    """One message; those of integers alone (the frequent `out` and `synced`) formatted by hand."""
    if all(type(value) is int for value in fields.values()):
        return ('{"op":"' + op + '"' + "".join(f',"{key}":{value}' for key, value in fields.items()) + "}\n").encode()
    return json.dumps({"op": op, **fields}, separators=(",", ":")).encode() + b"\n"


def decode(line: bytes) -> dict[str, Any]:
    try:
        message = json.loads(line)
    except (ValueError, RecursionError):  # RecursionError: nested deeper than the parser goes
        raise ProtocolError(f"not a JSON message: {line[:80]!r}") from None
    if not isinstance(message, dict) or not isinstance(message.get("op"), str):
        raise ProtocolError(f"not a message: {line[:80]!r}")
    return message


class LineBuffer:
    """Splits received bytes into messages."""

    def __init__(self) -> None:
        self._data = bytearray()

    def feed(self, data: bytes) -> list[dict[str, Any]]:
        self._data += data
        lines = []
        while (end := self._data.find(b"\n")) >= 0:
            lines.append(decode(bytes(self._data[:end])))
            del self._data[: end + 1]
        if len(self._data) > MAX_LINE:
            raise ProtocolError(f"a message longer than {MAX_LINE} bytes")
        return lines


def receive(sock: socket.socket) -> bytes | None:
    """What a non-blocking socket holds now: None when nothing yet, b"" when the other side has gone."""
    try:
        return sock.recv(65536)
    except BlockingIOError:
        return None
    except OSError:
        return b""


def socket_name(terminal_id: str) -> str:
    return terminal_id + SUFFIX


def open_dir(directory: str | Path) -> int:
    """A descriptor of the holders' directory (a real directory, never a link)."""
    return os.open(directory, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC)


def via_fd(dir_fd: int, name: str) -> str:
    return f"/proc/self/fd/{dir_fd}/{name}"


def listen(dir_fd: int, terminal_id: str) -> socket.socket:
    """A holder's listening socket, bound 0600 at its name in the holders' directory (`dir_fd`; what an
    earlier holder of that id left there is replaced)."""
    name = socket_name(terminal_id)
    try:
        os.unlink(name, dir_fd=dir_fd)
    except FileNotFoundError:
        pass
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM | socket.SOCK_CLOEXEC)
    try:
        sock.bind(via_fd(dir_fd, name))
        os.chmod(name, 0o600, dir_fd=dir_fd)  # (the directory is 0700: nobody else could reach it meanwhile)
        sock.listen(8)
    except OSError:
        sock.close()
        raise
    return sock


def peer_uid(sock: socket.socket) -> int:
    creds = sock.getsockopt(socket.SOL_SOCKET, socket.SO_PEERCRED, struct.calcsize("3i"))
    return int(struct.unpack("3i", creds)[1])


def check_socket(dir_fd: int, name: str) -> None:
    """Refuse a socket that is a link, not a socket, or not this user's (ProtocolError says which)."""
    info = os.lstat(name, dir_fd=dir_fd)
    if stat.S_ISLNK(info.st_mode):
        raise ProtocolError(f"{name} is a symbolic link, not a socket lookout made")
    if not stat.S_ISSOCK(info.st_mode):
        raise ProtocolError(f"{name} is not a socket")
    if info.st_uid != os.getuid():
        raise ProtocolError(f"{name} belongs to user {info.st_uid}, not to this daemon's user {os.getuid()}")


def connect(directory: Path, terminal_id: str, timeout: float) -> socket.socket:
    """A connection to a terminal's holder, checked (path, owner, peer credentials); OSError if nobody listens
    (the holder is gone), ProtocolError if what is there is not to be trusted. Blocking: call it in a thread."""
    dir_fd = open_dir(directory)
    try:
        name = socket_name(terminal_id)
        check_socket(dir_fd, name)
        sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM | socket.SOCK_CLOEXEC)
        sock.settimeout(timeout)
        try:
            sock.connect(via_fd(dir_fd, name))
            if (uid := peer_uid(sock)) != os.getuid():
                raise ProtocolError(f"the process behind {name} runs as user {uid}, not as this daemon's user")
        except BaseException:
            sock.close()
            raise
        return sock
    finally:
        os.close(dir_fd)


def check_greeting(greeting: dict[str, Any], terminal_id: str, pid: int | None, *, known: bool = True) -> None:
    """That a holder's greeting can be trusted as terminal `terminal_id`'s: a version this side speaks, its id,
    and its program's pid `pid` (any, when the terminal's record is not `known`). ProtocolError saying why."""
    if greeting["version"] not in SUPPORTED:
        raise ProtocolError(
            f"its holder speaks protocol version {greeting['version']}, this lookout speaks {sorted(SUPPORTED)}; "
            f"it is left running (pid {greeting.get('pid')}): end it with the lookout that started it, or with `kill`"
        )
    if greeting.get("id") != terminal_id or not isinstance(greeting.get("pid"), int):
        raise ProtocolError(f"its holder's greeting is not one of terminal {terminal_id}")
    if known and greeting["pid"] != pid:
        raise ProtocolError(f"its holder runs pid {greeting['pid']}, not the terminal's pid {pid}")


def send_hello(sock: socket.socket) -> None:
    """Greet a connected holder (its answer: `HelloReader`)."""
    try:
        sock.sendall(encode("hello", version=VERSION))
    except BrokenPipeError:  # what it said before it closed still tells what it is
        pass


class HelloReader:
    """A holder's answer to `hello`, taken as it comes: its line, and the PTY master sent with it."""

    def __init__(self) -> None:
        self._data = bytearray()
        self.master: int | None = None

    def take(self, chunk: bytes, fds: list[int]) -> bool:
        """Take what one receive gave; whether the answer is all here (its line, or the holder has closed)."""
        for fd in fds:
            if self.master is None:
                self.master = fd
            else:
                os.close(fd)
        self._data += chunk
        return not chunk or b"\n" in self._data or len(self._data) > MAX_LINE

    def greeting(self) -> tuple[dict[str, Any], int | None]:
        """The holder's hello and the PTY master it sent (None if none came); the master is closed when the
        answer is not a greeting (ProtocolError, ConnectionResetError)."""
        line, _, rest = bytes(self._data).partition(b"\n")
        try:
            if not self._data:  # it ended (its program exited) between our connect and its greeting
                raise ConnectionResetError("the holder closed the connection before its greeting")
            if not line:
                raise ProtocolError("the holder's greeting is incomplete")
            message = decode(line)
            if message["op"] != "hello" or not isinstance(message.get("version"), int):
                raise ProtocolError(f"the holder's first message is not a greeting: {line[:80]!r}")
            message["rest"] = rest
            return message, self.master
        except BaseException:
            self.close()
            raise

    def close(self) -> None:
        """Close the master it took (an answer not taken)."""
        if self.master is not None:
            os.close(self.master)
            self.master = None


def hello(sock: socket.socket) -> tuple[dict[str, Any], int | None]:
    """Greet a connected holder: its hello and the PTY master it sent (None if none came). Blocking, under the
    socket's timeout."""
    send_hello(sock)
    answer = HelloReader()
    try:
        while not answer.take(*socket.recv_fds(sock, 65536, 1)[:2]):
            pass
    except BaseException:
        answer.close()
        raise
    return answer.greeting()
