"""What a test needs to know of a process by its pid, and of the stop ladder that ends one."""

from __future__ import annotations

import signal
from pathlib import Path

from lookout.terminal.holder.pty import STOP_LADDER

RUNGS = tuple(signal.Signals(sig).name for sig, _ in STOP_LADDER)
"""The names of the stop ladder's rungs, in order: what `ended_by` may say."""


def running(pid: int) -> bool:
    """Whether `pid` is a process that has not ended (not gone, not a zombie waiting to be reaped)."""
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] not in ("Z", "X")
    except OSError:
        return False


def rungs_from(name: str) -> tuple[str, ...]:
    """The `ended_by` lookout may give a program that the rung `name` ended: that rung or a later one (it names
    the rung after which it saw the program gone; on a loaded machine the next rung may come first)."""
    return RUNGS[RUNGS.index(name) :]
