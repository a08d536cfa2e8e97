"""Terminal sessions on real PTYs, driven through the manager (no HTTP)."""

from __future__ import annotations

import asyncio
import os
import signal
import sys
import time
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path

import pytest

from lookout.core.errors import BadInput, Conflict
from lookout.core.events import EventBus
from lookout.core.storage import read_json
from lookout.terminal.holder import protocol as proto
from lookout.terminal.journal.persistence import load_meta, load_snapshot, save_meta
from lookout.terminal.journal.reader import read_index
from lookout.terminal.process import holder_link
from lookout.terminal.registry import TerminalRegistry
from lookout.terminal.screen import lazy_feed, skip_ahead
from lookout.terminal.screen.engines import create_engine
from lookout.terminal.screen.replay import screen_at
from lookout.terminal.session import SessionLimits, TerminalSession
from lookout.terminal.spec import TerminalSpec
from lookout.terminal.waits.waiting import compile_until
from lookout.timeline.recording import FrameInput
from tests.support.polling import eventually

LIMITS = SessionLimits(scrollback=200, max_journal_bytes=1 << 30, max_input_bytes=1 << 20)
BASH = ["bash", "--norc", "--noprofile"]


@pytest.fixture(params=["avt", "pyte"])
async def manager(request: pytest.FixtureRequest, tmp_path: Path) -> AsyncIterator[TerminalRegistry]:
    m = TerminalRegistry(tmp_path / "terminals", request.param, LIMITS, max_sessions=8)
    await m.start()
    yield m
    await m.stop_all()
    await m.shutdown()


async def _until(session: TerminalSession, timeout: float = 20, since: int | None = None, **kw: object) -> dict:
    result = await session.wait(compile_until(**kw), since, int(timeout * 1000))  # type: ignore[arg-type]
    assert result.matched, result
    return result


async def _python(manager: TerminalRegistry, code: str) -> TerminalSession:
    return await manager.create(TerminalSpec(command=[sys.executable, "-c", code], cols=80, rows=24))


async def test_states_idle_running_password_input_tui(manager: TerminalRegistry) -> None:
    s = await manager.create(TerminalSpec(command=BASH, cols=80, rows=24))
    await _until(s, state_in=["idle"])
    s.send(text="sleep 5\r")
    await _until(s, state_in=["running"])
    await _until(s, stable_ms=300)  # sleep itself in the foreground, not bash about to start it
    s.send(keys=["C-c"])
    await _until(s, state_in=["idle"])
    s.send(text=f"{sys.executable} -c 'import getpass; getpass.getpass(\"Secret: \")'\r")
    await _until(s, state_in=["password"])
    s.send(text="hunter2\r")
    await _until(s, state_in=["idle"])
    s.send(text=f"{sys.executable} -c 'input(\"name? \")'\r")
    await _until(s, state_in=["awaiting_input"])
    s.send(text="bob\r")
    await _until(s, state_in=["idle"])
    s.send(text="printf '\\033[?1049h\\033[Hfull screen'; sleep 5\r")
    await _until(s, state_in=["tui"])
    assert (await s.screen())["text"][0] == "full screen"
    s.send(keys=["C-c"])
    await _until(s, stable_ms=200)
    s.send(text="printf '\\033[?1049l'\r")
    await _until(s, state_in=["idle"])
    assert not (await s.screen())["alt_screen"]
    # The password typed at the no-echo prompt is not in the journal's input records.
    inputs = [e.value for e in read_index(s.directory) if e.kind == "i"]
    assert None in inputs
    assert not any(v and "aHVudGVyMg" in v for v in inputs)  # base64 of "hunter2"


async def test_cursor_position_and_device_attribute_queries_are_answered(manager: TerminalRegistry) -> None:
    code = (
        "import os, sys, termios, tty\n"
        "tty.setraw(0)\n"
        "def ask(q, end):\n"
        "    os.write(1, q); buf = b''\n"
        "    while not buf.endswith(end): buf += os.read(0, 1)\n"
        "    return buf\n"
        "os.write(1, b'\\x1b[5;9H')\n"
        "cpr = ask(b'\\x1b[6n', b'R'); da = ask(b'\\x1b[c', b'c')\n"
        "termios.tcsetattr(0, termios.TCSANOW, termios.tcgetattr(0))\n"
        "print(repr(cpr), repr(da), end='\\r\\n')\n"
    )
    s = await _python(manager, code)
    await _until(s, exit=True, since=0)
    text = (await s.screen())["text"]
    assert "'\\x1b[5;9R'" in text[4] and "\\x1b[?" in text[4]
    assert s.exit_code == 0


