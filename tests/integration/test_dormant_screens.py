"""Exited terminals cost the daemon no session (lookout.terminal.dormant) and no screen engine
(lookout.terminal.screen.model.load) until asked for, and only the last few asked keep one: what is let go is
rebuilt from the files, the same, when asked again."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from lookout.core.errors import NotFound
from lookout.terminal import dormant
from lookout.terminal.journal import retention
from lookout.terminal.registry import TerminalRegistry
from lookout.terminal.screen import model as screen_model
from lookout.terminal.screen.layers import ViewOptions, parse_layers
from lookout.terminal.session import SessionLimits
from lookout.terminal.spec import TerminalSpec

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
        for tid in ids:
            await (await first.get(tid)).finished()
    await first.shutdown()

    again = TerminalRegistry(tmp_path / "terminals", "avt", LIMITS, max_sessions=8)
    await again.start()
    try:
        sessions = [await again.get(tid) for tid in ids]
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


async def _ended(registry: TerminalRegistry, count: int) -> list[str]:
    """`count` terminals whose programs printed a line and ended."""
    ids = []
    for n in range(count):
        spec = TerminalSpec(command=["sh", "-c", f"cd /tmp; echo ended-{n}-$((6*7))"], cols=40, rows=5)
        ids.append((await registry.create(spec)).id)
    async with asyncio.timeout(60):
        for tid in ids:
            await (await registry.get(tid)).finished()
    return ids


async def test_exited_terminals_of_an_earlier_run_cost_no_session_until_asked_for(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """After a restart, exited terminals are listed from small records (no session is built for them), their
    session is built from the files when one is asked for, and only the last KEPT asked for stay built; the
    listing says the same of each before, while and after its session is built."""
    monkeypatch.setattr(dormant, "KEPT", 2)
    first = TerminalRegistry(tmp_path / "terminals", "avt", LIMITS, max_sessions=8)
    await first.start()
    ids = await _ended(first, 4)
    await first.shutdown()

    again = TerminalRegistry(tmp_path / "terminals", "avt", LIMITS, max_sessions=8)
    await again.start()
    try:
        assert again.sessions() == [], "no session is built for an exited terminal at start"
        listed = await again.describe_all()
        assert [t["id"] for t in listed] == ids and {t["status"] for t in listed} == {"exited"}
        sessions = [await again.get(tid) for tid in ids]
        assert [s.describe(fresh=False) for s in sessions] == listed, "built, each says what its record said"
        assert [s.id for s in again.sessions()] == ids[2:], "the two asked for last stay built"
        assert await again.describe_all() == listed
        shown = await (await again.get(ids[0])).screen(TEXT)
        assert isinstance(shown, dict) and "ended-0-42" in "\n".join(shown["text"]), "built again, the same"
        assert [s.id for s in again.sessions()] == [ids[0], ids[3]]
        again.keep = retention.Retention(max_age_s=0, max_count=2, max_bytes=0)  # (after start: none pruned there)
        pruned = (await again.prune(dry_run=True))["pruned"]
        oldest = sorted(listed, key=lambda t: t["ended_at"])[:2]
        assert {p["id"] for p in pruned} == {t["id"] for t in oldest}, "the two that ended first, built or not"
    finally:
        await again.shutdown()


async def test_terminals_that_end_in_this_run_are_let_go_beyond_the_last_asked_for(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A daemon's memory does not grow with the terminals that end while it runs: beyond the KEPT exited
    terminals asked for last, sessions are let go (listed the same, from their records), and a purge removes
    one let go without building it."""
    registry = TerminalRegistry(tmp_path / "terminals", "avt", LIMITS, max_sessions=8)
    await registry.start()
    try:
        ids = await _ended(registry, 4)
        monkeypatch.setattr(dormant, "KEPT", 2)
        for session in registry.sessions():
            await session.screen_model.written()
        described = [s.describe(fresh=False) for s in registry.sessions()]
        assert await registry.describe_all() == described
        assert [s.id for s in registry.sessions()] == ids[2:]
        assert await registry.close(ids[0], purge=True) == described[0], "its facts, from its record"
        assert [s.id for s in registry.sessions()] == ids[2:], "not built to be purged"
        assert [t["id"] for t in await registry.describe_all()] == ids[1:]
        assert not (tmp_path / "terminals" / ids[0]).exists()
        with pytest.raises(NotFound):
            await registry.get(ids[0])
    finally:
        await registry.shutdown()


async def test_an_exited_terminal_shows_the_cwd_its_shell_reported_last_after_a_restart(tmp_path: Path) -> None:
    moved = tmp_path / "moved"
    moved.mkdir()
    first = TerminalRegistry(tmp_path / "terminals", "avt", LIMITS, max_sessions=8)
    await first.start()
    spec = TerminalSpec(command=["sh", "-c", f"printf '\\033]7;file://host{moved}\\007'; echo moved"], cols=40,
                        rows=5, cwd=str(tmp_path))  # fmt: skip
    tid = (await first.create(spec)).id
    async with asyncio.timeout(60):
        await (await first.get(tid)).finished()
    assert (await first.get(tid)).describe()["cwd"] == str(moved)
    await first.shutdown()

    again = TerminalRegistry(tmp_path / "terminals", "avt", LIMITS, max_sessions=8)
    await again.start()
    try:
        listed = {t["id"]: t for t in await again.describe_all()}
        assert listed[tid]["cwd"] == str(moved), "the listing from its record"
        assert (await again.get(tid)).describe()["cwd"] == str(moved), "its session built again from its files"
    finally:
        await again.shutdown()
