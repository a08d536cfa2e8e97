"""Exited terminals' records read ahead of a start (lookout.terminal.read_ahead): used only while none of the
files they were read from has changed, so a start lists every terminal as its files say now."""

from __future__ import annotations

import logging
import os
import re
import shutil
import time
from pathlib import Path

import pytest

from lookout.terminal.journal.persistence import load_meta, save_meta
from lookout.terminal.read_ahead import RECORDED_FROM
from lookout.terminal.registry import TerminalRegistry
from lookout.terminal.spec import TerminalSpec
from lookout.terminal.waits.waiting import compile_until
from tests.support.terminals import LIMITS


async def _ended(root: Path, count: int) -> list[str]:
    """`count` terminals whose programs printed a line and exited, in a registry that then stops."""
    first = TerminalRegistry(root, "avt", LIMITS, max_sessions=count)
    await first.start()
    made = [await first.create(TerminalSpec(command=f"echo ended-{n}; exit {n}", cols=80, rows=24))
            for n in range(count)]  # fmt: skip
    for session in made:
        assert (await session.wait(compile_until(exit=True), 0, 20_000)).matched
    await first.shutdown()
    return [s.id for s in made]


def _aged(root: Path, terminal_id: str, seconds: float = 30) -> None:
    then = time.time() - seconds
    for name in RECORDED_FROM:
        if (root / terminal_id / name).exists():
            os.utime(root / terminal_id / name, (then, then))


def _read_ahead_count(caplog: pytest.LogCaptureFixture) -> int:
    took_up = [r.getMessage() for r in caplog.records if r.getMessage().startswith("took up")]
    found = re.search(r"(\d+) read ahead", took_up[-1])
    assert found, took_up
    return int(found.group(1))


async def test_a_start_uses_the_records_read_ahead_only_while_their_files_are_unchanged(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    root = tmp_path / "terminals"
    kept, renamed, purged = await _ended(root, 3)
    for terminal_id in (kept, renamed, purged):
        _aged(root, terminal_id)
    before = TerminalRegistry(root, "avt", LIMITS, max_sessions=4)
    listed_before = {t["id"]: t for t in await _listed_after_start(before)}
    await before.shutdown()

    again = TerminalRegistry(root, "avt", LIMITS, max_sessions=4)
    await again.read_ahead()
    meta = load_meta(root / renamed)
    meta.name = "renamed-meanwhile"
    save_meta(root / renamed, meta)  # after the read ahead: its record is read again
    shutil.rmtree(root / purged)  # gone meanwhile: not listed
    caplog.set_level(logging.INFO, logger="lookout.terminal.registry")
    listed = {t["id"]: t for t in await _listed_after_start(again)}
    try:
        assert _read_ahead_count(caplog) == 1
        assert sorted(listed) == sorted((kept, renamed))
        assert listed[renamed]["name"] == "renamed-meanwhile"
        assert listed[kept] == listed_before[kept]
        assert listed[kept]["exit_code"] == 0 and listed[renamed]["exit_code"] == 1
    finally:
        await again.shutdown()


async def test_files_changed_within_the_quiet_time_are_not_read_ahead(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    root = tmp_path / "terminals"
    (fresh,) = await _ended(root, 1)
    again = TerminalRegistry(root, "avt", LIMITS, max_sessions=2)
    await again.read_ahead()  # its files were written just now
    caplog.set_level(logging.INFO, logger="lookout.terminal.registry")
    try:
        listed = await _listed_after_start(again)
        assert _read_ahead_count(caplog) == 0
        assert [t["id"] for t in listed] == [fresh] and listed[0]["status"] == "exited"
    finally:
        await again.shutdown()


async def _listed_after_start(registry: TerminalRegistry) -> list[dict[str, object]]:
    await registry.start()
    return await registry.describe_all()
