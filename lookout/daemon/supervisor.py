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

With `--standby` it keeps a second daemon ready beside the one that serves: started, imported, its app built and
its tokenizer loaded, waiting on a socket pair for the supervisor's word, neither accepting nor holding anything.
When the daemon dies it is told `released` and takes over as a hot restart's new daemon does (the lock, the
terminals, then accepting), in the time adoption takes rather than a daemon's start, and another standby is
started NEXT_STANDBY_S later (it prepares at a lower CPU priority, lookout.daemon.priority). It costs the memory of a second daemon
(its RSS, about 130 MB with the tokenizer); it is replaced after `lookout restart` (it would run the old code),
and ended (SIGKILL: it holds nothing) when the supervisor ends.

A daemon that refuses to start (status 2: a setting, the data dir or its volume, a file others may read; its
reason is in the log just above) is not started again: the supervisor ends at once with that status, and so
when the data dir's lock is held by a process that is not lookout (status 1), so that the socket it holds
closes and connections are refused rather than left waiting, and a container's restart policy sees it.
"""

from __future__ import annotations

import ctypes
import os
import signal
import socket
import sys
import time
from collections.abc import Sequence
from pathlib import Path

from lookout.daemon.control import answers_as_lookout
from lookout.daemon.handover import HANDOVER_ENV
from lookout.daemon.listen import LISTEN_FD_ENV, bind
from lookout.daemon.lock import free, lock_holder, process_name
from lookout.daemon.serve import STANDBY_ENV, WARM_TOKENIZER_ENV

PR_SET_CHILD_SUBREAPER = 36
BACKOFF_S = (0.5, 1.0, 2.0, 5.0, 10.0)
"""Pauses before starting a daemon that died again soon after its start (a crash at start loops slowly)."""
STABLE_S = 30.0
"""A daemon that ran this long before it died is started again at once."""
REFUSED = 2
"""The status of a daemon that refused to start (`lookout serve`'s for a bad setting, data dir or file)."""
TAKEOVER_S = 10.0
"""How long a daemon that holds the lock after a takeover has to answer on daemon.sock."""
NEXT_STANDBY_S = 5.0
"""After a standby took over, the next one is started this much later: its preparation (about 2 s of CPU, at a
lower priority) took a fifth of a loaded machine's CPU while the take-over adopted the terminals and answered the
requests that waited for it. A daemon that dies within this time after a take-over is started again as one that
has no standby is."""


def _say(message: str) -> None:
    print(f"lookout supervise: {message}", file=sys.stderr, flush=True)


class Standby:
    """A daemon kept ready to take over (see the module's docstring): its pid and the supervisor's end of its
    socket pair."""

    def __init__(self, argv: Sequence[str], listening_fd: int) -> None:
        mine, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_STREAM)
        os.set_inheritable(theirs.fileno(), True)
        env = {**os.environ, LISTEN_FD_ENV: str(listening_fd), HANDOVER_ENV: str(theirs.fileno()), STANDBY_ENV: "1",
               WARM_TOKENIZER_ENV: "1"}  # fmt: skip
        try:
            self.pid = os.posix_spawn(sys.executable, [sys.executable, "-m", "lookout", *argv], env)
        finally:
            theirs.close()
        self._channel = mine

    def take_over(self) -> bool:
        """Tell it the daemon died; whether it could be told (it has not ended)."""
        try:
            self._channel.sendall(b'{"step":"released"}\n')
        except OSError:
            return False
        return True

    def end(self) -> None:
        """Kill it (it holds nothing) and close its channel."""
        try:
            os.kill(self.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        self.close()

    def close(self) -> None:
        self._channel.close()


class Supervisor:
    def __init__(self, serve_argv: Sequence[str], data_dir: Path, host: str, port: int, standby: bool = False) -> None:
        self.serve_argv = list(serve_argv)
        self.data_dir = data_dir
        self.sock = bind(host, port)
        self.daemon: int | None = None
        self.keeps_standby = standby
        self.standby: Standby | None = None
        self.served_by_standby: Standby | None = None
        """The standby that took over, whose channel stays open while it serves (it ignores what comes after)."""
        self.started_at = 0.0
        self.stopping: int | None = None
        """The signal that asked the supervisor to end."""
        self.crashes = 0

    def run(self) -> int:
        ctypes.CDLL(None, use_errno=True).prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0)
        for sig in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP):
            signal.signal(sig, self._on_signal)
        signal.signal(signal.SIGALRM, lambda _sig, _frame: self._start_standby())  # NEXT_STANDBY_S after a take-over
        self._start()
        self._start_standby()
        try:
            return self._follow()
        finally:
            self._end_standby()

    def _follow(self) -> int:
        """Wait for the daemon to end; start it again, or hand over to the standby, or end; the status."""
        while True:
            try:
                pid, status = os.wait()
            except ChildProcessError:
                return 0
            except InterruptedError:
                continue
            if self.standby is not None and pid == self.standby.pid:
                if self.stopping is None:  # else it was ended with the supervisor
                    _say(f"the standby (pid {pid}) ended ({os.waitstatus_to_exitcode(status)}); none is kept now")
                self.standby.close()
                self.standby = None
                continue
            if pid != self.daemon:
                continue  # a holder, or a daemon that was replaced: reaped
            code = os.waitstatus_to_exitcode(status)
            successor = None if free(self.data_dir) else lock_holder(self.data_dir)
            if successor is not None and successor != pid and self._ours(successor):  # `lookout restart`
                self.daemon, self.started_at = successor, time.monotonic()  # its time runs from its takeover
                _say(f"the daemon (pid {successor}) took over from pid {pid}")
                self._end_standby()  # it runs the code from before the restart
                self._start_standby()
                continue
            if self.stopping is not None:
                _say(f"the daemon (pid {pid}) stopped ({code})")
                return 0 if code in (0, -self.stopping) else 1
            self.daemon = None  # reaped: its pid may be anybody's now
            if code != REFUSED and successor is None and self._standby_takes_over(pid, code):
                continue
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

    def _standby_takes_over(self, pid: int, code: int) -> bool:
        """The daemon `pid` died: tell the standby to take over, and start another; whether one did. Not when it
        died soon after its start and so did the one before it (a crash loop: `_restart_after`'s pauses apply)."""
        ran = time.monotonic() - self.started_at
        standby = self.standby
        if standby is None or (self.crashes and ran < STABLE_S):
            return False
        self.standby = None
        if not standby.take_over():
            standby.end()
            return False
        self.crashes = 0 if ran >= STABLE_S else self.crashes + 1
        if self.served_by_standby is not None:
            self.served_by_standby.close()
        self.served_by_standby = standby
        self.daemon, self.started_at = standby.pid, time.monotonic()
        _say(f"the daemon (pid {pid}) died ({code}) after {ran:.1f} s; the standby (pid {standby.pid}) takes over")
        signal.setitimer(signal.ITIMER_REAL, NEXT_STANDBY_S)
        return True

    def _start_standby(self) -> None:
        if self.keeps_standby and self.standby is None and self.stopping is None:
            self.standby = Standby(self.serve_argv, self.sock.fileno())
            _say(f"started a standby (pid {self.standby.pid})")

    def _end_standby(self) -> None:
        if self.standby is not None:
            self.standby.end()
            self.standby = None

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
            if self.standby is not None:
                os.kill(self.standby.pid, signal.SIGKILL)  # it holds nothing; reaped and closed by `_follow`
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


def supervise(serve_argv: Sequence[str], data_dir: Path, host: str, port: int, standby: bool = False) -> int:
    try:
        supervisor = Supervisor(serve_argv, data_dir, host, port, standby)
    except OSError as exc:
        _say(f"cannot listen on {host}:{port}: {exc}")
        return 3
    return supervisor.run()
