"""The holder's log, the terminal's holder.log (its stderr)."""

from __future__ import annotations

import os
import time


def log(message: str) -> None:
    """One line in holder.log, written straight to fd 2. A write the disk refuses (the log lives on the same
    full disk as the journal) is dropped: the log is never a reason for a holder to end."""
    line = f"{time.strftime('%Y-%m-%d %H:%M:%S')} holder: {message}\n".encode(errors="replace")
    try:
        os.write(2, line)
    except OSError:
        pass
