"""A terminal's last snapshot and checkpoint are written off the loop when its program ends (issue 47: many end
at once), and a failed one is still the terminal's, as a failed write on the loop is: `degraded` says which."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

from lookout.core.storage import read_json
from lookout.terminal.journal.persistence import load_meta
from lookout.terminal.registry import TerminalRegistry
from lookout.terminal.spec import TerminalSpec
from lookout.terminal.waits.waiting import compile_until

PROGRAM = [sys.executable, "-c", "print('ready', flush=True); input(); print('bye')"]


@contextmanager
def read_only(directory: Path) -> Iterator[None]:
    """`directory` refuses new files: mode 0500, or for root (whom modes do not stop) the immutable flag."""
    if os.geteuid() != 0:
        directory.chmod(0o500)
    elif subprocess.run(["chattr", "+i", str(directory)], capture_output=True, check=False).returncode != 0:
        pytest.skip("no way to make a directory read-only for root here (chattr +i refused)")
    try:
        yield
    finally:
        if os.geteuid() == 0:
            subprocess.run(["chattr", "-i", str(directory)], check=True)
        directory.chmod(0o700)


async def test_the_last_snapshot_and_checkpoint_are_written_when_the_program_ends(manager: TerminalRegistry) -> None:
    s = await manager.create(TerminalSpec(command=PROGRAM, cols=40, rows=8))
    assert (await s.wait(compile_until(regex="ready"), 0, 20000)).matched
    s.send(text="\r")
    await s.finished()
    await s.screen_model.written()
    assert "bye" in read_json(s.directory / "screen.snapshot.json")["text"]
    assert list((s.directory / "checkpoints").iterdir())
    assert s.describe()["degraded"] is None and load_meta(s.directory).status == "exited"


async def test_a_failed_last_checkpoint_is_reported_not_lost(manager: TerminalRegistry) -> None:
    s = await manager.create(TerminalSpec(command=PROGRAM, cols=40, rows=8))
    assert (await s.wait(compile_until(regex="ready"), 0, 20000)).matched
    checkpoints = s.directory / "checkpoints"
    checkpoints.mkdir(exist_ok=True)
    with read_only(checkpoints):
        s.send(text="\r")
        await s.finished()
        await s.screen_model.written()
        described = s.describe()
    assert described["status"] == "exited"
    assert described["degraded"] is not None and "writing a checkpoint failed" in described["degraded"]
    assert "bye" in read_json(s.directory / "screen.snapshot.json")["text"]  # the rest is written
    listed = {t["id"]: t for t in await manager.describe_all()}
    assert listed[s.id]["degraded"] == described["degraded"]  # kept built (never let go): it says so on


async def test_a_failed_snapshot_while_the_program_runs_is_reported(manager: TerminalRegistry) -> None:
    s = await manager.create(TerminalSpec(command=PROGRAM, cols=40, rows=8))
    assert (await s.wait(compile_until(regex="ready"), 0, 20000)).matched
    await s.screen_model.written()
    assert s.describe()["degraded"] is None
    with read_only(s.directory):  # no new file there: the snapshot's atomic write fails; the journal goes on
        s.send(text="\r")
        assert (await s.wait(compile_until(regex="bye"), 0, 20000)).matched
        s.screen_model.snapshot_now()
        await s.screen_model.written()
        described = s.describe()
        await s.finished()
        await s.screen_model.written()
    assert described["degraded"] is not None and "writing screen.snapshot.json failed" in described["degraded"]