async def test_keys_follow_application_cursor_mode(manager: TerminalRegistry) -> None:
    code = (
        "import os, tty\n"
        "tty.setraw(0)\n"
        "os.write(1, b'ready>')\n"
        "a = os.read(0, 3)\n"
        "os.write(1, b'\\x1b[?1hreadyapp>')\n"
        "b = os.read(0, 3)\n"
        "os.write(1, (repr(a) + ' ' + repr(b) + '\\r\\n').encode())\n"
    )
    s = await _python(manager, code)
    await _until(s, regex="ready>", since=0)
    s.send(keys=["Up"])
    await _until(s, regex="readyapp>", since=0)
    s.send(keys=["Up"])
    await _until(s, exit=True, since=0)
    assert "b'\\x1b[A' b'\\x1bOA'" in s.screen_model.text()


async def test_paste_is_bracketed_only_when_the_program_asks(manager: TerminalRegistry) -> None:
    code = (
        "import os, sys, tty\n"
        "tty.setraw(0)\n"
        "os.write(1, b'plain>')\n"
        "a = os.read(0, 100)\n"
        "os.write(1, b'\\x1b[?2004hbracketed>')\n"
        "b = b''\n"
        "while not b.endswith(b'\\x1b[201~'): b += os.read(0, 100)\n"
        "os.write(1, (repr(a) + ' ' + repr(b) + '\\r\\n').encode())\n"
    )
    s = await _python(manager, code)
    await _until(s, regex="plain>", since=0)
    s.send(paste="x")
    await _until(s, regex="bracketed>", since=0)
    s.send(paste="l1\nl2")
    await _until(s, exit=True, since=0)
    assert "b'x' b'\\x1b[200~l1\\rl2\\x1b[201~'" in s.screen_model.text()


async def test_large_input_is_delivered_in_full(manager: TerminalRegistry) -> None:
    code = (
        "import sys, termios\n"
        "attrs = termios.tcgetattr(0); attrs[3] &= ~termios.ECHO; termios.tcsetattr(0, termios.TCSANOW, attrs)\n"
        "print('ready', flush=True)\n"  # no echo: the count is not interleaved with 300 KB of echoed input
        "n = 0\nwhile n < 300000:\n    n += len(sys.stdin.buffer.readline())\nprint('got', n)\n"
    )
    s = await _python(manager, code)
    await _until(s, regex="^ready", since=0)
    line = "y" * 999 + "\r"
    result = s.send(text=line * 300)
    assert result["bytes_written"] == 300_000
    await _until(s, regex=r"got \d+", since=0, timeout=90)
    assert "got 300000" in s.screen_model.text()


async def test_split_utf8_and_exit_code(manager: TerminalRegistry) -> None:
    code = "import os, time\nos.write(1, 'caf\\u00e9 \\u2713'.encode()[:-1]); time.sleep(0.2); os.write(1, b'\\x93!')\nraise SystemExit(4)"
    s = await _python(manager, code)
    await _until(s, exit=True, since=0)
    assert s.exit_code == 4
    assert (await s.screen())["text"][0] == "café ✓!"


async def test_title_cwd_and_input_after_exit(manager: TerminalRegistry) -> None:
    s = await manager.create(
        TerminalSpec(command="printf '\\033]0;my title\\007\\033]7;file://host/tmp/some%%20dir\\033\\\\done'")
    )
    await _until(s, exit=True, since=0)
    info = s.describe()
    assert info["title"] == "my title" and info["cwd"] == "/tmp/some dir"
    with pytest.raises(Conflict):
        s.send(text="x")
    with pytest.raises(Conflict):
        s.resize(100, 30)


async def test_unknown_key_and_missing_program(manager: TerminalRegistry) -> None:
    s = await manager.create(TerminalSpec(command=BASH))
    with pytest.raises(BadInput, match="Enter"):
        s.send(keys=["NoSuchKey"])
    with pytest.raises(BadInput, match="command not found"):
        await manager.create(TerminalSpec(command=["definitely-not-a-program-xyz"]))
    assert len(manager.sessions()) == 1


