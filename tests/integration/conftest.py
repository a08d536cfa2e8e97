"""What the terminal integration tests share: session limits and a manager of real PTY sessions."""
from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from app.terminal.manager import TerminalManager
from app.terminal.session import SessionLimits

LIMITS = SessionLimits(scrollback=200, max_journal_bytes=1 << 30, max_input_bytes=1 << 20)


@pytest.fixture
async def manager(tmp_path: Path) -> AsyncIterator[TerminalManager]:
    """Terminals on the avt engine in this test's directory, shut down after the test."""
    m = TerminalManager(tmp_path / "terminals", "avt", LIMITS, max_sessions=8)
    await m.start()
    yield m
    await m.shutdown()
