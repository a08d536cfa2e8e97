"""A small text view is built on the event loop (lookout.terminal.screen.model.ON_LOOP_CELLS), and is the same
answer a worker builds; when a worker holds the engine the view waits for it in a worker, never on the loop.
Real holders, real PTYs."""

from __future__ import annotations

import asyncio
import threading
from pathlib import Path
from typing import Any

from lookout.terminal.registry import TerminalRegistry
from lookout.terminal.screen import model as screen_model
from lookout.terminal.screen.layers import ViewOptions, parse_layers
from lookout.terminal.session import TerminalSession
from lookout.terminal.spec import TerminalSpec
from tests.support.terminals import LIMITS

TEXT = ViewOptions(layers=parse_layers("text,cursor"))


async def _printed(tmp_path: Path) -> tuple[TerminalRegistry, TerminalSession]:
    registry = TerminalRegistry(tmp_path / "terminals", "avt", LIMITS, max_sessions=4)
    await registry.start()
    program = "printf 'one\\n\\033[1mtwo\\033[0m\\n'; echo printed-$((6*7)); exec sleep 600"
    session = await registry.create(TerminalSpec(command=["sh", "-c", program], cols=80, rows=24))
    async with asyncio.timeout(60):
        while True:
            if "printed-42" in str(await session.screen(TEXT)):
                break
            await asyncio.sleep(0.05)
    return registry, session


async def test_a_small_text_view_on_the_loop_is_the_workers_view(tmp_path: Path, monkeypatch: Any) -> None:
    registry, session = await _printed(tmp_path)
    try:
        on_loop = await session.screen(TEXT)
        monkeypatch.setattr(screen_model, "ON_LOOP_CELLS", 0)  # every view in a worker
        in_worker = await session.screen(TEXT)
        assert isinstance(on_loop, dict) and "two" in on_loop["text"]
        assert on_loop == in_worker
    finally:
        await session.stop()
        await registry.shutdown()


async def test_a_view_waits_for_a_worker_holding_the_engine_off_the_loop(tmp_path: Path) -> None:
    registry, session = await _printed(tmp_path)
    try:
        held, release = threading.Event(), threading.Event()

        def hold() -> None:
            with session.screen_model.lock:
                held.set()
                release.wait(10)  # a loop that waited here would be let go, and the view found done

        holder = threading.Thread(target=hold)
        holder.start()
        assert held.wait(10)
        view = asyncio.ensure_future(session.screen(TEXT))
        ticks = 0
        while ticks < 5:  # the loop goes on while the view waits for the engine
            await asyncio.sleep(0.01)
            ticks += 1
        assert not view.done(), "the view was answered while a worker held the engine"
        release.set()
        answer = await asyncio.wait_for(view, 60)
        holder.join()
        assert isinstance(answer, dict) and "printed-42" in answer["text"]
    finally:
        await session.stop()
        await registry.shutdown()
