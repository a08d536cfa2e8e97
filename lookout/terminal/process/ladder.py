"""The stop ladder run by lookout itself on a terminal's program, when its holder cannot run it (killed with
`kill -9`, stopped, not answering): the holder's own rungs (lookout.terminal.holder.pty.STOP_LADDER: hang up,
terminate, kill, each with its grace period) sent to the program's whole session, climbed until the program
has exited; then whatever is left of its session is killed, as the holder does.

lookout knows the program's pid (meta.json): it is the leader of a session of its own. Nothing is signalled
unless the process with that pid is that program, a session leader that started when the program did, so a
pid that was given to another process is never signalled: its start in clock ticks after boot, with the
boot's id, as the daemon read them when the program started (`program_start` in meta.json); for terminals
whose meta lacks them, its start time in Unix time, within START_SLACK_S of when its holder started it. Once
the leader has exited, what is left in its session (background jobs) is still the terminal's: the kernel
does not give a pid to a new process while a session of that id has members.

Zombies count as gone: they run nothing, and their parent (the holder, or init) reaps them. Blocking (it
waits between rungs): call it in a thread.
"""

from __future__ import annotations

import os
import signal
import time
from collections.abc import Callable
from dataclasses import dataclass
from functools import cache

from lookout.terminal.holder.pty import STOP_LADDER, session_members, signal_session
from lookout.terminal.journal.persistence import TerminalMeta

START_SLACK_S = 5.0
"""How far a process's start time (/proc: whole seconds of boot time plus clock ticks) may be from when its
holder started it and still be the terminal's program."""
LATE_START_S = 30.0
"""For terminals whose meta does not say when their journal started: the most after `created_at` that the
program may have started (the time a holder has to start)."""
POLL_S = 0.05
_TICKS = os.sysconf("SC_CLK_TCK")


@dataclass(frozen=True, slots=True)
class Proc:
    state: str
    session: int
    ticks: int
    """When it started: clock ticks after boot."""
    boot: float
    """The Unix time of the boot (as the kernel says now)."""

    @property
    def alive(self) -> bool:
        return self.state not in ("Z", "X")

    @property
    def started(self) -> float:
        """When it started, in Unix time (to the second: the kernel's boot time is in whole seconds)."""
        return self.boot + self.ticks / _TICKS


@dataclass(frozen=True, slots=True)
class LadderOutcome:
    ended_by: str | None
    """The rung after which the program was gone (`SIGHUP`, `SIGTERM`, `SIGKILL`); None when nothing of it ran."""
    survivors: tuple[int, ...] = ()
    """Processes of its session still there after the last rung (the program is then not gone)."""


def _boot_time() -> float:
    with open("/proc/stat", "rb") as f:
        for line in f:
            if line.startswith(b"btime "):
                return float(line.split()[1])
    raise OSError("no btime in /proc/stat")


@cache
def _boot_id() -> str:
    """(Read once: it does not change while a process lives.)"""
    with open("/proc/sys/kernel/random/boot_id") as f:
        return f.read().strip()


def proc(pid: int, boot: float | None = None) -> Proc | None:
    """What /proc says of `pid` (None when there is no such process)."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as f:
            fields = f.read().rsplit(b")", 1)[1].split()
    except OSError:
        return None
    return Proc(fields[0].decode(), int(fields[3]), int(fields[19]), _boot_time() if boot is None else boot)


def program_start(pid: int) -> str | None:
    """What names the process `pid` for as long as it runs: `<boot id>:<start in clock ticks after boot>`
    (None when it has ended already). Stored in meta.json when the program starts."""
    found = proc(pid, 0.0)
    return f"{_boot_id()}:{found.ticks}" if found is not None and found.alive else None


def is_program(meta: TerminalMeta, found: Proc, pid: int) -> bool:
    """Whether `found` (the process `pid`) is the terminal's program: the leader of its own session, started
    when the program did."""
    if found.session != pid:
        return False
    if meta.program_start is not None:
        return meta.program_start == f"{_boot_id()}:{found.ticks}"
    first = meta.created_at - START_SLACK_S
    last = meta.journal_started_at if meta.journal_started_at is not None else meta.created_at + LATE_START_S
    return first <= found.started <= last + START_SLACK_S


def members(meta: TerminalMeta) -> list[int]:
    """The live processes of the terminal's program's session, its leader first when it runs; none when the
    pid is another process's now (the program, and its session, are gone)."""
    pid = meta.pid
    if pid is None or pid <= 1:  # init, or no pid: never the terminal's program
        return []
    boot = _boot_time()
    leader = proc(pid, boot)
    if leader is not None and leader.alive and not is_program(meta, leader, pid):
        return []
    live = [p for p in session_members(pid) if (found := proc(p, boot)) is not None and found.alive and p != pid]
    return ([pid] if leader is not None and leader.alive else []) + live


def program_runs(meta: TerminalMeta) -> bool:
    """Whether the terminal's program (its session leader) still runs (a few small reads of /proc)."""
    found = proc(meta.pid) if meta.pid is not None and meta.pid > 1 else None
    return found is not None and found.alive and meta.pid is not None and is_program(meta, found, meta.pid)


def end_program(meta: TerminalMeta) -> LadderOutcome:
    """Climb the stop ladder on the program's session until the program (its leader; when it has exited
    already, every process left of its session) is gone, then kill what is left of the session."""
    targets = members(meta)
    if not targets:
        return LadderOutcome(None)
    assert meta.pid is not None
    leader_ran = targets[0] == meta.pid

    def gone() -> bool:
        now = members(meta)
        return not now or (leader_ran and now[0] != meta.pid)

    ended_by = None
    for sig, grace in STOP_LADDER:
        signal_session(meta.pid, sig)
        if _until(gone, grace):
            ended_by = signal.Signals(sig).name
            break
    if ended_by is None:
        return LadderOutcome(None, tuple(members(meta)))
    if members(meta):  # nothing of the session may stay behind
        signal_session(meta.pid, signal.SIGKILL)
        _until(lambda: not members(meta), STOP_LADDER[-1][1])
    return LadderOutcome(ended_by, tuple(members(meta)))


def _until(condition: Callable[[], bool], timeout: float) -> bool:
    deadline = time.monotonic() + timeout
    while not condition():
        if time.monotonic() >= deadline:
            return False
        time.sleep(POLL_S)
    return True
