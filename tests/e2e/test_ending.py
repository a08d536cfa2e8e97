"""Ending a terminal ends its program (issue 34, items 6 and 7): the stop ladder (hang up, terminate, kill the
session) with or without a daemon and with or without a live holder; DELETE and `lookout kill` say which
signal ended it and fail while something of it is still there; a dead holder's socket is removed and `ls`
says what became of its terminal; a holder that answered late is adopted later, and `kill --all` ends a
terminal the daemon lost while its program runs."""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
from pathlib import Path

import httpx
import pytest

from lookout.terminal.holder.pty import session_members
from tests.conftest import REPO, Daemon
from tests.support.polling import eventually
from tests.support.processes import RUNGS, rungs_from, running

IGNORES_HANGUP = "trap '' HUP; sleep 1000"
"""A program that ignores SIGHUP (the shell and its sleep both): only SIGTERM or SIGKILL ends it. `ended_by` names
the rung after which lookout saw it gone: SIGTERM, or SIGKILL when a loaded machine let SIGTERM's grace pass
first; its exit status (-15) says which signal killed it whatever the load."""


def _session(pid: int) -> list[int]:
    """The live processes of the program's session (it leads it)."""
    return [p for p in session_members(pid) if running(p)]


def _holder_of(pid: int) -> int:
    return int(Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[1])


def _lookout(data: Path, *args: str) -> subprocess.CompletedProcess[str]:
    cmd = [sys.executable, "-m", "lookout", *args, "--data-dir", str(data)]
    return subprocess.run(cmd, cwd=REPO, capture_output=True, text=True, timeout=120, check=False)


def _start(api: httpx.Client, command: str = IGNORES_HANGUP) -> tuple[str, int]:
    info = api.post("/v1/terminals", json={"command": command, "cols": 80, "rows": 24}).json()
    pid = info["pid"]
    eventually(lambda: any(Path(f"/proc/{p}/cmdline").read_bytes().startswith(b"sleep") for p in _session(pid)),
               what="the sleep to run")  # fmt: skip
    return info["id"], pid


def _killed(output: str, tid: str, first: str) -> str:
    """The rung `lookout kill`'s `output` says ended `tid`: `first` or a later one."""
    found = re.search(rf"^{tid}: ended by (SIG[A-Z]+)", output, re.MULTILINE)
    assert found is not None and found[1] in rungs_from(first), output
    return found[1]


def _kill_holder(pid: int) -> None:
    holder = _holder_of(pid)
    os.kill(holder, signal.SIGKILL)
    eventually(lambda: not running(holder), what="the holder to die")


def test_delete_ends_a_program_that_ignores_hangup_with_its_holder_and_says_by_which_signal(tmp_path: Path) -> None:
    d = Daemon(tmp_path / "data").start()
    with d.client() as api:
        tid, pid = _start(api)
        r = api.delete(f"/v1/terminals/{tid}")
        assert r.status_code == 200, r.text
        assert (r.json()["status"], r.json()["exit_code"]) == ("exited", -15), r.json()
        assert r.json()["ended_by"] in rungs_from("SIGTERM"), r.json()
        assert _session(pid) == []
        assert api.get(f"/v1/terminals/{tid}").json()["ended_by"] == r.json()["ended_by"]
    d.finish()


def test_delete_ends_the_program_after_its_holder_was_killed(tmp_path: Path) -> None:
    d = Daemon(tmp_path / "data").start()
    with d.client() as api:
        tid, pid = _start(api)
        _kill_holder(pid)
        info = eventually(lambda: (t := api.get(f"/v1/terminals/{tid}").json())["status"] == "lost" and t,
                          what="the terminal to be lost")  # fmt: skip
        assert _session(pid), "the program outlives its holder (it ignores the hangup)"
        assert f"runs on as pid {pid}" in info["lost_reason"], info
        r = api.delete(f"/v1/terminals/{tid}")
        assert r.status_code == 200, r.text
        ended_by = r.json()["ended_by"]
        assert r.json()["status"] == "exited" and ended_by in rungs_from("SIGTERM"), r.json()
        assert _session(pid) == [], "DELETE answers once the program is gone"
        assert not (tmp_path / "data" / "holders" / f"{tid}.sock").exists(), "the dead holder's socket is removed"
    d.finish()
    listed = _lookout(tmp_path / "data", "ls", "--exited")
    assert f"{tid}: sh [80x24] exited" in listed.stdout or f"{tid}: trap [80x24] exited" in listed.stdout, listed
    assert f"ended by {ended_by}" in listed.stdout, listed


def test_lookout_kill_without_a_daemon_ends_the_program_of_a_killed_holder(tmp_path: Path) -> None:
    d = Daemon(tmp_path / "data").start()
    with d.client() as api:
        tid, pid = _start(api)
        survivor, survivor_pid = _start(api)
    d.stop()
    _kill_holder(pid)
    listed = _lookout(tmp_path / "data", "ls")
    line = next(line for line in listed.stdout.splitlines() if line.startswith(tid))
    assert " orphaned " in line and f"runs on as pid {pid}" in line, listed
    assert "Errno" not in listed.stdout and not (tmp_path / "data" / "holders" / f"{tid}.sock").exists()
    killed = _lookout(tmp_path / "data", "kill", tid)
    assert killed.returncode == 0
    ended_by = {tid: _killed(killed.stdout, tid, "SIGTERM")}
    assert "its holder is gone" in killed.stdout
    assert _session(pid) == [] and _session(survivor_pid), "only the terminal named"
    again = _lookout(tmp_path / "data", "kill", tid)
    assert again.returncode == 0 and "had ended already" in again.stdout, again
    listed = _lookout(tmp_path / "data", "ls", "--exited")
    assert f"ended by {ended_by[tid]}" in next(line for line in listed.stdout.splitlines() if line.startswith(tid))
    with_holder = _lookout(tmp_path / "data", "kill", survivor)
    assert with_holder.returncode == 0 and "(exit -15)" in with_holder.stdout, with_holder
    ended_by[survivor] = _killed(with_holder.stdout, survivor, "SIGTERM")
    assert _session(survivor_pid) == []
    listed = _lookout(tmp_path / "data", "ls", "--exited")  # its holder ran the ladder, with no daemon to hear how it ended
    line = next(line for line in listed.stdout.splitlines() if line.startswith(survivor))
    assert f"ended by {ended_by[survivor]}, exit -15" in line, listed
    after = Daemon(tmp_path / "data").start()
    with after.client() as api:
        for terminal in (tid, survivor):
            info = api.get(f"/v1/terminals/{terminal}").json()
            assert (info["status"], info["ended_by"]) == ("exited", ended_by[terminal]), info
    after.finish()


