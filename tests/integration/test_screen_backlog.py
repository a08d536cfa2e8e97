"""A screen read after a restart that left a large backlog (a flood the program wrote while no daemon ran) answers
within its time (lookout.terminal.facts.SCREEN_CATCH_UP_S) with what was taken in, and says how far short it is;
once the rest is taken in, the screen is whole and says nothing more. Real holders, real PTYs."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from lookout.terminal import session as session_module
from lookout.terminal.facts import behind
from lookout.terminal.registry import TerminalRegistry
from lookout.terminal.screen.layers import ViewOptions, parse_layers
from lookout.terminal.spec import TerminalSpec
from tests.support.polling import eventually
from tests.support.processes import running
from tests.support.terminals import LIMITS

TEXT = ViewOptions(layers=parse_layers("text"))
FLOOD = 24_000_000


async def test_a_screen_read_short_of_a_large_backlog_answers_what_it_took_in_and_says_so(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    first = TerminalRegistry(tmp_path / "terminals", "avt", LIMITS, max_sessions=4)
    await first.start()
    flood = f"sleep 1; head -c {FLOOD} /dev/zero | tr '\\0' x; echo; echo flooded-$((6*7))"
    left = await first.create(TerminalSpec(command=["sh", "-c", flood], cols=80, rows=24))
    await first.shutdown()  # the daemon goes; the program floods, then ends, with nobody following it
    journal = tmp_path / "terminals" / left.id / "output.raw"
    await asyncio.to_thread(
        eventually, lambda: journal.stat().st_size > FLOOD and not running(left.meta.pid), what="the flood"
    )
    monkeypatch.setattr(session_module, "SCREEN_CATCH_UP_S", 0.0)
    again = TerminalRegistry(tmp_path / "terminals", "avt", LIMITS, max_sessions=4)
    await again.start()
    try:
        adopted = await again.get(left.id)
        short = await adopted.screen(TEXT)
        assert isinstance(short, dict) and "behind" in short, short.keys()
        assert short["behind"]["raw_size"] == journal.stat().st_size
        assert short["behind"]["bytes"] == short["behind"]["raw_size"] - short["raw_offset"] > 0
        assert "read the screen again" in short["behind"]["note"]
        await asyncio.wait_for(adopted.finished(), 120)  # the rest is taken in meanwhile
        whole = await adopted.screen(TEXT)
        assert isinstance(whole, dict) and "behind" not in whole
        assert "flooded-42" in "\n".join(whole["text"]) and whole["raw_offset"] == journal.stat().st_size
    finally:
        await again.shutdown()


def test_behind_is_said_only_when_the_read_stopped_short() -> None:
    assert behind(None, 500) == {} and behind(500, 500) == {}
    said = behind(800, 500)["behind"]
    assert said["raw_size"] == 800 and said["bytes"] == 300 and "raw_offset 500" in said["note"]
