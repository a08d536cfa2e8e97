"""Every answer is the truth on the holder -> journal -> follower path: an `act` until `block_end` shows the
prompt the shell printed after the command (on a loaded machine, with both engines), a wait without `since`
resumes from the last input also after a restart, and a command that ends while no daemon runs keeps its
true duration."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from tests.conftest import Daemon
from tests.support.holder_script import CONNECT
from tests.support.polling import eventually

PROMPT = "READY>"
COMMANDS = ("true", "ls /", "git status -s", "false", "echo hi", "printf 'a\\nb\\n'", "pwd", "ls /nonexistent", ":",
            "cd /tmp", "cd -")  # fmt: skip
"""Quick commands: their output and the next prompt come in one burst right after the end mark."""


def _home(tmp_path: Path) -> Path:
    """A HOME whose .bashrc sets a prompt the test knows (and runs nothing else)."""
    home = tmp_path / "home"
    home.mkdir(exist_ok=True)
    (home / ".bashrc").write_text(f"PS1='{PROMPT} '\n")
    return home


def _shell(api: httpx.Client, home: Path, cwd: Path | None = None) -> str:
    r = api.post("/v1/terminals", json={"command": "bash", "cols": 80, "rows": 24, "env": {"HOME": str(home)},
                                        "cwd": str(cwd or home)})  # fmt: skip
    assert r.status_code == 201, r.text
    tid = r.json()["id"]
    ready = api.post(f"/v1/terminals/{tid}/wait", json={"until": {"regex": PROMPT}, "since": 0, "timeout_ms": 30_000})
    assert ready.json()["matched"], ready.text
    return tid


@pytest.fixture
def cpu_hog() -> Iterator[None]:
    """Both cores busy beside the daemon, as on a loaded machine."""
    hogs = [subprocess.Popen([sys.executable, "-c", "while True: pass"]) for _ in range(2)]
    try:
        yield
    finally:
        for hog in hogs:
            hog.kill()
            hog.wait()


@pytest.mark.parametrize("engine", ["avt", "pyte"])
def test_act_until_block_end_always_shows_the_next_prompt(tmp_path: Path, engine: str, cpu_hog: None) -> None:
    home = _home(tmp_path)
    daemon = Daemon(tmp_path / "data", LOOKOUT_SCREEN_ENGINE=engine).start()
    repo = Path(__file__).resolve().parents[2]
    with daemon.client(timeout=120) as api:
        tid = _shell(api, home, cwd=repo)
        missing = []
        for i in range(200):
            line = COMMANDS[i % len(COMMANDS)]
            r = api.post(f"/v1/terminals/{tid}/act", json={"input": {"text": line, "keys": ["Enter"]},
                                                            "until": {"block_end": True}, "timeout_ms": 30_000})  # fmt: skip
            assert r.status_code == 200, r.text
            answer = r.json()
            rows = [row for row in answer["screen"]["text"] if row.strip()]
            cursor = answer["screen"]["cursor"]
            if answer["ended"] != "block_end" or answer["state"] != "idle" or rows[-1] != PROMPT:
                missing.append((i, line, answer["ended"], answer["state"], rows[-2:]))
            elif answer["screen"]["text"][cursor["top"]].rstrip() != PROMPT or cursor["left"] != len(PROMPT) + 1:
                missing.append((i, line, "cursor", cursor, rows[-2:]))
    daemon.finish()
    assert not missing, f"{len(missing)} of 200 answers without the prompt: {missing[:5]}"


def test_a_wait_without_since_resumes_from_the_last_input_after_a_restart(tmp_path: Path) -> None:
    home = _home(tmp_path)
    daemon = Daemon(tmp_path / "data").start()
    with daemon.client() as api:
        tid = _shell(api, home)
        r = api.post(f"/v1/terminals/{tid}/act", json={"input": {"text": "echo MARK-1", "keys": ["Enter"]},
                                                        "until": {"block_end": True}})  # fmt: skip
        assert "MARK-1" in "\n".join(r.json()["screen"]["text"])
        sent = api.post(f"/v1/terminals/{tid}/input", json={"text": "sleep 2; echo MARK-$((1+1))\r"}).json()
    daemon.stop(signal.SIGKILL)
    daemon.start()
    with daemon.client() as api:
        waited = api.post(f"/v1/terminals/{tid}/wait", json={"until": {"regex": "MARK-\\d"}, "timeout_ms": 30_000})
        answer = waited.json()
    daemon.finish()
    assert answer["matched"] and answer["match"]["text"] == "MARK-2", answer
    assert answer["cursor"] > sent["raw_offset"], "the match is output after the last input"


def _prompts(daemon: Daemon, tid: str) -> int:
    """How many prompts the terminal's holder has journaled; the one after a command comes after its end mark,
    whose time the holder recorded first."""
    return (daemon.data_dir / "terminals" / tid / "output.raw").read_bytes().count(PROMPT.encode())


def _command(daemon: Daemon, api: httpx.Client, tid: str, command: str) -> tuple[float, float, int]:
    """Runs `command` at the shell; once its block has started: when it was sent, when the daemon had seen it
    start, and how many prompts the holder had journaled before it."""
    prompts = _prompts(daemon, tid)
    sent = time.monotonic()
    api.post(f"/v1/terminals/{tid}/input", json={"text": f"{command}\r"})
    eventually(lambda: api.get(f"/v1/terminals/{tid}").json()["block"], what="the command to start")
    return sent, time.monotonic(), prompts


def _ended(daemon: Daemon, tid: str, sent: float, started: float, prompts: int) -> float:
    """Waits, while the daemon does not read, until the holder has journaled the command's end; then until a
    daemon that timed the end by its own reading would give a longer duration than the command can have had.
    That longest true duration, in ms."""
    eventually(lambda: _prompts(daemon, tid) > prompts, timeout=60, what="the command to end")
    longest = time.monotonic() - sent
    time.sleep(max(0.0, started + longest + 1 - time.monotonic()))
    return longest * 1000


def test_a_command_that_ends_while_no_daemon_runs_keeps_its_duration(tmp_path: Path) -> None:
    home = _home(tmp_path)
    daemon = Daemon(tmp_path / "data").start()
    with daemon.client() as api:
        tid = _shell(api, home)
        command = _command(daemon, api, tid, "sleep 4")
    daemon.stop(signal.SIGKILL)
    longest_ms = _ended(daemon, tid, *command)  # the command ends while no daemon runs
    daemon.start()
    with daemon.client() as api:
        blocks = api.get(f"/v1/terminals/{tid}/blocks").json()["blocks"]
    daemon.finish()
    (block,) = [b for b in blocks if b["command"] == "sleep 4"]
    assert 3500 <= block["duration_ms"] <= longest_ms, (block, longest_ms)


def test_ended_marks_carry_the_holders_times_not_the_readers(tmp_path: Path) -> None:
    """The same as above without a restart: a daemon that reads late (stopped with SIGSTOP while the command
    ends) still records when the command ended."""
    home = _home(tmp_path)
    daemon = Daemon(tmp_path / "data").start()
    assert daemon.proc is not None
    with daemon.client() as api:
        tid = _shell(api, home)
        command = _command(daemon, api, tid, "sleep 3")
        os.kill(daemon.proc.pid, signal.SIGSTOP)
        longest_ms = _ended(daemon, tid, *command)
        os.kill(daemon.proc.pid, signal.SIGCONT)
        block = eventually(lambda: next((b for b in api.get(f"/v1/terminals/{tid}/blocks").json()["blocks"]
                                         if b["command"] == "sleep 3" and b["ended_at"]), None), what="the block to end")  # fmt: skip
    daemon.finish()
    assert 500 <= block["duration_ms"] <= longest_ms, (block, longest_ms)


SELF_RESIZE = CONNECT + r"""
s, data = connect()
s.sendall(json.dumps({"op": "resize", "cols": 50, "rows": 20}).encode() + b"\n")
s.sendall(b'{"op":"sync","id":1}\n')  # answered once the resize is done
while b"synced" not in data:
    data += s.recv(65536)