NO_KILL = ["setpriv", "--bounding-set", "-kill", "--inh-caps", "-kill"]
"""Run as root without CAP_KILL: a process of another user cannot be signalled (as for anyone but root)."""


@pytest.mark.skipif(os.getuid() != 0, reason="makes a process of another user")
def test_delete_and_kill_fail_while_the_program_is_still_there(tmp_path: Path) -> None:
    d = Daemon(tmp_path / "data")
    d.start_command = NO_KILL
    d.start()
    try:
        with d.client(timeout=120) as api:
            as_nobody = ["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups", "sleep", "1000"]
            info = api.post("/v1/terminals", json={"command": as_nobody}).json()
            tid, pid = info["id"], info["pid"]
            eventually(lambda: Path(f"/proc/{pid}/cmdline").read_bytes().startswith(b"sleep"), what="the sleep")
            r = api.delete(f"/v1/terminals/{tid}")
            assert r.status_code == 409, r.text
            assert f"still there after SIGKILL: {pid}" in r.json()["error"]["message"], r.text
            assert running(pid)
        d.stop()
        cmd = [*NO_KILL, sys.executable, "-m", "lookout", "kill", tid, "--data-dir", str(tmp_path / "data")]
        killed = subprocess.run(cmd, cwd=REPO, capture_output=True, text=True, timeout=120, check=False)
        assert killed.returncode == 1 and f"{tid}: not ended:" in killed.stderr, killed
        assert f"still there after SIGKILL: {pid}" in killed.stderr and running(pid)
    finally:
        os.kill(pid, signal.SIGKILL)


def test_a_pid_that_is_another_process_now_is_never_signalled(tmp_path: Path) -> None:
    d = Daemon(tmp_path / "data").start()
    with d.client() as api:
        tid, pid = _start(api)
    d.stop()
    _kill_holder(pid)
    meta_path = tmp_path / "data" / "terminals" / tid / "meta.json"
    meta = json.loads(meta_path.read_text())
    meta["program_start"] = meta["program_start"].rsplit(":", 1)[0] + ":1"  # as if its pid were another's now
    meta_path.write_text(json.dumps(meta))
    killed = _lookout(tmp_path / "data", "kill", tid)
    assert killed.returncode == 0 and "had ended already" in killed.stdout, killed
    assert _session(pid), "a process that is not the terminal's program is never signalled"
    os.killpg(pid, signal.SIGKILL)


def test_a_holder_that_answers_late_is_adopted_later_and_kill_all_ends_a_lost_one(tmp_path: Path) -> None:
    d = Daemon(tmp_path / "data").start()
    with d.client() as api:
        late = api.post("/v1/terminals", json={"command": "bash", "cols": 80, "rows": 24}).json()
        lost = api.post("/v1/terminals", json={"command": "bash", "cols": 80, "rows": 24}).json()
    d.stop()
    late_holder, lost_holder = _holder_of(late["pid"]), _holder_of(lost["pid"])
    os.kill(late_holder, signal.SIGSTOP)
    os.kill(lost_holder, signal.SIGSTOP)
    again = Daemon(tmp_path / "data").start()
    try:
        with again.client() as api:
            status = {t["id"]: t for t in api.get("/v1/terminals").json()["terminals"]}
            assert status[late["id"]]["state"] == "adopting", "listed at once, its holder not greeted yet"
            late_now = api.get(f"/v1/terminals/{late['id']}").json()  # waits for its adoption
            assert late_now["status"] == "lost", "a holder that does not answer is not adopted"
            assert "did not answer" in late_now["lost_reason"]
            os.kill(late_holder, signal.SIGCONT)
            eventually(lambda: api.get(f"/v1/terminals/{late['id']}").json()["status"] == "running", timeout=60,
                       what="the late holder to be adopted")  # fmt: skip
            r = api.post(f"/v1/terminals/{late['id']}/act", json={"input": {"text": "echo late-$((6*7))\r"},
                                                                     "until": {"regex": "^late-42"}})  # fmt: skip
            assert r.json()["ended"] == "regex", r.text
            assert api.get(f"/v1/terminals/{lost['id']}").json()["status"] == "lost"
    finally:
        again.stop()
        os.kill(lost_holder, signal.SIGCONT)
    listed = _lookout(tmp_path / "data", "ls")
    line = next(line for line in listed.stdout.splitlines() if line.startswith(lost["id"]))
    assert " running " in line and "the daemon lost it" in line, listed
    killed = _lookout(tmp_path / "data", "kill", "--all")
    assert killed.returncode == 0, killed
    for terminal in (lost, late):  # interactive shells: a hangup ends them, a later rung if the machine is slow
        _killed(killed.stdout, terminal["id"], RUNGS[0])
    eventually(lambda: not _session(lost["pid"]) and not _session(late["pid"]), what="both shells to end")
