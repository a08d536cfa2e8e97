"""A new terminal's files are made ahead (lookout.terminal.places): an open makes none, a terminal appears whole,
and what was made and not used goes with the daemon that made it, or with the next one when it was killed."""

from __future__ import annotations

import asyncio
import os
import socket
import sys
import threading
import time
from pathlib import Path
from typing import Any

import pytest

from lookout.terminal import places
from lookout.terminal.holder import protocol as proto
from lookout.terminal.holder.journal import open_journal
from lookout.terminal.places import Places
from lookout.terminal.process.holder_link import HolderError, HolderLauncher
from lookout.terminal.registry import TerminalRegistry
from lookout.terminal.spec import TerminalSpec
from tests.support.polling import eventually
from tests.support.processes import running
from tests.support.terminals import LIMITS

MAKES = {"os.mkdir", "socket.bind"}


def _staged(data: Path) -> list[Path]:
    staging = data / places.STAGING / str(os.getpid())
    return sorted(staging.iterdir()) if staging.exists() else []


async def _made_ahead(data: Path) -> None:
    """Until POOL places are made whole (a place's holder socket is the last thing made for it)."""

    def whole() -> bool:
        staged = _staged(data)
        return len(staged) == places.POOL and all((data / "holders" / proto.socket_name(s.name)).exists() for s in staged)

    await asyncio.to_thread(eventually, whole, what="the places made ahead")


async def test_an_open_makes_no_file_on_the_event_loop_and_the_terminal_appears_whole(
    manager: TerminalRegistry,
) -> None:
    data = manager.root.parent
    await _made_ahead(data)
    old_umask = os.umask(0)  # made private whatever the umask
    try:
        await manager.places.close()
        manager.places = Places(data, manager.holders)
        await manager.places.start()
        await _made_ahead(data)
    finally:
        os.umask(old_umask)
    for staged in _staged(data):
        assert staged.stat().st_mode & 0o777 == 0o700
        assert {p.name: p.stat().st_mode & 0o777 for p in staged.iterdir()} == dict.fromkeys(
            ("meta.json", "events.jsonl", "holder.log", "output.raw", "output.idx", "screen.jsonl"), 0o600
        )
        assert (manager.holders / proto.socket_name(staged.name)).stat().st_mode & 0o777 == 0o600
    ahead = {p.name for p in _staged(data)}
    loop_thread, made = threading.get_ident(), []

    def audit(event: str, args: tuple[Any, ...]) -> None:
        if threading.get_ident() != loop_thread:
            return
        creates = event == "open" and isinstance(args[2], int) and args[2] & os.O_CREAT
        if event in MAKES or (creates and not os.path.lexists(args[0])):  # (called before the open)
            made.append((event, args[0]))

    sys.addaudithook(audit)  # (for good: it records nothing once loop_thread is -1)
    try:
        session = await manager.create(TerminalSpec(command=["cat"]))
    finally:
        loop_thread = -1
    assert made == [], f"files made on the event loop while opening a terminal: {made}"
    assert session.id in ahead and session.directory == manager.root / session.id
    names = {p.name for p in session.directory.iterdir()}
    assert {"meta.json", "events.jsonl", "output.raw", "output.idx", "holder.log"} <= names
    assert b'"type":"created"' in (session.directory / "events.jsonl").read_bytes()
    assert (manager.holders / proto.socket_name(session.id)).exists()
    assert all((d / "meta.json").is_file() for d in manager.root.iterdir()), "a terminal dir without its meta.json"
    await _made_ahead(data)


