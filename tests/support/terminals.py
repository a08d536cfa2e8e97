"""Terminal parts for tests: the session limits of the integration tests, a scripted terminal for the wait
loop, and made-up screen deltas."""
from __future__ import annotations

import asyncio
import time

from lookout.core.hands import Ledger
from lookout.terminal.journal.deltas import Delta
from lookout.terminal.session import SessionLimits

LIMITS = SessionLimits(scrollback=200, max_journal_bytes=1 << 30, max_input_bytes=1 << 20)
"""The limits of the integration tests' real sessions."""


class NoBlocks:
    """The blocks of a terminal without shell integration."""

    def ended_after(self, offset: int) -> None:
        return None

    def prompt_after(self, offset: int) -> bool:
        return False


class FakeScreen:
    """A screen whose text the test writes."""

    def __init__(self) -> None:
        self.shown = ""

    def text(self) -> str:
        return self.shown


class FakeTerminal:
    """A Waitable whose output and screen the test writes."""

    def __init__(self) -> None:
        self.blocks = NoBlocks()
        self.screen_model = FakeScreen()
        self.ledger = Ledger()
        """The inputs the test records (lookout.core.hands)."""
        self.raw = b""
        self.current_state = "running"
        self.exited = False
        self.exit_code: int | None = None
        self.last_output_at = 0.0
        self.caught_up = 0
        """How often an answer caught up with the output first."""
        self._event = asyncio.Event()

    @property
    def raw_offset(self) -> int:
        return len(self.raw)

    def read_raw(self, offset: int, limit: int) -> bytes:
        return self.raw[offset : offset + limit]

    def state(self) -> str:
        return self.current_state

    stopping = False

    def shell_reading(self) -> bool:
        return self.current_state == "idle"

    async def catch_up(self) -> None:
        self.caught_up += 1

    async def changed(self, timeout: float) -> None:
        try:
            await asyncio.wait_for(self._event.wait(), timeout)
        except TimeoutError:
            pass
        self._event.clear()

    def write(self, data: bytes) -> None:
        self.raw += data
        self.last_output_at = time.monotonic()
        self._event.set()


def delta(changed: list[tuple[int, str]], cols: int = 80, rows: int = 24, t: float = 0.0, resized: bool = False) -> Delta:
    """A delta with these rows changed (the rest of it made up)."""
    return Delta(t=t, cols=cols, rows=rows, changed=tuple(changed), cursor=(0, 0, True), title="", alt_screen=False,
                 raw_offset=0, resized=resized)  # fmt: skip