@pytest.mark.parametrize(("first_line", "code", "why"), [
    ("#!/nonexistent/interpreter", 127, "No such file or directory"),  # its interpreter is not found
    ("no interpreter line, not a binary either", 126, "Exec format error"),
])  # fmt: skip
async def test_a_program_that_cannot_be_run_says_why_on_its_screen_and_ends_as_a_shells_command_would(
    manager: TerminalRegistry, tmp_path: Path, first_line: str, code: int, why: str
) -> None:
    program = tmp_path / "program"
    program.write_text(first_line + "\n")
    program.chmod(0o700)
    s = await manager.create(TerminalSpec(command=[str(program)]))  # its process exists: the open answers
    await _until(s, exit=True, since=0)
    assert s.exit_code == code
    assert (await s.screen())["text"][0] == f"lookout: cannot run {str(program)!r}: {why}"


async def test_snapshot_checkpoint_and_rebuild_match_the_live_screen(manager: TerminalRegistry) -> None:
    s = await manager.create(TerminalSpec(command=BASH, cols=60, rows=12))
    await _until(s, state_in=["idle"])
    s.send(text="for i in $(seq 1 40); do echo row-$i; done\r")
    await _until(s, regex="^row-40", since=0)
    s.resize(50, 10)
    s.send(text="echo after-resize\r")
    await _until(s, regex="^after-resize", since=0)
    await _until(s, state_in=["idle"])
    live = (await s.screen())["text"]
    rebuilt = (await asyncio.to_thread(screen_at, s.directory, s.meta, s.raw_offset, LIMITS.scrollback)).engine
    assert (rebuilt.cols, rebuilt.rows) == (50, 10)
    assert rebuilt.text_rows() == live
    await manager.close(s.id)
    snap = read_json(s.directory / "screen.snapshot.json")
    assert snap["text"] == (await s.screen())["text"]
    assert (s.directory / "checkpoints").is_dir()
    assert s.describe()["status"] == "exited"


async def test_a_flood_ends_on_the_same_screen_as_a_full_replay(
    manager: TerminalRegistry, monkeypatch: pytest.MonkeyPatch
) -> None:
    plans: list[int] = []

    def spy(data: bytes, keep_lines: int) -> list[bytes]:
        pieces = skip_ahead.plan_feed(data, keep_lines)
        plans.append(len(pieces))
        return pieces

    monkeypatch.setattr(lazy_feed, "plan_feed", spy)
    code = (
        "import sys\n"
        "out = sys.stdout.buffer\n"
        "for i in range(1, 150001):\n"
        "    out.write(b'\\x1b[3%dmline %d of the flood\\n' % (i % 8, i))\n"
    )
    s = await _python(manager, code)
    await _until(s, exit=True, since=0, timeout=120)
    live = await s.screen(scrollback=LIMITS.scrollback)
    full = create_engine(s.meta.engine, s.meta.cols, s.meta.rows, LIMITS.scrollback)
    full.feed(s.read_raw(0, s.raw_offset))
    assert live["text"] == full.text_rows() and "line 150000 of the flood" in live["text"][-2]
    assert live["scrollback"] == full.scrollback(LIMITS.scrollback)
    assert len(live["scrollback"]) == LIMITS.scrollback
    if s.meta.engine == "avt":
        assert 3 in plans  # the flood was skipped through, not fed line by line


async def test_stop_kills_a_child_that_ignores_hangup_and_term(manager: TerminalRegistry) -> None:
    code = "import signal, time\nsignal.signal(signal.SIGHUP, signal.SIG_IGN)\nsignal.signal(signal.SIGTERM, signal.SIG_IGN)\nprint('stubborn')\ntime.sleep(600)"
    s = await _python(manager, code)
    await _until(s, regex="stubborn", since=0)
    pid = s.meta.pid
    await manager.close(s.id)
    assert s.describe()["status"] == "exited"
    assert not Path(f"/proc/{pid}").exists()


async def test_stop_ends_background_jobs_too(manager: TerminalRegistry) -> None:
    s = await manager.create(TerminalSpec(command=["bash", "--norc", "--noprofile", "-i"]))
    await _until(s, state_in=["idle"])
    s.send(text="bash -c \"trap '' HUP; exec sleep 300\" & echo job=$!\r")  # a job that ignores hangups
    job = int((await _until(s, regex=r"^job=(\d+)", since=0)).match["groups"][0])
    assert Path(f"/proc/{job}").exists()
    await manager.close(s.id)
    await asyncio.to_thread(eventually, lambda: not Path(f"/proc/{job}").exists(), what="the job to be killed")


async def test_session_limit(tmp_path: Path) -> None:
    m = TerminalRegistry(tmp_path / "t", "avt", LIMITS, max_sessions=1)
    await m.start()
    try:
        first = await m.create(TerminalSpec(command=BASH))
        with pytest.raises(Conflict, match="limit"):
            await m.create(TerminalSpec(command=BASH))
        await m.close(first.id)  # stopped, still listed: it counts no more
        assert (await m.create(TerminalSpec(command=BASH))).running and len(m.sessions()) == 2
    finally:
        await m.stop_all()
        await m.shutdown()


