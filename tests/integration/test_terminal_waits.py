"""Waits that mean what they say, on real PTYs (bash, python3, less, vim) through lookout.terminal.act: a regex
does not match the echo of the input, a state is an edge after the input, `match: all`, a command's end
waits for its prompt, a shell named bare is a shell, and input keeps the order of its steps."""
from __future__ import annotations

import sys
from pathlib import Path

import pytest

from lookout.core.errors import BadInput
from lookout.terminal.act import ActResult, act
from lookout.terminal.input.steps import InputStep
from lookout.terminal.registry import TerminalRegistry
from lookout.terminal.screen.layers import ViewOptions
from lookout.terminal.session import TerminalSession
from lookout.terminal.spec import TerminalSpec
from lookout.terminal.waits.waiting import PROMPT_WAIT_S, compile_until

VIEW = ViewOptions()


async def _bash(manager: TerminalRegistry, tmp_path: Path, rc: str = "") -> TerminalSession:
    """bash with lookout's shell integration, a prompt of `$ ` and the rc lines `rc`."""
    home = tmp_path / "home"
    home.mkdir(exist_ok=True)
    (home / ".bashrc").write_text("PS1='$ '\n" + rc)
    s = await manager.create(TerminalSpec(command=["bash"], cwd=str(home), env={"HOME": str(home)}, cols=80, rows=24))
    assert (await s.wait(compile_until(state_in=["idle"]), 0, 10_000)).matched
    return s


async def _act(s: TerminalSession, *steps: InputStep, timeout_ms: int = 20_000, **until: object) -> ActResult:
    return await act(s, list(steps), compile_until(**until), timeout_ms, VIEW)  # type: ignore[arg-type]


def _line(text: str) -> InputStep:
    return InputStep(text=text, keys=("Enter",))


def _rows(result: ActResult) -> list[str]:
    """The screen's rows, without the blank ones at the bottom."""
    assert isinstance(result.screen, dict)
    rows = [row.rstrip() for row in result.screen["text"]]
    while rows and not rows[-1]:
        rows.pop()
    return rows


async def test_a_stream_regex_does_not_match_the_echo_of_the_input(manager: TerminalRegistry, tmp_path: Path) -> None:
    s = await _bash(manager, tmp_path)
    since = s.raw_offset
    echoed = await _act(s, _line("sleep 1; echo FINISHED"), regex="FINISHED", echo=True)
    assert echoed.wait.matched and b"\nFINISHED" not in s.read_raw(since, echoed.wait.cursor - since)
    assert (await s.wait(compile_until(block_end=True), None, 20_000)).prompt  # back at the prompt
    # the default: the match is the command's output, after the echo
    result = await _act(s, _line("sleep 1; echo FINISHED"), regex="^FINISHED")
    assert result.wait.reason == "regex" and result.wait.echo_end is not None
    assert result.wait.cursor > result.wait.echo_end
    assert _rows(result)[2:4] == ["$ sleep 1; echo FINISHED", "FINISHED"], _rows(result)
    assert (await s.wait(compile_until(block_end=True), None, 20_000)).prompt
    # a long command line that wraps (80 columns) is skipped as a whole
    word = "x" * 100
    wrapped = await _act(s, _line(f"sleep 1; echo {word}"), regex=word)
    assert word[:80] in _rows(wrapped)[6:], _rows(wrapped)  # the output (the echo's rows have the prompt)


async def test_a_state_holds_only_once_the_terminal_answered_the_input(manager: TerminalRegistry, tmp_path: Path) -> None:
    s = await _bash(manager, tmp_path)
    started = await _act(s, _line(f"{sys.executable} -q"), state_in=["awaiting_input"])
    assert started.wait.reason == "state" and _rows(started)[-1].startswith(">>>"), _rows(started)
    slept = await _act(s, _line("import time; time.sleep(1); print(4242)"), state_in=["awaiting_input"])
    assert slept.wait.reason == "state" and "4242" in _rows(slept), _rows(slept)
    assert _rows(slept)[-1].startswith(">>>")
    # without input the state is read as it is (level): the REPL waits for input now
    again = await s.wait(compile_until(state_in=["awaiting_input"]), s.raw_offset, 5000)
    assert again.matched and again.reason == "state"


