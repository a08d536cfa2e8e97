"""The holder's log: the terminal's holder.log (its stderr), capped at LOG_CAP bytes as a whole once the holder
has taken it up (`keep_to_cap`), so that a holder that runs for months, or one a program keeps at its limits,
never fills the disk with it; before that (the fork server, on the daemon's stderr) nothing is capped."""

from __future__ import annotations

import os
import time

LOG_CAP = 256 * 1024
"""The most holder.log grows to (one line past it says that later lines are dropped)."""
_cap: int | None = None
"""The cap of the log on fd 2 (None: none)."""
_capped = False


def keep_to_cap() -> None:
    """Fd 2 is now this holder's holder.log: from here on it is kept to LOG_CAP bytes."""
    global _cap, _capped
    _cap, _capped = LOG_CAP, False


def log(message: str) -> None:
    """One line in holder.log, written straight to fd 2. A write the disk refuses (the log lives on the same
    full disk as the journal) is dropped: the log is never a reason for a holder to end. Once the file holds
    LOG_CAP bytes (after `keep_to_cap`), one last line says so and later ones are dropped."""
    global _capped
    if _capped:
        return
    line = _line(message)
    try:
        if _cap is not None and os.fstat(2).st_size + len(line) > _cap:
            _capped = True
            line = _line(f"holder.log is at its cap ({_cap} bytes): later lines are dropped")
        os.write(2, line)
    except OSError:
        pass


def _line(message: str) -> bytes:
    return f"{time.strftime('%Y-%m-%d %H:%M:%S')} holder: {message}\n".encode(errors="replace")