print("resized-" + "self " + "y" * 60)
"""


def test_a_program_that_resizes_its_own_terminal_through_its_holder_is_shown_at_that_size(tmp_path: Path) -> None:
    """Its holder resizes the PTY and journals the size; the daemon's screen, the terminal's size and a replay of
    the same moment all follow it."""
    data = tmp_path / "data"
    script = tmp_path / "resize.py"
    script.write_text(SELF_RESIZE)
    d = Daemon(data).start()
    with d.client() as api:
        tid = _shell(api, _home(tmp_path))
        command = f"{sys.executable} {script} {data / 'holders'} {tid}.sock\r"
        r = api.post(f"/v1/terminals/{tid}/act", json={"input": {"text": command}, "until": {"regex": "^resized-self"},
                                                       "screen": {"layers": "text"}})  # fmt: skip
        assert r.json()["ended"] == "regex", r.text
        info = api.get(f"/v1/terminals/{tid}").json()
        assert (info["cols"], info["rows"]) == (50, 20), info
        live = api.get(f"/v1/terminals/{tid}/screen").json()
        assert live["terminal"] == {"width": 50, "height": 20}, live
        assert "resized-self " + "y" * 37 in live["text"] and "y" * 23 in live["text"], live["text"]  # wrapped at 50
        replayed = api.get(f"/v1/terminals/{tid}/screen", params={"at": live["raw_offset"]}).json()
        assert replayed["text"] == live["text"]
    d.finish()
