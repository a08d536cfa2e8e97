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


async def test_a_workers_view_names_the_offset_of_the_screen_it_copied(tmp_path: Path, monkeypatch: Any) -> None:
    """Output fed to the engine on the loop while a worker's view waits for its turn is in the copy; the answer's
    raw_offset must then be that of the copy (the screen replayed to it is the same), not the one taken before."""
    registry = TerminalRegistry(tmp_path / "terminals", "avt", LIMITS, max_sessions=4)
    await registry.start()
    program = "echo ready; while read line; do echo \"got-$line\"; done"
    session = await registry.create(TerminalSpec(command=["sh", "-c", program], cols=80, rows=24))
    release = threading.Event()
    try:
        async with asyncio.timeout(60):
            while "ready" not in str(await session.screen(TEXT)):
                await asyncio.sleep(0.05)
        monkeypatch.setattr(screen_model, "ON_LOOP_CELLS", 0)  # every view in a worker
        blockers = [asyncio.ensure_future(screen_model.RENDERS.run(release.wait, 30)) for _ in range(2)]
        await asyncio.sleep(0.1)  # both of the pool's workers are busy: the view waits in its queue
        before = session.raw_offset
        view = asyncio.ensure_future(session.screen(TEXT))
        await asyncio.sleep(0.1)
        assert not view.done()
        session.send(text="marker\n")
        async with asyncio.timeout(60):
            while "got-marker" not in session.screen_model.text():  # a reader on the loop feeds the engine
                await asyncio.sleep(0.02)
        release.set()
        await asyncio.gather(*blockers)
        answer = await asyncio.wait_for(view, 60)
        assert isinstance(answer, dict)
        assert "got-marker" in answer["text"], "the copy was taken after the output was fed (the case under test)"
        assert answer["raw_offset"] > before
        replayed = await session.screen_model.view_at(TEXT, answer["raw_offset"], None)
        assert isinstance(replayed, dict) and replayed["text"] == answer["text"]
    finally:
        release.set()
        await session.stop()
        await registry.shutdown()
