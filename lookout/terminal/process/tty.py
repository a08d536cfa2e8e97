"""What the daemon reads from a terminal's PTY: its modes and its foreground process, through a duplicate of
the master that the terminal's holder sent (lookout.terminal.holder.protocol). The daemon never reads or writes
the terminal through it: output comes from the journal, input goes through the holder."""

from __future__ import annotations

import fcntl
import functools
import os
import struct
import termios
from dataclasses import dataclass

_TIOCGPTN = getattr(termios, "TIOCGPTN", 0x80045430)  # Linux; Python's termios does not export it

# Syscalls (x86_64 and aarch64 numbers) in which a process waits for terminal input.
_READ_SYSCALLS = {"0", "63"}
_POLL_SYSCALLS = {"7", "23", "232", "270", "271", "281", "72", "73", "22"}


@dataclass(frozen=True, slots=True)
class TtyFlags:
    canonical: bool
    echo: bool


class Tty:
    """The terminal of a program (`pid`, its session leader) seen through master descriptor `fd`."""

    def __init__(self, fd: int, pid: int) -> None:
        self.fd = fd
        self.pid = pid

    @functools.cached_property
    def pts_name(self) -> str:
        """The /dev/pts path of its slave side, "" when it cannot be learnt (asked when first needed: a
        take-over makes many Ttys)."""
        try:
            return _slave_name(self.fd)
        except OSError:
            return ""

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

    def close(self) -> None:
        try:
            os.close(self.fd)
        except OSError:
            pass


def _slave_name(master_fd: int) -> str:
    """The /dev/pts path of the slave side of `master_fd` (TIOCGPTN)."""
    buf = fcntl.ioctl(master_fd, _TIOCGPTN, b"\0\0\0\0")
    return f"/dev/pts/{struct.unpack('I', buf)[0]}"
