"""The shells the tests open read none of the machine's rc files (tests/conftest.py's TEST_HOME): root's ~/.bashrc
here runs `pyenv init`, which can wait 60 s on a lock another shell left behind."""

from __future__ import annotations

from lookout.terminal.registry import TerminalRegistry
from lookout.terminal.spec import TerminalSpec
from lookout.terminal.waits.waiting import compile_until
from tests.conftest import TEST_HOME


async def test_a_shell_opened_as_a_user_would_starts_in_the_tests_own_home(manager: TerminalRegistry) -> None:
    s = await manager.create(TerminalSpec(command=["bash"], cols=100, rows=10))  # interactive, with rc files
    s.send(text='echo "home=$HOME; rc-pyenv=$(declare -F pyenv || echo none)"\r')
    result = await s.wait(compile_until(regex=r"^home=\S+; rc-pyenv=\S+"), None, 60_000)
    assert result.matched, result
    assert f"home={TEST_HOME}; rc-pyenv=none" in (await s.screen())["text"]
