"""When a holder reads its PTY: at once, or after a rest (a busy program is read at a pace).

A program that writes without a pause woke its holder, and the daemon through it, for every line: 100 programs
printing a line every 20 ms cost the holders 0.61-0.67 and the daemon 0.32-0.36 of a core. Once a program has
written for BUSY_S without a pause, its holder rests PACE_S after each read, and the next read takes what came
meanwhile in one (docs/terminals.md). Pure: the holder's loop (lookout.terminal.holder.loop) asks and acts.
"""

from __future__ import annotations

BUSY_S = 0.25
"""How long a program writes without a pause (no gap over `PACE_S`) before its holder reads it at a pace."""
PACE_S = 0.1
"""A busy program's PTY is read at most this often: its output waits in the PTY (its buffer, then the program's
writes, hold it back, as with any slow reader) and each read takes what came meanwhile in one. What the
program writes in answer to input is read at once, as is everything before a `sync`."""
FLOOD_BYTES = 32 << 10
"""A read of this much (half of what Linux's PTY holds between the program and its reader, 64 KiB) is a flood:
the PTY is read without rests for `FLOOD_HOLD_S` after it, so that a program that writes faster than a rest
lets through is not held back by it."""
FLOOD_HOLD_S = 2.0


class Pace:
    """One PTY's reads: `read` says after each whether to rest before the next; `attend` ends a rest."""

    def __init__(self) -> None:
        self.resting = False
        self._busy_since = self._last_output = self._flooded_until = 0.0

    def read(self, now: float, got: int) -> bool:
        """A read at `now` took `got` bytes: whether to rest `PACE_S` before the next (`resting`)."""
        if got >= FLOOD_BYTES:
            self._flooded_until = now + FLOOD_HOLD_S
        if got and not self.resting and now - self._last_output > PACE_S:  # a pause ended: a new run of output
            self._busy_since = now
        if got:
            self._last_output = now
        self.resting = bool(got) and now - self._busy_since >= BUSY_S and now >= self._flooded_until
        return self.resting

    def attend(self, now: float) -> None:
        """Input was written at `now`: read at once again (for another `BUSY_S`), so that what answers it is
        read as it comes."""
        self._busy_since = self._last_output = now
        self.resting = False
