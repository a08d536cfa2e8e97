"""`lookout supervise`: keeps a daemon running, for where nothing else does (a container's main process).

It binds the listening socket itself and holds it for the daemons it runs (as systemd's socket activation
does: a daemon that dies refuses no connection, they wait in the backlog), starts `lookout serve` with it,
and starts it again when it dies (kill -9, the OOM killer), so the terminals' holders, which outlive any
daemon, are adopted again. It is a child subreaper (PR_SET_CHILD_SUBREAPER): the holders and a daemon started
by `lookout restart` become its children when their parent ends, and it reaps them. A daemon that replaced
another (`lookout restart`) is found by the data dir's lock, and taken for lookout only when it is a process
this supervisor's daemons started and it answers as the daemon on `daemon.sock`: a lock any other process
holds is never taken for a daemon, nor sent a signal. SIGTERM and SIGINT are passed to the daemon, and the
supervisor ends with it (status 0 for a clean stop); SIGHUP is passed on (a hot restart).

A daemon that refuses to start (status 2: a setting, the data dir or its volume, a file others may read; its
reason is in the log just above) is not started again: the supervisor ends at once with that status, and so
when the data dir's lock is held by a process that is not lookout (status 1), so that the socket it holds
closes and connections are refused rather than left waiting, and a container's restart policy sees it.
"""

from __future__ import annotations

import ctypes
import os
import signal
import sys
import time
from collections.abc import Sequence
from pathlib import Path

from lookout.daemon.control import answers_as_lookout
from lookout.daemon.listen import LISTEN_FD_ENV, bind
from lookout.daemon.lock import lock_holder, process_name

PR_SET_CHILD_SUBREAPER = 36
BACKOFF_S = (0.5, 1.0, 2.0, 5.0, 10.0)
"""Pauses before starting a daemon that died again soon after its start (a crash at start loops slowly)."""
STABLE_S = 30.0
"""A daemon that ran this long before it died is started again at once."""
REFUSED = 2
"""The status of a daemon that refused to start (`lookout serve`'s for a bad setting, data dir or file)."""
TAKEOVER_S = 10.0
"""How long a daemon that holds the lock after a takeover has to answer on daemon.sock."""


def _say(message: str) -> None:
    print(f"lookout supervise: {message}", file=sys.stderr, flush=True)


class Supervisor:
    def __init__(self, serve_argv: Sequence[str], data_dir: Path, host: str, port: int) -> None:
        self.serve_argv = list(serve_argv)
        self.data_dir = data_dir
        self.sock = bind(host, port)
        self.daemon: int | None = None
        self.started_at = 0.0
        self.stopping: int | None = None
        """The signal that asked the supervisor to end."""
        self.crashes = 0

    def run(self) -> int:
        ctypes.CDLL(None, use_errno=True).prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0)
        for sig in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP):
            signal.signal(sig, self._on_signal)
        self._start()
        while True:
            try:
                pid, status = os.wait()
            except ChildProcessError:
                return 0
            except InterruptedError:
                continue
            if pid != self.daemon:
                continue  # a holder, or a daemon that was replaced: reaped
            code = os.waitstatus_to_exitcode(status)
            successor = lock_holder(self.data_dir)
            if successor is not None and successor != pid and self._ours(successor):  # `lookout restart`
                self.daemon, self.started_at = successor, time.monotonic()  # its time runs from its takeover
                _say(f"the daemon (pid {successor}) took over from pid {pid}")
                continue
            if self.stopping is not None:
                _say(f"the daemon (pid {pid}) stopped ({code})")
                return 0 if code in (0, -self.stopping) else 1
            self.daemon = None  # reaped: its pid may be anybody's now
            if code == REFUSED:
                _say(f"the daemon (pid {pid}) refused to start ({code}; the reason is above): not starting it again")
                return code
            if successor is not None and successor != pid:
                _say(f"the data dir's lock is held by pid {successor} ({process_name(successor)}), which is not a "
                     "lookout daemon this supervisor started: end it, or use another data dir")  # fmt: skip
                return 1
            self._restart_after(pid, code)
            if self.daemon is None:
                _say("asked to stop before the daemon was started again")
                return 0

    def _start(self) -> None:
        os.set_inheritable(self.sock.fileno(), True)
        env = {**os.environ, LISTEN_FD_ENV: str(self.sock.fileno())}
        pid = os.posix_spawn(sys.executable, [sys.executable, "-m", "lookout", *self.serve_argv], env)
        self.daemon, self.started_at = pid, time.monotonic()
        _say(f"started the daemon (pid {pid})")

    def _restart_after(self, pid: int, code: int) -> None:
        ran = time.monotonic() - self.started_at
        self.crashes = 0 if ran >= STABLE_S else self.crashes + 1
        pause = 0.0 if not self.crashes else BACKOFF_S[min(self.crashes, len(BACKOFF_S)) - 1]
        _say(f"the daemon (pid {pid}) died ({code}) after {ran:.1f} s; starting it again in {pause:g} s")
        deadline = time.monotonic() + pause
        while self.stopping is None and (left := deadline - time.monotonic()) > 0:
            time.sleep(min(left, 0.1))  # a signal does not cut a sleep short (PEP 475)
        if self.stopping is None:
            self._start()

    def _ours(self, pid: int) -> bool:
        """Whether `pid` is a lookout daemon this supervisor's daemons started: a descendant of this process
        (a daemon `lookout restart` started is its old daemon's child, then this subreaper's) that answers
        as the daemon on `daemon.sock`."""
        return _descends_from(pid, os.getpid()) and answers_as_lookout(self.data_dir, pid, TAKEOVER_S)

    def _on_signal(self, sig: int, _frame: object) -> None:
        if sig != signal.SIGHUP:
            self.stopping = sig
        holder = lock_holder(self.data_dir)
        target = holder if holder is not None and _descends_from(holder, os.getpid()) else self.daemon
        if target is not None:
            try:
                os.kill(target, sig)
            except ProcessLookupError:
                pass


def _descends_from(pid: int, ancestor: int) -> bool:
    """Whether process `pid` is `ancestor` or one of its descendants (by the parents /proc gives)."""
    for _ in range(64):
        if pid == ancestor:
            return True
        if pid <= 1:
            return False
        try:
            with open(f"/proc/{pid}/stat", "rb") as f:
                pid = int(f.read().rsplit(b")", 1)[1].split()[1])
        except (OSError, ValueError, IndexError):
            return False
    return False


def supervise(serve_argv: Sequence[str], data_dir: Path, host: str, port: int) -> int:
    try:
        supervisor = Supervisor(serve_argv, data_dir, host, port)
    except OSError as exc:
        _say(f"cannot listen on {host}:{port}: {exc}")
        return 3
    return supervisor.run()
