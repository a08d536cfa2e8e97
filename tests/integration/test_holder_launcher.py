"""Holders forked ahead (lookout.terminal.process.holder_link.HolderLauncher and the fork server): a spare or the server
killed the way the OOM killer kills, and the next open still works; a holder that cannot take up its spec says
why, and the terminal ends with that reason. Real processes, real PTYs."""

from __future__ import annotations

import asyncio
import os
import shutil
import signal
import socket
import time
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from lookout.terminal.holder.protocol import SPARES
from lookout.terminal.journal.follower import JournalFollower
from lookout.terminal.process.holder_link import HolderLauncher
from lookout.terminal.process.program import TerminalProcess
from lookout.terminal.registry import TerminalRegistry
from lookout.terminal.session import TerminalSession
from lookout.terminal.spec import TerminalSpec
from tests.support.polling import eventually
from tests.support.processes import running
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


def _parent(pid: int) -> int:
    return int(Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[1])


def _holders_of(server: int, sessions: list[TerminalSession]) -> tuple[list[int], list[int]]:
    """The fork server's children: the holders of `sessions`, and the others (its spare)."""
    holders = {_parent(s.meta.pid) for s in sessions}
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
        c for c in _children(os.getpid()) if b"lookout.terminal.holder" in Path(f"/proc/{c}/cmdline").read_bytes()
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
        c for c in _children(os.getpid()) if b"lookout.terminal.holder" in Path(f"/proc/{c}/cmdline").read_bytes()
    )
    os.kill(server, signal.SIGKILL)
    await asyncio.to_thread(eventually, lambda: server not in _children(os.getpid()), what="the server's end")
    second = await _opens_and_runs(registry)
    assert second.running and first.running  # the first terminal's holder outlived its server


async def test_a_holder_that_cannot_take_up_its_spec_says_why_and_the_terminal_ends_with_that_reason(
    tmp_path: Path,
) -> None:
    launcher = HolderLauncher()
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    fds = [os.open(tmp_path / name, os.O_WRONLY | os.O_CREAT, 0o600) for name in ("output.raw", "output.idx", "log")]
    spec = {
        "id": "t_0000000001", "socket_dir": str(tmp_path), "argv": ["sh", "-c", "touch ran"], "cwd": str(tmp_path),
        "env": {}, "cols": 80, "rows": 24, "nonce": None, "max_journal_bytes": 1 << 20, "started_at": "now",
    }  # fmt: skip
    try:
        holder = await launcher.start(spec, [*fds, listener.fileno()])  # answered at once: nothing waited for
    finally:
        for fd in fds:
            os.close(fd)
        listener.close()
    pid = holder.greeting["pid"]
    ended: list[tuple[int | None, str | None]] = []
    process = TerminalProcess(
        JournalFollower(tmp_path, 0, time.time()), on_output=lambda _: None, on_exit=lambda *e: ended.append(e)
    )
    try:
        process.follow_holder(holder)
        await asyncio.wait_for(process.ended.wait(), 30)
    finally:
        await launcher.close()
    assert ended == [(None, "its holder could not start the program: started_at is a number")]
    await asyncio.to_thread(eventually, lambda: not running(pid), what="the program's process")
    assert not (tmp_path / "ran").exists()  # the program never ran


async def test_an_open_answered_before_its_holder_failed_is_listed_lost_with_the_reason_not_running(
    registry: TerminalRegistry,
) -> None:
    """The open answers once the spec is sent, not once the holder has taken it up: when the holder then cannot
    follow the program (here its holders' directory is gone), the terminal must not stay `running`."""
    await _opens_and_runs(registry)  # a place and spares ready
    shutil.rmtree(registry.holders)
    try:
        session = await registry.create(TerminalSpec(command=["sh", "-c", "sleep 30"]))
        await asyncio.to_thread(eventually, lambda: session.meta.status != "running", what="the terminal's end")
    finally:
        registry.holders.mkdir(mode=0o700)  # (for the registry's shutdown)
    assert session.meta.status == "lost"
    assert (session.meta.lost_reason or "").startswith("its holder could not start the program: it could not follow")
    await asyncio.to_thread(eventually, lambda: not running(session.meta.pid or 0), what="the program's end")


async def test_a_spec_sent_just_before_the_fork_server_ended_is_taken_up_not_dropped(tmp_path: Path) -> None:
    """The daemon sends a spec and stops (its fork server ends): a spare that sees both at once, the spec and the
    server's end, takes the spec up (the daemon was told the terminal runs), not ends with its program."""
    launcher = HolderLauncher()
    await launcher._running()
    assert launcher._server is not None
    server = launcher._server.pid
    await asyncio.to_thread(eventually, lambda: len(_children(server)) == SPARES, what="the spares")
    spares = _children(server)
    for spare in spares:  # (stopped: what comes to them meanwhile is all there when they run again)
        os.kill(spare, signal.SIGSTOP)
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    fds = [os.open(tmp_path / name, os.O_WRONLY | os.O_CREAT, 0o600) for name in ("output.raw", "output.idx", "log")]
    spec = {
        "id": "t_0000000002", "socket_dir": str(tmp_path), "argv": ["sleep", "300"], "cwd": str(tmp_path),
        "env": {}, "cols": 80, "rows": 24, "nonce": None, "max_journal_bytes": 1 << 20, "started_at": time.time(),
    }  # fmt: skip
    try:
        holder = await launcher.start(spec, [*fds, listener.fileno()])
        await launcher.close()  # the server has ended
        pid = holder.greeting["pid"]
        taking = _parent(pid)
        others = [s for s in spares if s != taking]
        for spare in others:
            os.kill(spare, signal.SIGCONT)
        await asyncio.to_thread(eventually, lambda: not any(map(running, others)), what="the other spares' end")
    finally:
        for fd in fds:
            os.close(fd)
        listener.close()
        for spare in spares:
            os.kill(spare, signal.SIGCONT)  # the one that has the spec: it sees it and the server's end at once
    try:
        await asyncio.to_thread(
            eventually, lambda: b"sleep" in Path(f"/proc/{pid}/cmdline").read_bytes(), what="the program"
        )
    finally:
        holder.close()
        if running(pid):
            os.kill(pid, signal.SIGKILL)
