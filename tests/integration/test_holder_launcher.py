"""Holders forked ahead (app.terminal.holder_link.HolderLauncher and the fork server): a spare or the server
killed the way the OOM killer kills, and the next open still works. Real processes, real PTYs."""

from __future__ import annotations

import asyncio
import os
import signal
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from app.terminal.holder.protocol import SPARES
from app.terminal.registry import TerminalRegistry, TerminalSpec
from app.terminal.session import TerminalSession
from tests.support.polling import eventually
from tests.support.terminals import LIMITS


@pytest.fixture
async def registry(tmp_path: Path) -> AsyncIterator[TerminalRegistry]:
    registry = TerminalRegistry(tmp_path / "terminals", "avt", LIMITS, max_sessions=8)
    await registry.start()
    try:
        yield registry
    finally:
        await registry.shutdown()


def _children(pid: int) -> list[int]:
    found = []
    for entry in os.scandir("/proc"):
        if entry.name.isdigit():
            try:
                stat = Path(f"/proc/{entry.name}/stat").read_text()
            except OSError:
                continue
            if int(stat.rsplit(")", 1)[1].split()[1]) == pid:
                found.append(int(entry.name))
    return found


def _holders_of(server: int, sessions: list[TerminalSession]) -> tuple[list[int], list[int]]:
    """The fork server's children: the holders of `sessions`, and the others (its spare)."""
    holders = {int(Path(f"/proc/{s.meta.pid}/stat").read_text().rsplit(")", 1)[1].split()[1]) for s in sessions}
    children = _children(server)
    return [c for c in children if c in holders], [c for c in children if c not in holders]


async def _opens_and_runs(registry: TerminalRegistry) -> TerminalSession:
    session = await registry.create(TerminalSpec(command=["sh", "-c", "echo ran-$((40+2)); sleep 30"]))
    journal = session.directory / "output.raw"
    await asyncio.to_thread(eventually, lambda: b"ran-42" in journal.read_bytes(), what="the program's output")
    return session


async def test_spares_killed_before_their_spec_came_are_replaced_and_the_next_open_works(
    registry: TerminalRegistry,
) -> None:
    first = await _opens_and_runs(registry)
    server = next(
        c for c in _children(os.getpid()) if b"app.terminal.holder" in Path(f"/proc/{c}/cmdline").read_bytes()
    )
    await asyncio.to_thread(eventually, lambda: len(_holders_of(server, [first])[1]) == SPARES, what="the spares")
    spares = _holders_of(server, [first])[1]
    for spare in spares:
        os.kill(spare, signal.SIGKILL)
    await asyncio.to_thread(
        eventually, lambda: not any(Path(f"/proc/{s}").exists() for s in spares), what="the spares' end"
    )
    second = await _opens_and_runs(registry)
    assert second.meta.pid != first.meta.pid
    holders, _ = _holders_of(server, [first, second])
    assert len(holders) == 2 and not set(spares) & set(holders)


async def test_a_killed_fork_server_is_started_again_by_the_next_open(registry: TerminalRegistry) -> None:
    first = await _opens_and_runs(registry)
    server = next(
        c for c in _children(os.getpid()) if b"app.terminal.holder" in Path(f"/proc/{c}/cmdline").read_bytes()
    )
    os.kill(server, signal.SIGKILL)
    await asyncio.to_thread(eventually, lambda: server not in _children(os.getpid()), what="the server's end")
    second = await _opens_and_runs(registry)
    assert second.running and first.running  # the first terminal's holder outlived its server
