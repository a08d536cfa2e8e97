"""A terminal's program on its PTY: starting it as the leader of a session of its own, reading what it wrote,
and the signals that end it (the stop ladder: hang up, terminate, kill, sent to its whole session)."""

from __future__ import annotations

import fcntl
import os
import signal
import struct
import termios

NONCE_FD = "LOOKOUT_NONCE_FD"
"""The variable that tells the shell which descriptor it reads its nonce from (the number is no secret)."""
STOP_LADDER = ((signal.SIGHUP, 1.0), (signal.SIGTERM, 1.0), (signal.SIGKILL, 2.0))
"""Each signal of the stop ladder, and how long the program has after it before the next one."""
READ_BYTES = 256 << 10
"""Most bytes read from the PTY at once, before they go to the journal."""
_BUFFER = bytearray(64 << 10)
"""Every read of the PTY lands here first: one buffer made before the fork, instead of a new 64 KB one for each
read (a holder's heap would keep that much dirty for good)."""


def set_size(fd: int, cols: int, rows: int) -> None:
    fcntl.ioctl(fd, termios.TIOCSWINSZ, struct.pack("HHHH", rows, cols, 0, 0))


def read_batch(fd: int, limit: int = READ_BYTES) -> tuple[bytes, bool]:
    """What `fd` holds now, up to about `limit` bytes, and whether the other side has hung up (EOF, or EIO:
    every holder of the slave side has closed it)."""
    chunks: list[bytes] = []
    total = 0
    view = memoryview(_BUFFER)
    while total < limit:
        try:
            n = os.readv(fd, [view])
        except BlockingIOError:
            return b"".join(chunks), False
        except OSError:
            return b"".join(chunks), True
        if not n:
            return b"".join(chunks), True
        chunks.append(bytes(view[:n]))
        total += n
    return b"".join(chunks), False


def open_pty() -> tuple[int, str]:
    """A new PTY: its master, and the name of its slave (which the program opens: `spawn`)."""
    master, slave = os.openpty()
    try:
        return master, os.ttyname(slave)
    finally:
        os.close(slave)


def spawn(argv: list[str], cwd: str, env: dict[str, str], pty: tuple[int, str], nonce: str | None) -> int:
    """Start `argv` as the leader of a new session on `pty` (`open_pty`), in `cwd`; its pid. An exec failure
    raises its OSError here.

    posix_spawn (vfork and exec, no copy of this process's pages, and exec failures reported to the caller):
    the new session (POSIX_SPAWN_SETSID) opens the PTY's slave by its name, which makes it the session's
    controlling terminal; every signal is back to its default (ignored signals stay ignored across exec:
    Python ignores SIGPIPE and SIGXFSZ, and a holder SIGINT and SIGHUP) and none is blocked. Only the terminal
    and the nonce's pipe go with the program."""
    nonce_fd = _pipe_holding(nonce + "\n") if nonce else None
    if nonce_fd is not None:
        env = {**env, NONCE_FD: str(nonce_fd)}
        os.set_inheritable(nonce_fd, True)
    actions: list[tuple[int | str, ...]] = [
        (os.POSIX_SPAWN_OPEN, 0, pty[1], os.O_RDWR, 0),
        (os.POSIX_SPAWN_DUP2, 0, 1),
        (os.POSIX_SPAWN_DUP2, 0, 2),
    ]
    actions += [(os.POSIX_SPAWN_CLOSE, fd) for fd in inheritable() if fd > 2 and fd != nonce_fd]
    here = os.open(".", os.O_RDONLY | os.O_CLOEXEC)
    try:
        os.chdir(cwd)  # the program starts where this process is (posix_spawn has no chdir of its own here)
        return os.posix_spawnp(argv[0], argv, env, file_actions=actions, setsid=True, setsigmask=(),
                               setsigdef=_DEFAULTED)  # fmt: skip
    finally:
        os.fchdir(here)
        os.close(here)
        if nonce_fd is not None:
            os.close(nonce_fd)


_DEFAULTED = frozenset(signal.valid_signals()) - {signal.SIGKILL, signal.SIGSTOP}


def inheritable() -> list[int]:
    """This process's descriptors that an exec would keep."""
    found = []
    for name in os.listdir("/proc/self/fd"):
        try:
            if os.get_inheritable(int(name)):
                found.append(int(name))
        except OSError:  # the listing's own descriptor, closed by now
            pass
    return found


def close_all_but(keep: set[int]) -> None:
    """Close every descriptor of this process but `keep`."""
    for name in os.listdir("/proc/self/fd"):
        fd = int(name)
        if fd not in keep:
            try:
                os.close(fd)
            except OSError:
                pass


def _pipe_holding(text: str) -> int:
    """The read end of a pipe that holds `text` (far less than a pipe's buffer) and has no writer left."""
    read_fd, write_fd = os.pipe2(os.O_CLOEXEC)
    try:
        os.write(write_fd, text.encode())
    finally:
        os.close(write_fd)
    return read_fd


def session_members(sid: int) -> list[int]:
    """The processes whose session is `sid` (from /proc; a process that just exited is skipped)."""
    members = []
    for entry in os.scandir("/proc"):
        if not entry.name.isdigit():
            continue
        try:
            with open(f"/proc/{entry.name}/stat", "rb") as f:
                fields = f.read().rsplit(b")", 1)[1].split()
        except OSError:
            continue
        if int(fields[3]) == sid:
            members.append(int(entry.name))
    return members


def signal_session(leader: int, sig: int) -> None:
    """Send `sig` to every process of the program's session (`leader` is its id): the foreground job,
    background jobs in process groups of their own, and the leader."""
    for pid in {*session_members(leader), leader}:
        try:
            os.kill(pid, sig)
        except (ProcessLookupError, PermissionError):
            pass
