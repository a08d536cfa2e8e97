"""A restarted daemon takes each terminal up from the checkpoint its last snapshot holds (a replay of almost
nothing: lookout.terminal.journal.persistence.SavedScreen.checkpoint), and still answers the same scrollback as
before the restart: the first answer that asks for scrollback has it rebuilt from the checkpoints (also while
the program goes on printing). Real holders, real PTYs."""

from __future__ import annotations

import asyncio
import json
import re
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from lookout.terminal.registry import TerminalRegistry
from lookout.terminal.screen import model as screen_model
from lookout.terminal.screen.layers import ViewOptions, parse_layers
from lookout.terminal.screen.replay import PastScreen, screen_at
from lookout.terminal.spec import TerminalSpec
from tests.support.terminals import LIMITS

TEXT = ViewOptions(layers=parse_layers("text"))
LINES = 3000
"""Lines printed before the restart: about 40 KB, under one checkpoint's worth (none is in checkpoints/)."""


async def _screen(registry: TerminalRegistry, tid: str, scrollback: int = 0) -> dict[str, Any]:
    shown = await (await registry.get(tid)).screen(TEXT, scrollback=scrollback)
    assert isinstance(shown, dict)
    return shown


async def _until_shown(registry: TerminalRegistry, tid: str, shown: Callable[[list[str]], bool]) -> None:
    async with asyncio.timeout(60):
        while not shown((await _screen(registry, tid))["text"]):
            await asyncio.sleep(0.05)


def _numbers(lines: list[str]) -> list[int]:
    return [int(m.group(1)) for line in lines if (m := re.fullmatch(r"line-(\d+)", line))]


async def test_a_restart_replays_from_the_snapshot_and_the_scrollback_is_the_same(tmp_path: Path) -> None:
    first = TerminalRegistry(tmp_path / "terminals", "avt", LIMITS, max_sessions=4)
    await first.start()
    program = f"seq -f line-%g 1 {LINES}; echo printed-$((6*7)); exec sleep 600"
    tid = (await first.create(TerminalSpec(command=["sh", "-c", program], cols=40, rows=10))).id
    await _until_shown(first, tid, lambda text: "printed-42" in text)
    before = await _screen(first, tid, scrollback=LIMITS.scrollback)
    await first.shutdown()  # the daemon goes, the program stays

    directory = tmp_path / "terminals" / tid
    saved = json.loads((directory / "screen.snapshot.json").read_text())
    assert not (directory / "checkpoints").exists() or not any((directory / "checkpoints").iterdir())
    assert 0 < saved["checkpoint"]["offset"] <= saved["raw_offset"]

    again = TerminalRegistry(tmp_path / "terminals", "avt", LIMITS, max_sessions=4)
    await again.start()
    try:
        model = (await again.get(tid)).screen_model
        assert model.good_cut == saved["checkpoint"]["offset"], "replayed from the snapshot's checkpoint, not from 0"
        screen = await _screen(again, tid)
        assert screen["text"] == before["text"]
        after = await _screen(again, tid, scrollback=LIMITS.scrollback)
        assert after["scrollback"] == before["scrollback"]
        assert len(after["scrollback"]) == LIMITS.scrollback and after["text"] == before["text"]
    finally:
        await again.stop_all()
        await again.shutdown()


async def test_the_scrollback_rebuilt_while_the_program_prints_runs_on_into_the_screen(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    def slow_screen_at(*args: Any, **kwargs: Any) -> PastScreen:  # output comes on while the rebuild runs
        past = screen_at(*args, **kwargs)
        time.sleep(0.3)
        return past

    monkeypatch.setattr(screen_model, "screen_at", slow_screen_at)
    first = TerminalRegistry(tmp_path / "terminals", "avt", LIMITS, max_sessions=4)
    await first.start()
    program = (
        f"seq -f line-%g 1 {LINES}; i={LINES}; while [ $i -lt 100000 ]; do i=$((i+1)); echo line-$i; sleep 0.02; done"
    )
    tid = (await first.create(TerminalSpec(command=["sh", "-c", program], cols=40, rows=10))).id
    await _until_shown(first, tid, lambda text: max(_numbers(text), default=0) > LINES + 10)
    await first.shutdown()
    saved = json.loads((tmp_path / "terminals" / tid / "screen.snapshot.json").read_text())
    top = _numbers(saved["text"])[0]  # lines before it are scrollback, which the snapshot's checkpoint has not

    again = TerminalRegistry(tmp_path / "terminals", "avt", LIMITS, max_sessions=4)
    await again.start()
    try:
        await asyncio.sleep(0.3)  # it prints on meanwhile
        offset = (await again.get(tid)).screen_model.offset
        shown = await _screen(again, tid, scrollback=LIMITS.scrollback)
        assert shown["raw_offset"] > offset, "output came while the scrollback was rebuilt"
        numbers = _numbers(shown["scrollback"] + shown["text"])
        assert len(shown["scrollback"]) == LIMITS.scrollback and numbers[0] < top < numbers[-1]
        assert numbers == list(range(numbers[0], numbers[0] + len(numbers))), "one run of lines, none lost or twice"
        await asyncio.sleep(0.5)  # and the screen that took the live one's place goes on from where that one was
        later = await _screen(again, tid, scrollback=LIMITS.scrollback)
        numbers = _numbers(later["scrollback"] + later["text"])
        assert (
            numbers == list(range(numbers[0], numbers[0] + len(numbers))) and later["raw_offset"] > shown["raw_offset"]
        )
    finally:
        await again.stop_all()
        await again.shutdown()
