"""A hot restart's new daemon prepares at a lower CPU priority (imports, its app, the tokenizer: about 2 s of CPU),
so that on a loaded machine the daemon that still serves, and its clients, keep the CPU; it takes its priority
back before it accepts, or after PREPARING_AT_MOST_S whatever it is doing (at nice +10 beside 4 busy processes on 2
cores, preparing took 35-48 s instead of 8-14 s; a restart is not let take minutes on a busier machine). Only
where it can take it back: raising a priority again needs CAP_SYS_NICE or an RLIMIT_NICE that allows it (Docker's
default capabilities have neither), and a daemon left at a lower priority would serve slower for its whole life,
so there it prepares at its own priority, as before.

Linux keeps a nice value per thread; threads inherit their creator's. It is lowered before the new daemon's first
thread and taken back for every thread it has then."""

from __future__ import annotations

import os
import resource
import threading

PREPARING_NICE = 10
"""How much lower the new daemon's priority is while it prepares."""
PREPARING_AT_MOST_S = 10.0
"""How long it prepares at that priority at most."""
CAP_SYS_NICE = 23


def _can_raise_to(nice: int) -> bool:
    """Whether this process may set a thread's nice value back down to `nice` (lower is more priority)."""
    with open("/proc/self/status") as status:
        effective = next(int(line.split()[1], 16) for line in status if line.startswith("CapEff:"))
    if effective >> CAP_SYS_NICE & 1:
        return True
    soft, _ = resource.getrlimit(resource.RLIMIT_NICE)
    return soft == resource.RLIM_INFINITY or 20 - soft <= nice


def lower() -> int | None:
    """Lower this (still single-threaded) process's priority for its preparation; the nice value to take back
    later, or None where it could not be taken back (then nothing is lowered)."""
    own = os.getpriority(os.PRIO_PROCESS, 0)
    if not _can_raise_to(own):
        return None
    os.setpriority(os.PRIO_PROCESS, 0, min(own + PREPARING_NICE, 19))
    timer = threading.Timer(PREPARING_AT_MOST_S, take_back, (own,))
    timer.daemon = True
    timer.start()
    return own


def take_back(nice: int) -> None:
    """Give every thread of this process the nice value `nice` again."""
    for task in os.listdir("/proc/self/task"):
        try:
            os.setpriority(os.PRIO_PROCESS, int(task), nice)
        except ProcessLookupError:
            pass  # the thread ended meanwhile
