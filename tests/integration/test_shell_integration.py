"""Shell integration in real bash and zsh on real PTYs, through the manager: blocks, exit codes, cwd,
forged marks, Ctrl-C, the user's rc files, and blocks after a restart."""
from __future__ import annotations

import os
import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from lookout.terminal import origins
from lookout.terminal.blocks.blocks import Block, block_with_output
from lookout.terminal.journal.persistence import load_meta
from lookout.terminal.process import shell_integration
from lookout.terminal.registry import TerminalRegistry
from lookout.terminal.session import TerminalSession
from lookout.terminal.spec import TerminalSpec
from lookout.terminal.waits.waiting import compile_until
from tests.support.terminals import LIMITS

RC_FILES = {
    "bash": (".bashrc", "HISTCONTROL=ignoreboth\nalias greet='echo hello from the rc file'\n"),
    "zsh": (".zshrc", "setopt histignorespace\nalias greet='echo hello from the rc file'\n"),
}


@pytest.fixture(params=["bash", "zsh"])
def shell(request: pytest.FixtureRequest) -> str:
    if shutil.which(request.param) is None:
        pytest.fail(f"{request.param} is not installed (`make test` installs it)")
    return request.param


@pytest.fixture
def home(tmp_path: Path, shell: str) -> Path:
    """A HOME with the user's own rc file for `shell`, so the machine's rc files play no part."""
    path = tmp_path / "home"
    path.mkdir()
    name, text = RC_FILES[shell]
    (path / name).write_text(text)
    return path


async def _shell(manager: TerminalRegistry, shell: str, home: Path, **spec: object) -> TerminalSession:
    spec = {"env": {"HOME": str(home)}, **spec}
    s = await manager.create(TerminalSpec(command=[shell], cwd=str(home), cols=80, rows=24, **spec))  # type: ignore[arg-type]
    ready = await s.wait(compile_until(state_in=["idle"]), 0, 10_000)
    assert ready.matched, ready
    return s


async def _run(s: TerminalSession, line: str) -> dict:
    """Type a command line and wait for its block to end; returns the wait's `block`."""
    since = s.raw_offset
    s.send(text=line + "\r")
    result = await s.wait(compile_until(block_end=True), since, 10_000)
    assert result.matched and result.reason == "block_end", result
    return result.to_json()["block"]


async def _eventually(s: TerminalSession, predicate: Callable[[], bool], what: str) -> None:
    for _ in range(100):
        if predicate():
            return
        await s.changed(0.1)
    raise AssertionError(f"no {what} within 10 s")


async def _start(s: TerminalSession, line: str) -> Block:
    """Type a command line and wait until its block has started; returns the running block."""
    s.send(text=line + "\r")
    await _eventually(s, lambda: s.blocks.current is not None, f"block for {line!r}")
    assert s.blocks.current is not None
    return s.blocks.current


async def _output(s: TerminalSession, n: int) -> str:
    block = await block_with_output(s, n, 2000)
    assert block is not None
    return block["output"]["text"]


async def test_exit_codes_commands_and_cwd(manager: TerminalRegistry, shell: str, home: Path) -> None:
    s = await _shell(manager, shell, home)
    assert s.describe()["shell_integration"] is True
    assert await _run(s, "true") == {"n": 1, "exit_code": 0, "command": "true", "hand": "default"}
    assert await _run(s, "false") == {"n": 2, "exit_code": 1, "command": "false", "hand": "default"}
    assert await _run(s, "(exit 3)") == {"n": 3, "exit_code": 3, "command": "(exit 3)", "hand": "default"}
    assert await _run(s, "cd /tmp") == {"n": 4, "exit_code": 0, "command": "cd /tmp", "hand": "default"}
    assert await _run(s, "pwd; echo 'a;b' | cat") == {"n": 5, "exit_code": 0, "command": "pwd; echo 'a;b' | cat", "hand": "default"}
    assert (await _run(s, "greet"))["exit_code"] == 0  # the alias from the user's own rc file
    blocks = s.blocks.finished()
    assert [b.cwd for b in blocks] == [str(home)] * 4 + ["/tmp"] * 2
    assert all(b.ended_at >= b.started_at and b.duration_ms >= 0 for b in blocks)  # type: ignore[operator]
    assert await _output(s, 5) == "/tmp\na;b"
    assert await _output(s, 6) == "hello from the rc file"
    assert await _output(s, 1) == ""
    terminal = s.describe()
    assert terminal["cwd"] == "/tmp" and terminal["block"] is None and terminal["block_count"] == 6


