"""Exited terminals cost the daemon no screen engine until asked for, and only the last few asked keep one
(lookout.terminal.screen.model.load): a screen let go is rebuilt from the files, the same, when asked again."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from lookout.terminal.registry import TerminalRegistry, TerminalSpec
from lookout.terminal.screen import model as screen_model
from lookout.terminal.screen.layers import ViewOptions, parse_layers
from lookout.terminal.session import SessionLimits

LIMITS = SessionLimits(scrollback=200, max_journal_bytes=1 << 30, max_input_bytes=1 << 20)
TEXT = ViewOptions(layers=parse_layers("text"))


async def test_dormant_screens_are_loaded_when_asked_and_only_the_last_few_kept(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(screen_model, "DORMANT_KEPT", 2)
    first = TerminalRegistry(tmp_path / "terminals", "avt", LIMITS, max_sessions=8)
    await first.start()
    ids = []
    for n in range(4):
        spec = TerminalSpec(command=["sh", "-c", f"echo screen-{n}-$((6*7))"], cols=40, rows=5)
        ids.append((await first.create(spec)).id)
    async with asyncio.timeout(60):
        while not all(first.get(tid).exited for tid in ids):
            await asyncio.sleep(0.05)
    await first.shutdown()

    again = TerminalRegistry(tmp_path / "terminals", "avt", LIMITS, max_sessions=8)
    await again.start()
    try:
        sessions = [again.get(tid) for tid in ids]
        assert all(s.screen_model.engine is None for s in sessions), "no engine until a screen is asked for"
        for n, session in enumerate(sessions):
            shown = await session.screen(TEXT)
            assert isinstance(shown, dict) and f"screen-{n}-42" in "\n".join(shown["text"]), shown
        assert [s.screen_model.engine is not None for s in sessions] == [False, False, True, True]
        shown = await sessions[0].screen(TEXT)
        assert isinstance(shown, dict) and "screen-0-42" in "\n".join(shown["text"]), "rebuilt the same"
        assert sum(s.screen_model.engine is not None for s in sessions) == 2
    finally:
        await again.shutdown()