async def test_exit_while_a_child_holds_the_terminal_is_recorded_once(manager: TerminalRegistry) -> None:
    # The leader exits while a background child keeps the terminal open, so no hang-up comes: the session is
    # finalized by the drain timer, with the leader's exit status, exactly once.
    s = await manager.create(TerminalSpec(command=["bash", "-c", "sleep 3 & echo leader-done"]))
    await _until(s, exit=True, since=0, timeout=30)
    exits = [e for e in read_index(s.directory) if e.kind == "x"]
    assert len(exits) == 1 and exits[0].value == 0
    assert "leader-done" in s.screen_model.text()


async def test_a_holder_whose_program_is_not_the_terminals_is_not_adopted(tmp_path: Path) -> None:
    first = TerminalRegistry(tmp_path / "terminals", "avt", LIMITS, max_sessions=2)
    await first.start()
    s = await first.create(TerminalSpec(command=BASH, cols=80, rows=24))
    pid = s.meta.pid
    assert pid is not None
    await first.shutdown()  # the program stays with its holder
    meta = load_meta(s.directory)
    meta.pid = pid + 1  # meta.json names another program than the one its holder runs
    save_meta(s.directory, meta)
    again = TerminalRegistry(tmp_path / "terminals", "avt", LIMITS, max_sessions=2)
    await again.start()
    try:
        lost = await again.get(s.id)
        assert (lost.meta.status, lost.running) == ("lost", False)
        assert lost.meta.lost_reason == f"its holder runs pid {pid}, not the terminal's pid {pid + 1}"
        assert load_meta(s.directory).status == "lost" and Path(f"/proc/{pid}").exists(), "its program is left alone"
    finally:
        await again.shutdown()
        os.kill(pid, signal.SIGKILL)  # its holder ends with it


@asynccontextmanager
async def _restarted_with_a_stopped_holder(
    tmp_path: Path, full_queue: bool = False
) -> AsyncIterator[tuple[TerminalSession, TerminalSession]]:
    """Two terminals taken up by a restarted registry while the first one's holder is stopped (SIGSTOP; with its
    queue of connections full when `full_queue`): (that one, the other) as the restarted registry has them."""
    first = TerminalRegistry(tmp_path / "terminals", "avt", LIMITS, max_sessions=4)
    await first.start()
    mute, other = [await first.create(TerminalSpec(command=BASH, cols=80, rows=24)) for _ in range(2)]
    assert mute.meta.pid is not None
    holder = int(Path(f"/proc/{mute.meta.pid}/stat").read_text().rsplit(")", 1)[1].split()[1])
    await first.shutdown()
    os.kill(holder, signal.SIGSTOP)
    queued = []
    again = TerminalRegistry(tmp_path / "terminals", "avt", LIMITS, max_sessions=4)
    try:
        while full_queue:
            try:
                queued.append(proto.connect(first.holders, mute.id, 0.2))
            except BlockingIOError:
                break
            assert len(queued) < 64, "the stopped holder's queue of connections never filled"
        await again.start()
        yield await again.get(mute.id), await again.get(other.id)
    finally:
        for sock in queued:
            sock.close()
        os.kill(holder, signal.SIGCONT)
        await again.stop_all()
        await again.shutdown()


