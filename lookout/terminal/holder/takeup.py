"""A holder takes up its terminal: the spec checked, the journal and the first size, the program released, then
the holder's loop (lookout.terminal.holder.loop) run until the program has ended; or `failed`, saying why."""

from __future__ import annotations

import os
import signal
import socket
from collections.abc import Callable
from typing import Any

from lookout.terminal.holder import holder_log, pty
from lookout.terminal.holder import protocol as proto
from lookout.terminal.holder.holder_log import log
from lookout.terminal.holder.journal import JournalWriter
from lookout.terminal.holder.loop import Holder, Started
from lookout.terminal.holder.pty import Ahead, release, set_size, signal_session
from lookout.terminal.holder.sizes import check_size


def start(spec: dict[str, Any], fds: list[int], ahead: Ahead) -> Started:
    """Take up the terminal `spec` describes, with the descriptors proto.SPEC_FDS names (stderr becomes the
    terminal's holder.log) and the PTY and process made `ahead` for its program (released by `run`). An
    OSError, ValueError, KeyError or TypeError says why it could not."""
    pty.check_program(spec)
    if len(fds) != len(proto.SPEC_FDS):
        raise ValueError(f"a spec comes with {len(proto.SPEC_FDS)} descriptors, not {len(fds)}")
    started_at = spec["started_at"]
    if type(started_at) not in (int, float):
        raise ValueError("started_at is a number")
    raw_fd, idx_fd, log_fd, _ = fds
    os.dup2(log_fd, 2)
    os.close(log_fd)
    holder_log.keep_to_cap()
    cols, rows = check_size(spec["cols"], spec["rows"])
    journal = JournalWriter(raw_fd, idx_fd, int(spec["max_journal_bytes"]), float(started_at))
    journal.record("r", f"{cols}x{rows}")
    set_size(ahead.master, cols, rows)
    return Started(journal, cols, rows, ahead.master, ahead.pid, os.getpid() if ahead.reaper else None)


def run(spec: dict[str, Any], fds: list[int], ahead: Ahead, daemon: socket.socket, taken: Callable[[], None]) -> None:
    """Be the holder `spec` describes (this process is in a session of its own), with the descriptors
    protocol.SPEC_FDS names, on the PTY and with the process made `ahead` (pty.fork_ahead), `daemon` a
    connection the daemon already has the other end of (greeted): release the program, call `taken`, then
    make the rest of the holder and run until the program has ended. One that cannot start says why on
    `daemon` (`failed`) and ends, and so does the process made ahead. stdin and stdout become /dev/null,
    stderr the terminal's holder.log."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGHUP, signal.SIG_IGN)
    try:
        started = start(spec, fds, ahead)
    except (OSError, ValueError, KeyError, TypeError) as exc:
        failed(daemon, (exc.strerror if isinstance(exc, OSError) else None) or str(exc))
        os._exit(1)
    try:
        release(ahead, spec)
    except OSError as exc:  # its process has ended already: the holder sees it go
        log(f"could not release the program: {exc.strerror}")
    taken()
    try:
        holder = Holder(spec, started, socket.socket(fileno=fds[3]), daemon)
    except Exception as exc:  # noqa: BLE001 (nothing could follow the program: it ends with its holder, and the daemon sees both go)
        signal_session(started.pid, signal.SIGKILL, started.reaper)
        failed(daemon, f"it could not follow the program: {exc!r}")
        os._exit(1)
    null = os.open(os.devnull, os.O_RDWR)
    for fd in (0, 1):
        os.dup2(null, fd)
    os.close(null)
    os.chdir("/")
    holder.run()


def failed(daemon: socket.socket, why: str) -> None:
    """Say on the daemon's connection why this holder could not start its terminal (and in its log)."""
    log(f"could not start: {why}")
    try:
        daemon.sendall(proto.encode("failed", message=why[:500]))
    except OSError:
        pass  # the daemon sees the connection end, and the terminal lost
