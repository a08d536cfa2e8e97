"""A busy program's holder reads its PTY at a pace (lookout.terminal.holder.pace), and what an agent
asks is not late for it: a screen holds everything the program wrote before it was asked, and a wait sees the
answer to input. Real PTYs, real holders."""

from __future__ import annotations

import asyncio
import os
import signal
import sys
from pathlib import Path

from lookout.terminal.holder.pace import BUSY_S, PACE_S
from lookout.terminal.journal.reader import read_kind
from lookout.terminal.registry import TerminalRegistry
from lookout.terminal.screen.layers import ViewOptions
from lookout.terminal.session import TerminalSession
from lookout.terminal.spec import TerminalSpec
from lookout.terminal.waits.waiting import compile_until
from tests.support.polling import eventually

BUSY = """
import os, select, sys
i = 0
while True:
    i += 1
    print("n", i, flush=True)
    with open(sys.argv[1] + ".new", "w") as counter:
        counter.write(str(i))
    os.replace(sys.argv[1] + ".new", sys.argv[1])
    if select.select([sys.stdin], [], [], 0.005)[0]:
        print("got", sys.stdin.readline().strip(), flush=True)
"""
"""A line every 5 ms or so, its number also written to a file, and each line of input answered."""


async def _busy(manager: TerminalRegistry, counter: Path) -> TerminalSession:
    spec = TerminalSpec(command=[sys.executable, "-c", BUSY, str(counter)], cols=80, rows=24)
    session = await manager.create(spec)
    await asyncio.to_thread(eventually, lambda: counter.exists(), what="the program's first line")
    await asyncio.sleep(BUSY_S + 1.5)
    return session


async def test_a_program_that_writes_without_a_pause_is_read_at_a_pace(
    manager: TerminalRegistry, tmp_path: Path
) -> None:
    session = await _busy(manager, tmp_path / "counter")
    await session.catch_up()
    reads = read_kind(session.directory, "o")
    last = reads[-1].t
    in_the_last_second = [r for r in reads if r.t > last - 1.0]
    # read as it came (a line every 5 ms) this would be a hundred or more; at the pace, 1 / PACE_S and the sync
    assert len(in_the_last_second) <= 1 / PACE_S + 2, [r.t for r in in_the_last_second]


async def test_a_screen_of_a_busy_program_holds_all_it_wrote_before_it_was_asked(
    manager: TerminalRegistry, tmp_path: Path
) -> None:
    counter = tmp_path / "counter"
    session = await _busy(manager, counter)
    pid = session.meta.pid
    assert pid is not None
    for _ in range(5):
        os.kill(pid, signal.SIGSTOP)  # what it wrote is known: the counter's file says how far it got
        try:
            wrote = int(counter.read_text())  # written after its line
            text = await session.screen(ViewOptions(format="text"))
        finally:
            os.kill(pid, signal.SIGCONT)
        assert isinstance(text, str)
        assert f"n {wrote}" in text, text  # a rest between reads leaves it in the PTY: the screen's sync reads it
        await asyncio.sleep(0.137)


async def test_input_to_a_busy_program_is_answered(manager: TerminalRegistry, tmp_path: Path) -> None:
    session = await _busy(manager, tmp_path / "counter")
    for word in ("alpha", "beta", "gamma"):
        since = session.raw_offset
        session.send(text=f"{word}\r")
        result = await session.wait(compile_until(regex=f"got {word}"), since, 10_000)
        assert result.matched, result


async def test_a_busy_program_is_never_called_stable_between_two_reads(
    manager: TerminalRegistry, tmp_path: Path
) -> None:
    session = await _busy(manager, tmp_path / "counter")
    result = await session.wait(compile_until(stable_ms=int(PACE_S * 1000) // 2), None, 1500)
    assert not result.matched and result.reason == "timeout", result  # it writes every 5 ms: never stable
