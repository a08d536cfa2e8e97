"""A daemon that takes over reads the timeline (every frame ever recorded is indexed) off the event loop, which
serves meanwhile (/healthz, connections): a read that waits for the loop to run would never end if it held it."""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Awaitable, Callable
from pathlib import Path

import pytest

from lookout.config import Settings
from lookout.server import create_app
from lookout.timeline.timeline import Timeline


class TakingOver:
    """A lifecycle that takes the data dir over at once (lookout.server.Lifecycle)."""

    released = False
    taking_over = True

    def __init__(self) -> None:
        self.adopted = asyncio.Event()

    async def prepare(self) -> None:
        pass

    async def take_over(self, adopt: Callable[[], Awaitable[None]]) -> None:
        await adopt()
        self.adopted.set()

    async def serving(self) -> None:
        pass


async def test_the_timeline_is_read_while_the_loop_runs(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    loop_ran = threading.Event()
    opened: list[bool] = []
    open_timeline = Timeline.open

    def slow_open(self: Timeline) -> None:
        opened.append(loop_ran.wait(10))  # the loop sets it: it cannot while this holds it
        open_timeline(self)

    monkeypatch.setattr(Timeline, "open", slow_open)
    lifecycle = TakingOver()
    app = create_app(Settings(data_dir=tmp_path / "data", token="t" * 16), lifecycle)
    async with app.router.lifespan_context(app):
        await asyncio.sleep(0.05)
        loop_ran.set()
        await asyncio.wait_for(lifecycle.adopted.wait(), 30)
    assert opened == [True]