async def test_a_failed_open_leaves_nothing_and_an_ended_daemon_removes_what_it_made(tmp_path: Path) -> None:
    registry = TerminalRegistry(tmp_path / "terminals", "avt", LIMITS, max_sessions=8)
    await registry.start()
    try:
        await _made_ahead(tmp_path)
        ahead = [p.name for p in _staged(tmp_path)]
        with pytest.raises(HolderError, match="too large"):  # no holder starts
            await registry.create(TerminalSpec(command=["true"], env={"HUGE": "x" * (4 << 20)}))
        (taken,) = set(ahead) - {p.name for p in _staged(tmp_path)}
        assert not (tmp_path / "terminals" / taken).exists() and not (registry.holders / f"{taken}.sock").exists()
        assert list((tmp_path / "terminals").iterdir()) == []
    finally:
        await registry.shutdown()
    assert not (tmp_path / places.STAGING / str(os.getpid())).exists()
    assert list(registry.holders.iterdir()) == [], "the sockets made for places nobody used"


async def test_a_daemon_that_starts_removes_what_killed_daemons_left_and_nothing_of_those_that_run(
    tmp_path: Path,
) -> None:
    holders = tmp_path / "holders"
    holders.mkdir(mode=0o700)
    dead = await asyncio.create_subprocess_exec("true")
    await dead.wait()  # a pid that no longer runs
    left: dict[str, socket.socket] = {}
    for pid in (dead.pid, os.getppid()):
        staged = tmp_path / places.STAGING / str(pid) / f"t_{pid:010x}"
        staged.mkdir(parents=True)
        (staged / "output.raw").write_bytes(b"")
        dir_fd = proto.open_dir(holders)
        left[str(pid)] = proto.listen(dir_fd, staged.name)
        os.close(dir_fd)
    left[str(dead.pid)].close()  # its daemon was killed: nobody listens any more
    ours = Places(tmp_path, holders)
    await ours.start()
    try:
        assert not (tmp_path / places.STAGING / str(dead.pid)).exists()
        assert not (holders / f"t_{dead.pid:010x}.sock").exists()
        assert (tmp_path / places.STAGING / str(os.getppid()) / f"t_{os.getppid():010x}" / "output.raw").exists()
        assert (holders / f"t_{os.getppid():010x}.sock").exists(), "a running daemon's place is its own"
    finally:
        await ours.close()
        left[str(os.getppid())].close()


async def test_a_program_whose_open_a_killed_daemon_cut_is_ended_by_the_next_daemon(tmp_path: Path) -> None:
    """The daemon handed the spec to a holder and was killed before it listed the terminal: nobody knows of that
    program, and the next daemon has its holder end it (it would run unlisted for good)."""
    holders = tmp_path / "holders"
    holders.mkdir(mode=0o700)
    staged = tmp_path / places.STAGING / str(os.getpid()) / "t_00000000ab"  # (this pid: a daemon that ran before)
    staged.mkdir(parents=True)
    dir_fd = proto.open_dir(holders)
    listener = proto.listen(dir_fd, staged.name)
    os.close(dir_fd)
    fds = [*open_journal(staged), os.open(staged / "holder.log", os.O_WRONLY | os.O_CREAT, 0o600), listener.fileno()]
    spec = {
        "id": staged.name, "socket_dir": str(holders), "argv": ["sleep", "300"], "cwd": str(tmp_path), "env": {},
        "cols": 80, "rows": 24, "nonce": None, "max_journal_bytes": 1 << 20, "started_at": time.time(),
    }  # fmt: skip
    launcher = HolderLauncher()
    try:
        holder = await launcher.start(spec, fds)
    finally:
        await launcher.close()
        for fd in fds[:3]:
            os.close(fd)
        listener.close()
    holder.close()  # the daemon is killed: what it had open goes, what it made stays
    pid = holder.greeting["pid"]
    await asyncio.to_thread(eventually, lambda: b"sleep" in Path(f"/proc/{pid}/cmdline").read_bytes(), what="it")
    following = Places(tmp_path, holders)
    await following.start()
    await following.close()
    sock = holders / proto.socket_name(staged.name)
    await asyncio.to_thread(eventually, lambda: not running(pid) and not sock.exists(), what="the program's end")
    assert not (tmp_path / places.STAGING / str(os.getpid())).exists()