async def test_match_all_needs_every_condition_at_once(manager: TerminalRegistry, tmp_path: Path) -> None:
    s = await _bash(manager, tmp_path)
    line = _line("(sleep 1; seq 1 100) | less")  # less shows a blank screen for a second
    result = await _act(s, line, regex="^1$", on="screen", state_in=["tui"], stable_ms=100, match="all")
    assert result.wait.reason == "screen+state+stable" and result.wait.state == "tui"
    assert _rows(result)[:3] == ["1", "2", "3"], _rows(result)


async def test_block_end_waits_for_the_next_prompt(manager: TerminalRegistry, tmp_path: Path) -> None:
    s = await _bash(manager, tmp_path, rc="PROMPT_COMMAND+=('sleep 0.5')\n")  # the prompt comes late
    result = await _act(s, _line("echo hi"), block_end=True)
    assert result.wait.reason == "block_end" and result.wait.prompt is True and result.wait.exit_code == 0
    assert result.wait.state == "idle" and _rows(result)[-1] == "$", _rows(result)


async def test_block_end_says_when_the_prompt_did_not_come(manager: TerminalRegistry, tmp_path: Path) -> None:
    s = await _bash(manager, tmp_path, rc=f"PROMPT_COMMAND+=('[ -e go ] && sleep {PROMPT_WAIT_S * 3}')\n")
    result = await _act(s, _line("touch go; false"), block_end=True)
    assert result.wait.reason == "block_end" and result.wait.prompt is False and result.wait.exit_code == 1
    assert result.wait.note and "no prompt" in result.wait.note
    assert "note" in result.to_json() and result.to_json()["exit_code"] == 1


@pytest.mark.parametrize("command", ["bash", ["bash"], "sh", ["sh"]])
async def test_a_shell_named_bare_is_a_shell_at_its_prompt(manager: TerminalRegistry, command: object) -> None:
    s = await manager.create(TerminalSpec(command=command, cols=80, rows=24))  # type: ignore[arg-type]
    assert s.meta.shell and s.meta.shell_integration == ("bash" in command)
    ready = await s.wait(compile_until(state_in=["idle"]), None, 10_000)
    assert ready.matched and ready.state == "idle", ready
    if s.meta.shell_integration:
        assert (await _act(s, _line("true"), block_end=True)).wait.reason == "block_end"
        # `read` at the prompt (nothing printed): the state changed from idle, that is the answer
        reading = await _act(s, _line("read answer"), state_in=["awaiting_input", "password"])
        assert reading.wait.state == "awaiting_input"


async def test_input_steps_keep_their_order_in_vim(manager: TerminalRegistry, tmp_path: Path) -> None:
    target = tmp_path / "note.txt"
    s = await manager.create(TerminalSpec(command=["vim", "-u", "NONE", "-N", str(target)], cols=80, rows=24))
    assert (await s.wait(compile_until(state_in=["tui"], stable_ms=300, match="all"), 0, 10_000)).matched
    steps = [InputStep(keys=("i",)), InputStep(paste="first\nsecond"), InputStep(keys=("Escape",)), _line(":wq")]
    result = await _act(s, *steps, exit=True)
    assert result.wait.reason == "exit" and target.read_text() == "first\nsecond\n"


async def test_act_without_input_resumes_a_wait_from_since(manager: TerminalRegistry, tmp_path: Path) -> None:
    s = await _bash(manager, tmp_path)
    started = await _act(s, _line("sleep 1; echo DONE-$((6*7))"), timeout_ms=0, regex="^DONE-42")
    assert started.wait.reason == "timeout"
    assert (await s.wait(compile_until(block_end=True), None, 20_000)).prompt  # DONE-42 is written now
    # from the earlier answer's cursor the wait sees what came since; from now it would not
    resumed = await act(s, None, compile_until(regex="^DONE-42"), 5000, VIEW, since=started.wait.cursor)
    assert resumed.wait.reason == "regex" and resumed.to_json()["ended"] == "regex"
    assert "DONE-42" in _rows(resumed)
    missed = await act(s, None, compile_until(regex="^DONE-42"), 0, VIEW)
    assert missed.wait.reason == "timeout"
    with pytest.raises(BadInput, match="since resumes a wait"):
        await act(s, [_line("true")], compile_until(stable_ms=100), 1000, VIEW, since=0)