async def test_a_forged_mark_is_ignored_and_counted(
    manager: TerminalRegistry, shell: str, home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    nonces: list[str | None] = []

    def launch(*args: Any) -> shell_integration.Launch:  # what the daemon hands the holder, then forgets
        spec = real_launch(*args)
        nonces.append(spec.nonce)
        return spec

    real_launch = shell_integration.launch
    monkeypatch.setattr(shell_integration, "launch", launch)
    s = await _shell(manager, shell, home)
    forge = r"printf '\033]133;D;5\007'; printf '\033]133;D;6;nonce=00ff\007'; echo after; (exit 2)"
    assert (await _run(s, forge))["exit_code"] == 2
    assert s.describe()["forged_marks"] == 2
    assert await _output(s, 1) == "after"
    # The nonce is nowhere in the environment of the programs the shell runs.
    (nonce,) = nonces
    assert nonce is not None
    await _run(s, f"env | grep -c -e {nonce} -e ZDOTDIR -e LOOKOUT -e __lookout")
    assert await _output(s, 2) == "0"
    await s.stop()
    after_restart = origins.recover(s.directory, load_meta(s.directory), s.limits, s.holders, bus=s.bus, recorder=s.recorder)
    assert after_restart.describe()["forged_marks"] == 2, "the count is kept in screen.snapshot.json"


async def test_a_program_cannot_move_the_cwd_of_its_commands(manager: TerminalRegistry, shell: str, home: Path) -> None:
    s = await _shell(manager, shell, home)
    forge = r"printf '\033]7;file://x/etc\007'; printf '\033]633;P;Cwd=/root\007'; printf '\033]633;P;Cwd=/srv;nonce=00\007'"
    await _run(s, forge)
    await _run(s, "true")
    assert s.describe()["cwd"] == str(home) and s.blocks.finished()[-1].cwd == str(home)
    await _run(s, "cd /tmp")
    await _run(s, "true")
    assert s.describe()["cwd"] == "/tmp" and s.blocks.finished()[-1].cwd == "/tmp"


async def test_ctrl_c_at_an_empty_prompt_makes_no_block(manager: TerminalRegistry, shell: str, home: Path) -> None:
    s = await _shell(manager, shell, home)
    await _run(s, "true")
    for _ in range(2):
        since = s.raw_offset
        s.send(keys=["C-c"])
        assert (await s.wait(compile_until(regex=r"\S"), since, 5000)).matched
        assert (await s.wait(compile_until(state_in=["idle"]), since, 5000)).matched
    s.send(text="\r")  # and an empty line
    assert (await s.wait(compile_until(stable_ms=200), None, 5000)).matched
    assert s.blocks.current is None and len(s.blocks.finished()) == 1
    since = s.raw_offset
    assert (await _start(s, "cat")).n == 2
    assert s.describe()["block"]["command"] == "cat"
    assert (await s.wait(compile_until(state_in=["awaiting_input"]), since, 5000)).matched
    s.send(keys=["C-c"])  # now cat has the terminal: the Ctrl-C interrupts it, not the shell
    result = await s.wait(compile_until(block_end=True), since, 5000)
    assert result.to_json()["block"] == {"n": 2, "exit_code": 130, "command": "cat", "hand": "default"}
    assert [b.n for b in s.blocks.finished()] == [1, 2]


async def test_a_multi_line_paste(manager: TerminalRegistry, shell: str, home: Path) -> None:
    s = await _shell(manager, shell, home)
    await _eventually(s, lambda: s.screen_model.bracketed_paste, "bracketed paste")  # asked for once the prompt is drawn
    since = s.raw_offset
    s.send(paste="echo one\nfalse\necho three", keys=["Enter"])
    assert (await s.wait(compile_until(block_end=True), since, 5000)).matched
    assert (await s.wait(compile_until(state_in=["idle"], stable_ms=300), since, 5000)).matched
    blocks = [(b.command, b.exit_code) for b in s.blocks.finished()]
    if shell == "bash":  # bash runs the lines one by one, each a block
        assert blocks == [("echo one", 0), ("false", 1), ("echo three", 0)]
        assert [await _output(s, n) for n in (1, 2, 3)] == ["one", "", "three"]
    else:  # zsh runs the whole buffer as one command line
        assert blocks == [("echo one\nfalse\necho three", 0)]
        assert await _output(s, 1) == "one\nthree"


@pytest.mark.parametrize("shell", ["bash"], indirect=True)
async def test_space_prefixed_lines_are_captured_yet_kept_out_of_history(
    manager: TerminalRegistry, home: Path
) -> None:
    s = await _shell(manager, "bash", home)
    assert (await _run(s, " echo hidden"))["command"] == " echo hidden"
    await _run(s, "echo shown")
    await _run(s, "history | grep -c 'echo [hs][a-z]*n$'")
    assert await _output(s, 3) == "1"


@pytest.mark.parametrize("shell", ["bash"], indirect=True)
async def test_no_integration_when_asked_or_not_a_bare_shell(manager: TerminalRegistry, home: Path) -> None:
    off = await _shell(manager, "bash", home, shell_integration=False)
    on = await _shell(manager, "bash", home)
    argv = await manager.create(TerminalSpec(command=["bash", "--norc"], env={"HOME": str(home)}))
    for s in (off, argv):
        assert s.describe()["shell_integration"] is False and "--rcfile" not in _cmdline(s)
    since = off.raw_offset
    off.send(text="true\r")
    assert (await off.wait(compile_until(stable_ms=300), since, 5000)).matched
    assert off.blocks.finished() == [] and b"133;" not in off.read_raw(0, off.raw_offset)
    assert on.describe()["shell_integration"] is True and _cmdline(on) == ["bash", "--rcfile", "/dev/fd/3"]
    assert not os.path.exists(f"/proc/{on.meta.pid}/fd/3"), "the shell closed its rc text"


def _cmdline(s: TerminalSession) -> list[str]:
    return Path(f"/proc/{s.meta.pid}/cmdline").read_bytes().decode().split("\0")[:-1]


async def test_blocks_and_the_shell_survive_a_restart(tmp_path: Path, shell: str, home: Path) -> None:
    root = tmp_path / "terminals"
    first = TerminalRegistry(root, "avt", LIMITS, max_sessions=8)
    await first.start()
    s = await _shell(first, shell, home)
    await _run(s, "echo one")
    await _run(s, "ls /nonexistent-dir")
    since = s.raw_offset
    running = await _start(s, "cat")
    assert (await s.wait(compile_until(state_in=["awaiting_input"]), since, 5000)).matched
    blocks = s.blocks.finished()
    await first.shutdown()  # the daemon goes; the shell and `cat` stay with their holder
    second = TerminalRegistry(root, "avt", LIMITS, max_sessions=8)
    await second.start()
    try:
        again = await second.get(s.id)
        assert again.running and again.describe()["pid"] == s.describe()["pid"]
        assert again.blocks.finished() == blocks, "blocks.jsonl is read again"
        current = again.blocks.current
        assert current is not None and (current.n, current.command, current.start) == (3, "cat", running.start)
        again.send(text="\x04")  # cat reads its end of input and exits (its block has no output: ends where it began)
        await _eventually(again, lambda: len(again.blocks.finished()) == 3, "the end of block 3")
        assert (await _run(again, "echo four"))["n"] == 4, "new blocks keep their numbers"
        assert [b.command for b in again.blocks.finished()] == ["echo one", "ls /nonexistent-dir", "cat", "echo four"]
        assert blocks[1].exit_code == 2 and again.blocks.finished()[2].exit_code == 0
        assert await _output(again, 1) == "one" and await _output(again, 4) == "four"
        assert "No such file or directory" in await _output(again, 2)
        assert again.describe()["shell_integration"] is True and again.describe()["forged_marks"] == 0
    finally:
        await second.stop_all()
        await second.shutdown()


@pytest.mark.parametrize("shell", ["zsh"], indirect=True)
async def test_zsh_reads_the_users_zdotdir_and_keeps_it(manager: TerminalRegistry, home: Path) -> None:
    zdotdir = home / "zdot"
    zdotdir.mkdir()
    (zdotdir / ".zshenv").write_text("export FROM_ZSHENV=yes\n")
    (zdotdir / ".zshrc").write_text("alias greet='echo hello from zdotdir'\n")
    s = await _shell(manager, "zsh", home, env={"HOME": str(home), "ZDOTDIR": str(zdotdir)})
    await _run(s, 'greet; echo "$FROM_ZSHENV $ZDOTDIR"')
    assert await _output(s, 1) == f"hello from zdotdir\nyes {zdotdir}"