async def test_a_holder_that_does_not_answer_its_greeting_is_not_adopted_and_holds_up_no_other(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The greetings are awaited on the loop: a stopped holder (it takes the connection and the hello, and never
    # answers) makes its terminal lost once CONNECT_TIMEOUT_S has passed, and the others are adopted meanwhile.
    monkeypatch.setattr(holder_link, "CONNECT_TIMEOUT_S", 2.0)
    async with _restarted_with_a_stopped_holder(tmp_path) as (lost, adopted):
        assert (lost.meta.status, lost.running) == ("lost", False)
        assert lost.meta.lost_reason == "its holder did not answer within 2 s"
        assert adopted.running
        adopted.send(text="echo adopted-$((6*7))\r")
        await _until(adopted, regex="adopted-42", timeout=30)


async def test_a_holder_that_takes_no_connection_is_not_adopted_and_holds_up_no_other(tmp_path: Path) -> None:
    # A stopped holder whose queue of connections is full (a connect to it fails at once) is said to be so, not
    # taken for one that has ended, and the others are adopted.
    async with _restarted_with_a_stopped_holder(tmp_path, full_queue=True) as (lost, adopted):
        assert (lost.meta.status, lost.meta.lost_reason) == ("lost", holder_link.NO_ROOM)
        assert adopted.running


class _Frames:
    """A recorder that keeps what it is given."""

    def __init__(self) -> None:
        self.frames: list[FrameInput] = []

    def record(self, frame: FrameInput) -> None:
        self.frames.append(frame)


async def test_a_session_reports_to_the_bus_and_recorder_it_was_made_with_also_after_a_restart(
    tmp_path: Path,
) -> None:
    bus, recorder = EventBus(), _Frames()
    events = bus.subscribe()
    m = TerminalRegistry(tmp_path / "terminals", "avt", LIMITS, max_sessions=2, bus=bus, recorder=recorder)
    await m.start()
    try:
        s = await m.create(TerminalSpec(command=[*BASH, "-i"], cols=80, rows=24, shell_integration=False))
        await _until(s, state_in=["idle"], since=0)
        s.resize(100, 30)
        await s.screen()
        s.send(text="exit 3\r")
        await _until(s, exit=True)
    finally:
        await m.shutdown()
    types = [(await asyncio.wait_for(events.next(), 5))["type"] for _ in range(3)]
    assert types == ["terminal.created", "terminal.resized", "terminal.exited"]
    assert [f.category for f in recorder.frames] == [
        "terminal resize",
        "terminal screen",
        "terminal input",
        "terminal exit",
    ]

    again, later = _Frames(), EventBus()
    restarted = TerminalRegistry(tmp_path / "terminals", "avt", LIMITS, max_sessions=2, bus=later, recorder=again)
    await restarted.start()
    dormant = await restarted.get(s.id)
    assert dormant.bus is later and dormant.recorder is again and dormant.describe()["exit_code"] == 3
    await dormant.screen()
    assert [f.category for f in again.frames] == ["terminal screen"] and not recorder.frames[4:]
    await restarted.shutdown()


async def test_stop_returns_once_background_file_writes_have_ended(
    manager: TerminalRegistry, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A screen snapshot written in the background while the terminal is stopped (a slow disk) neither outlives
    `stop` (a purge then found a file written into the directory it was removing: 409) nor replaces the final
    snapshot with an older one."""
    import threading

    from lookout.terminal.journal import persistence

    in_flight: list[int] = []
    save = persistence.save_snapshot

    def slow_in_a_thread(directory: Path, snapshot: dict) -> None:
        if threading.current_thread() is threading.main_thread():
            save(directory, snapshot)
            return
        in_flight.append(1)
        try:
            threading.Event().wait(2)
            save(directory, snapshot)
        finally:
            in_flight.pop()

    monkeypatch.setattr(persistence, "save_snapshot", slow_in_a_thread)
    s = await manager.create(TerminalSpec(command=BASH, cols=60, rows=12))
    await _until(s, state_in=["idle"])
    s.send(text="printf '\\033]0;old-title\\007'; echo first\r")
    await _until(s, regex="^first", since=0)
    for _ in range(400):  # the loop must run meanwhile: it schedules the write
        if in_flight:
            break
        await asyncio.sleep(0.05)
    assert in_flight, "no snapshot was written in the background"
    s.send(text="printf '\\033]0;new-title\\007'; exit\r")
    await s.finished()
    await manager.close(s.id, purge=False)
    assert in_flight == [], "a snapshot write outlived stop"
    assert load_snapshot(s.directory).title == "new-title"


async def test_output_written_before_a_resize_is_drawn_at_the_size_it_was_written_for(
    manager: TerminalRegistry,
) -> None:
    """The program writes at 80 columns; the daemon reads it only after it asked for 40 (its loop was busy): the
    live screen takes the size where the holder resized the PTY, after those bytes, as a replay does."""
    s = await _python(manager, "import time; time.sleep(1); print('\\033[3;70HX', end='', flush=True); time.sleep(60)")
    journal, deadline = s.directory / "output.raw", time.monotonic() + 20
    while b"X" not in journal.read_bytes():  # the loop is held: the holder journals it, the daemon reads nothing
        assert time.monotonic() < deadline, "the program wrote nothing"
        time.sleep(0.05)
    s.resize(40, 24)
    live = await s.screen()
    rebuilt = (await asyncio.to_thread(screen_at, s.directory, s.meta, s.raw_offset, LIMITS.scrollback)).engine
    assert (live["terminal"]["width"], rebuilt.cols) == (40, 40)
    assert live["text"] == rebuilt.text_rows()
