"""What a test needs to know of a process by its pid."""

from __future__ import annotations

from pathlib import Path


def running(pid: int) -> bool:
    """Whether `pid` is a process that has not ended (not gone, not a zombie waiting to be reaped)."""
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] not in ("Z", "X")
    except OSError:
        return False
