"""The program's process made ahead of its spec (lookout.terminal.holder.pty.fork_ahead, release): real PTYs and
real processes."""

from __future__ import annotations

import ctypes
import os
import select
import signal
from collections.abc import Iterator
from pathlib import Path

import pytest

from lookout.terminal.holder.pty import PR_SET_CHILD_SUBREAPER, Ahead, fork_ahead, release


@pytest.fixture(autouse=True)
def not_a_subreaper_after() -> Iterator[None]:
    """fork_ahead makes its caller, here the test process, its children's subreaper (as a holder is): undone
    after each test, or every process orphaned later in this test run would be left a zombie under it (a test
    of another module that waits for a killed job's /proc entry to go waited in vain)."""
    yield
    assert ctypes.CDLL(None, use_errno=True).prctl(PR_SET_CHILD_SUBREAPER, 0, 0, 0, 0) == 0


def _output(ahead: Ahead) -> bytes:
    """What the program wrote until it hung up."""
    out = b""
    while select.select([ahead.master], [], [], 10)[0]:
        try:
            chunk = os.read(ahead.master, 4096)
        except OSError:  # EIO: every holder of the slave has closed it
            break
        if not chunk:
            break
        out += chunk
    return out


def _exit_code(pid: int) -> int:
    return os.waitstatus_to_exitcode(os.waitpid(pid, 0)[1])


def test_the_process_made_ahead_has_its_terminal_open_when_it_is_handed_over() -> None:
    """A read of the master before the program has the slave open fails as a hang-up (EIO): a holder would
    stop reading its terminal for good. So fork_ahead returns only once its process has the slave."""
    for _ in range(20):
        ahead = fork_ahead()
        try:
            os.set_blocking(ahead.master, False)
            try:
                os.read(ahead.master, 1)
            except BlockingIOError:
                pass  # the slave is open, and nothing written yet
            else:
                raise AssertionError("read something from a terminal nobody wrote to")
        finally:
            os.close(ahead.release_fd)  # never released: the process ends without a word
            assert _exit_code(ahead.pid) == 0
            os.close(ahead.master)


def test_a_released_process_runs_the_program_as_the_leader_of_its_session_on_the_terminal(tmp_path: Path) -> None:
    ahead = fork_ahead()
    try:
        script = 'echo "$0 $(pwd) $FROM_SPEC"; [ "$(ps -o sid= -p $$)" -eq $$ ] && [ -t 0 ] && echo leader-on-tty'
        env = {"PATH": os.environ["PATH"], "FROM_SPEC": "yes"}
        release(ahead, {"argv": ["sh", "-c", script], "cwd": str(tmp_path), "env": env, "nonce": None})
        out = _output(ahead)
        assert _exit_code(ahead.pid) == 0
    finally:
        os.close(ahead.master)
    assert out.replace(b"\r\n", b"\n") == f"sh {tmp_path} yes\nleader-on-tty\n".encode()


def test_a_released_process_has_every_signal_at_its_default_and_a_nonce_on_a_pipe_of_its_own() -> None:
    signal.signal(signal.SIGUSR1, signal.SIG_IGN)  # what the holder ignores must not stay ignored in the program
    try:
        ahead = fork_ahead()
    finally:
        signal.signal(signal.SIGUSR1, signal.SIG_DFL)
    try:
        script = 'grep -E "^Sig(Ign|Blk)" /proc/$$/status; read -r nonce <&$LOOKOUT_NONCE_FD; echo "nonce=$nonce"'
        release(
            ahead, {"argv": ["sh", "-c", script], "cwd": "/", "env": {"PATH": os.environ["PATH"]}, "nonce": "n0nce"}
        )
        out = _output(ahead).decode()
        _exit_code(ahead.pid)
    finally:
        os.close(ahead.master)
    ignored = int(out.split("SigIgn:")[1].split()[0], 16)
    assert not ignored & (1 << (signal.SIGUSR1 - 1)), out
    assert int(out.split("SigBlk:")[1].split()[0], 16) == 0, out
    assert "nonce=n0nce" in out


# Reads the rc text from its descriptor, then tries to change it through /proc (as any program of the user could).
RC_SCRIPT = """
cat /dev/fd/$LOOKOUT_RC_FD
python3 -c 'import os, sys
try:
    fd = os.open(f"/proc/{os.getppid()}/fd/3", os.O_WRONLY)
    os.write(fd, b"planted")
    print("changed")
except OSError as exc:
    print("refused", exc.errno)'
"""


def test_the_rc_text_comes_on_a_sealed_descriptor_nobody_can_write() -> None:
    ahead = fork_ahead()
    try:
        spec = {"argv": ["sh", "-c", RC_SCRIPT], "cwd": "/", "env": {"PATH": os.environ["PATH"]}, "nonce": None,
                "rc": "echo from-the-rc-text"}  # fmt: skip
        release(ahead, spec)
        out = _output(ahead).decode()
        _exit_code(ahead.pid)
    finally:
        os.close(ahead.master)
    assert "echo from-the-rc-text" in out and "refused 1" in out and "changed" not in out, out
