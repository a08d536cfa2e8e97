"""What the integration tests share: a manager of real PTY sessions; a registry of pages in a
real headless Chromium."""
from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import pytest
import pytest_asyncio

from lookout.browser.browser import BrowserHost
from lookout.browser.registry import PageRegistry
from lookout.core.events import EventBus
from lookout.terminal.registry import TerminalRegistry
from tests.support.terminals import LIMITS


@pytest.fixture
async def manager(tmp_path: Path) -> AsyncIterator[TerminalRegistry]:
    """Terminals on the avt engine in this test's directory, shut down after the test."""
    m = TerminalRegistry(tmp_path / "terminals", "avt", LIMITS, max_sessions=8)
    await m.start()
    yield m
    await m.stop_all()
    await m.shutdown()


@pytest_asyncio.fixture
async def pages(tmp_path: Path) -> AsyncIterator[PageRegistry]:
    """Pages in this test's directory (Chromium starts with the first page), shut down after the test."""
    registry = PageRegistry(tmp_path / "pages", BrowserHost(None), EventBus(), tmp_path / "uploads")
    try:
        yield registry
    finally:
        await registry.shutdown()
