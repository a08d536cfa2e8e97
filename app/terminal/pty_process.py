"""The process side of a terminal: spawn a command on a new PTY and inspect or signal it.

ptyprocess does the fork/exec; lookout then owns the master fd (non-blocking, read by the event loop) and
reaps the child itself through a pidfd, so ptyprocess's own blocking close/wait are never used.
"""

from __future__ import annotations

import fcntl
import os
import signal
import struct
import termios
from dataclasses import dataclass
from functools import partial

from ptyprocess import PtyProcess

_TIOCGPTN = getattr(termios, "TIOCGPTN", 0x80045430)  # Linux; Python's termios does not export it

# Syscalls (x86_64 and aarch64 numbers) in which a process waits for terminal input.
_READ_SYSCALLS = {"0", "63"}
_POLL_SYSCALLS = {"7", "23", "232", "270", "271", "281", "72", "73", "22"}


@dataclass(frozen=True, slots=True)
class TtyFlags:
    canonical: bool
    echo: bool


class PtyProcessHandle:
    """A spawned child with its PTY master."""

    def __init__(self, proc: PtyProcess) -> None:
        self._proc = proc
        self.pid: int = proc.pid
        self.fd: int = proc.fd
        os.set_blocking(self.fd, False)
        self.pts_name = _slave_name(self.fd)

    @classmethod
    def spawn(
        cls, argv: list[str], cwd: str, env: dict[str, str], cols: int, rows: int, pass_fd: int | None = None
    ) -> PtyProcessHandle:
        """Fork and exec `argv` on a new PTY; the child inherits no descriptor but its terminal and `pass_fd`.
        Raises FileNotFoundError or PermissionError from exec."""
        passed = () if pass_fd is None else (pass_fd,)
        proc = PtyProcess.spawn(
            argv, cwd=cwd, env=env, dimensions=(rows, cols), preexec_fn=partial(_prepare_child, passed), pass_fds=passed
        )
        return cls(proc)

    def pidfd(self) -> int:
        return os.pidfd_open(self.pid)

    def set_size(self, cols: int, rows: int) -> None:
        self._proc.setwinsize(rows, cols)

    def write(self, data: bytes) -> int:
        """Non-blocking write; returns the bytes accepted (0 when the PTY's input buffer is full)."""
        try:
            return os.write(self.fd, data)
        except BlockingIOError:
            return 0

    def tty_flags(self) -> TtyFlags | None:
        try:
            lflag = termios.tcgetattr(self.fd)[3]
        except (termios.error, OSError):
            return None
        return TtyFlags(canonical=bool(lflag & termios.ICANON), echo=bool(lflag & termios.ECHO))

    def foreground_pgid(self) -> int | None:
        try:
            return os.tcgetpgrp(self.fd)
        except OSError:
            return None

    def waits_for_input(self, pid: int) -> bool:
        """Whether process `pid` sleeps in a read of this terminal or in a poll/select (best effort)."""
        try:
            with open(f"/proc/{pid}/syscall") as f:
                fields = f.read().split()
        except OSError:
            return False
        if not fields or fields[0] == "running":
            return False
        if fields[0] in _POLL_SYSCALLS:
            return True
        if fields[0] in _READ_SYSCALLS and len(fields) > 1:
            try:
                target = os.readlink(f"/proc/{pid}/fd/{int(fields[1], 16)}")
            except (OSError, ValueError):
                return False
            return target == self.pts_name
        return False

    def signal_session(self, sig: int, leader: bool = True) -> None:
        """Send `sig` to every process of the terminal's session: the foreground job, background jobs in
        process groups of their own, and (unless it is already reaped: `leader=False`) the leader."""
        for pid in {*session_members(self.pid), *([self.pid] if leader else [])}:
            try:
                os.kill(pid, sig)
            except (ProcessLookupError, PermissionError):
                pass

    def reap(self) -> int | None:
        """The exit code if the child has exited (negative signal number if killed), else None."""
        try:
            pid, status = os.waitpid(self.pid, os.WNOHANG)
        except ChildProcessError:
            return -signal.SIGKILL
        if pid == 0:
            return None
        return os.waitstatus_to_exitcode(status)

    def close_fd(self) -> None:
        """Close the master (the kernel then hangs up the terminal)."""
        if self._proc.closed:
            return
        self._proc.closed = True  # keeps ptyprocess's __del__ from its blocking close()
        self._proc.fileobj.close()


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


def _prepare_child(passed: tuple[int, ...]) -> None:
    """In the child before exec: every signal back to its default (ignored signals stay ignored across
    exec: Python ignores SIGPIPE and SIGXFSZ, and a daemon started by nohup ignores SIGHUP) and none
    blocked; the descriptors in `passed` made inheritable."""
    for sig in signal.valid_signals():
        if sig not in (signal.SIGKILL, signal.SIGSTOP):
            try:
                signal.signal(sig, signal.SIG_DFL)
            except (OSError, ValueError):  # the C library's own real-time signals
                pass
    signal.pthread_sigmask(signal.SIG_SETMASK, [])
    for fd in passed:
        os.set_inheritable(fd, True)


def _slave_name(master_fd: int) -> str:
    """The /dev/pts path of the slave side of `master_fd` (TIOCGPTN)."""
    buf = fcntl.ioctl(master_fd, _TIOCGPTN, b"\0\0\0\0")
    return f"/dev/pts/{struct.unpack('I', buf)[0]}"
