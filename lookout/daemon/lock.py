"""One daemon per data dir: `<data>/daemon.lock`, held with flock(2) by the daemon that serves the data dir,
holds its pid.

A second `lookout serve` finds the lock taken and exits at once, naming the running daemon, before it touches
anything (no adoption, no token, no file written). Whoever wants the running daemon (`lookout restart`, the
supervisor) asks the kernel which process holds the lock (/proc/locks), not a pid file: a pid a file names
may be anybody's by now, a lock the kernel says is held is held.
"""

from __future__ import annotations

import fcntl
import os
import time
from pathlib import Path

LOCK_FILE = "daemon.lock"
_FLAGS = os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW | os.O_CLOEXEC


class DaemonRunning(Exception):
    """Another daemon holds the data dir; `pid` is its pid (None when it cannot be told)."""

    def __init__(self, data_dir: Path, pid: int | None) -> None:
        who = f"pid {pid}" if pid is not None else "another process"
        super().__init__(f"a lookout daemon ({who}) already serves {data_dir}")
        self.pid = pid


class DataDirLock:
    """The data dir's lock, taken by `acquire` and let go by `release` (or when the process ends)."""

    def __init__(self, data_dir: Path) -> None:
        self.data_dir = data_dir
        self.path = data_dir / LOCK_FILE
        self._fd: int | None = None

    @property
    def held(self) -> bool:
        return self._fd is not None

    def acquire(self, wait_s: float = 0.0) -> None:
        """Take the lock (waiting up to `wait_s` for its holder to let go) and write this process's pid in it;
        DaemonRunning when another process keeps it."""
        fd = os.open(self.path, _FLAGS, 0o600)
        deadline = time.monotonic() + wait_s
        while True:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                break
            except BlockingIOError:
                if time.monotonic() >= deadline:
                    os.close(fd)
                    raise DaemonRunning(self.data_dir, lock_holder(self.data_dir)) from None
                time.sleep(0.01)
        os.ftruncate(fd, 0)
        os.pwrite(fd, f"{os.getpid()}\n".encode(), 0)
        self._fd = fd

    def release(self) -> None:
        """Let go of the lock (the file stays; it names nobody while no lock is held on it)."""
        if self._fd is not None:
            os.ftruncate(self._fd, 0)
            fcntl.flock(self._fd, fcntl.LOCK_UN)
            os.close(self._fd)
            self._fd = None


def free(data_dir: Path) -> bool:
    """Whether no process holds the data dir's lock: a shared lock taken and let go at once, without
    /proc/locks (whose read waits for the kernel's file-lock readers to leave: 8-15 ms as a daemon dies).
    Only for a moment nobody takes the lock without waiting for it (the supervisor, as its daemon died: the
    standby and a restarted daemon wait for it, `DataDirLock.acquire`'s `wait_s`)."""
    try:
        fd = os.open(data_dir / LOCK_FILE, os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC)
    except OSError:
        return True  # (no lock file: nobody ever held it)
    try:
        fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
    except BlockingIOError:
        return False
    finally:
        os.close(fd)  # (lets go of the shared lock)
    return True


def lock_holder(data_dir: Path) -> int | None:
    """The pid of the process that holds the data dir's lock (the daemon serving it), or None when none does."""
    try:
        info = os.stat(data_dir / LOCK_FILE, follow_symlinks=False)
        with open(data_dir / LOCK_FILE, "rb") as f:
            named = int(f.read(32).strip() or b"0")
    except (OSError, ValueError):
        return None
    device = f"{os.major(info.st_dev):02x}:{os.minor(info.st_dev):02x}:{info.st_ino}"
    try:
        with open("/proc/locks") as f:
            holders = {
                int(fields[4]) for line in f if (fields := line.split())[1:2] == ["FLOCK"] and fields[5] == device
            }
    except (OSError, ValueError, IndexError):
        return None
    if not holders:
        return None
    return named if named in holders else min(holders)


def process_name(pid: int) -> str:
    """The command name of process `pid` (as `ps -o comm` shows it), or "gone"."""
    try:
        with open(f"/proc/{pid}/comm", "rb") as f:
            return f.read(64).decode(errors="replace").strip()
    except OSError:
        return "gone"
