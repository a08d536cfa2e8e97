"""Terminals outlive the daemon (issue: terminals that outlive the daemon): each terminal's program is held by a
holder process; a daemon killed as the OOM killer kills (`kill -9` of the daemon alone), stopped cleanly, or
replaced by another checkout of lookout finds its terminals running again, with no byte of their output
lost; what cannot be adopted is `lost` with the reason, never trusted."""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path

import httpx
import pytest

from tests.conftest import READY_LINE, REPO, Daemon
from tests.support.in_flight import InFlight
from tests.support.polling import eventually
from tests.support.processes import running


def _wait(api: httpx.Client, tid: str, until: dict, since: int | None = None, timeout_ms: int = 30_000) -> dict:
    body: dict = {"until": until, "timeout_ms": timeout_ms}
    if since is not None:
        body["since"] = since
    r = api.post(f"/v1/terminals/{tid}/wait", json=body)
    assert r.status_code == 200, r.text
    return r.json()


def _shell(api: httpx.Client) -> str:
    tid = api.post("/v1/terminals", json={"command": "bash", "cols": 80, "rows": 24}).json()["id"]
    assert _wait(api, tid, {"state_in": ["idle"]}, since=0)["matched"]
    return tid


def test_a_shell_mid_command_survives_kill_9_of_the_daemon(tmp_path: Path) -> None:
    d = Daemon(tmp_path / "data").start()
    with d.client() as api:
        tid = _shell(api)
        pid = api.get(f"/v1/terminals/{tid}").json()["pid"]
        api.post(f"/v1/terminals/{tid}/input", json={"text": "X=42; sleep 20; echo done-$X\r"})
        assert eventually(lambda: api.get(f"/v1/terminals/{tid}").json()["block"], what="the block to start")
        cursor = api.get(f"/v1/terminals/{tid}").json()["raw_size"]
    assert d.stop(signal.SIGKILL) == -signal.SIGKILL
    assert running(pid), "the shell outlives the daemon"
    again = Daemon(tmp_path / "data").start()
    with again.client() as api:
        info = api.get(f"/v1/terminals/{tid}").json()
        assert info["status"] == "running" and info["pid"] == pid and info["block"]["n"] == 1, info
        ended = _wait(api, tid, {"block_end": True}, since=cursor)  # a wait resumes from the cursor it had
        assert ended["matched"] and ended["block"]["exit_code"] == 0 and ended["block"]["n"] == 1, ended
        assert "done-42" in api.get(f"/v1/terminals/{tid}/screen").json()["text"]
        r = api.post(f"/v1/terminals/{tid}/act", json={"input": {"text": "echo X=$X\r"}, "until": {"regex": "^X=\\d+"}})
        assert r.json()["ended"] == "regex" and "X=42" in r.json()["screen"]["text"], r.text
        blocks = api.get(f"/v1/terminals/{tid}/blocks").json()["blocks"]
        assert [b["n"] for b in blocks] == [1, 2] and blocks[1]["command"] == "echo X=$X"
    again.finish()


FLOOD_LINES = 5_600_000
"""`seq` writes about 50 MB."""


@pytest.mark.parametrize("how", ["kill -9", "clean stop"])
def test_a_50_mb_flood_across_a_restart_loses_no_line(tmp_path: Path, how: str) -> None:
    expected = tmp_path / "expected.txt"
    d = Daemon(tmp_path / "data").start()
    with d.client() as api:
        command = f"seq 1 {FLOOD_LINES} | tee {expected}; echo flood-done"
        tid = api.post("/v1/terminals", json={"command": command, "cols": 80, "rows": 24}).json()["id"]
        eventually(lambda: api.get(f"/v1/terminals/{tid}").json()["raw_size"] > 5_000_000, what="5 MB of output")
    d.stop(signal.SIGKILL if how == "kill -9" else signal.SIGTERM)
    time.sleep(2)
    again = Daemon(tmp_path / "data").start()
    with again.client() as api:
        assert api.get(f"/v1/terminals/{tid}").json()["status"] in ("running", "exited")
        info = eventually(lambda: (t := api.get(f"/v1/terminals/{tid}").json())["status"] == "exited" and t,
                          timeout=300, what="the flood to end")  # fmt: skip
        assert info["exit_code"] == 0
        assert "flood-done" in api.get(f"/v1/terminals/{tid}/screen").json()["text"]
    again.finish()
    written = expected.read_bytes().split(b"\n")
    stored = (tmp_path / "data" / "terminals" / tid / "output.raw").read_bytes().replace(b"\r\n", b"\n").split(b"\n")
    assert len(written) == FLOOD_LINES + 1
    assert stored[: len(written) - 1] == written[:-1], "every line the program wrote, in order"


def test_an_upgrade_from_another_checkout_adopts_the_terminals(tmp_path: Path) -> None:
    other = tmp_path / "other-checkout"
    shutil.copytree(REPO / "lookout", other / "lookout", ignore=shutil.ignore_patterns("node_modules", "__pycache__"))
    old = Daemon(tmp_path / "data")
    old.source = other
    old.start()
    with old.client() as api:
        tid = _shell(api)
        api.post(f"/v1/terminals/{tid}/act", json={"input": {"text": "Y=from-old\r"}, "until": {"stable_ms": 200}})
        pid = api.get(f"/v1/terminals/{tid}").json()["pid"]
    old.stop()
    holder = _holder_of(pid)
    environ = Path(f"/proc/{holder}/environ").read_bytes().split(b"\0")
    assert f"LOOKOUT_HOLDER_CODE={other}".encode() in environ, "the holder runs the old checkout's code"
    new = Daemon(tmp_path / "data").start()
    with new.client() as api:
        assert api.get(f"/v1/terminals/{tid}").json()["status"] == "running"
        r = api.post(f"/v1/terminals/{tid}/act", json={"input": {"text": "echo $Y\r"}, "until": {"regex": "^from-old"}})
        assert r.json()["ended"] == "regex", r.text
    new.finish()


def _holder_of(pid: int) -> int:
    return int(Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[1])


def _lookout(data: Path, *args: str) -> subprocess.CompletedProcess[str]:
    cmd = [sys.executable, "-m", "lookout", *args, "--data-dir", str(data)]
    return subprocess.run(cmd, cwd=REPO, capture_output=True, text=True, timeout=60, check=False)


def test_kill_all_ends_every_terminal_at_once_and_returns_once_each_session_is_gone(tmp_path: Path) -> None:
    """Six shells, each with a job in the background: `lookout kill --all` ends them in parallel (each with its
    stop ladder) and returns only once nothing of any of their sessions runs; it lists them in their order."""
    d = Daemon(tmp_path / "data").start()
    with d.client() as api:
        tids = [_shell(api) for _ in range(6)]
        for tid in tids:
            api.post(f"/v1/terminals/{tid}/input", json={"text": "sleep 300 &\r"}).raise_for_status()
        pids = [api.get(f"/v1/terminals/{t}").json()["pid"] for t in tids]
        eventually(lambda: all(len(_members(pid)) >= 2 for pid in pids), what="the background jobs to start")
        killed = _lookout(tmp_path / "data", "kill", "--all")
        assert killed.returncode == 0, killed
        assert [line.split(":")[0] for line in killed.stdout.splitlines()] == tids, killed.stdout
        assert all("ended by SIGHUP" in line for line in killed.stdout.splitlines()), killed.stdout
        assert not [pid for pid in pids if _members(pid)], "something of a session ran on after kill returned"
    d.finish()


def test_a_killed_fork_server_leaves_its_holders_running_and_the_next_open_starts_another(tmp_path: Path) -> None:
    """daemon -> fork server -> holder -> program: kill -9 of the fork server re-parents the holder (init, or
    a subreaper) and its terminal goes on; the next open starts a new fork server."""
    d = Daemon(tmp_path / "data").start()
    assert d.proc is not None
    with d.client() as api:
        tid = _shell(api)
        holder = _parent(api.get(f"/v1/terminals/{tid}").json()["pid"])
        server = _parent(holder)
        assert _parent(server) == d.proc.pid, "the fork server is the daemon's child"
        os.kill(server, signal.SIGKILL)
        eventually(lambda: _parent(holder) != server, what="the holder to be re-parented")
        step = api.post(f"/v1/terminals/{tid}/act", json={"input": {"text": "echo on-$((6*7))\r"}, "until": {"regex": "^on-42"}})
        assert step.json()["ended"] == "regex", step.text
        again = _shell(api)
        new_server = _parent(_parent(api.get(f"/v1/terminals/{again}").json()["pid"]))
        assert new_server != server and _parent(new_server) == d.proc.pid
    d.finish()


def test_a_holder_adopts_the_orphans_of_its_programs_session_reaps_them_and_ends_them(tmp_path: Path) -> None:
    """The holder is its program's child subreaper: a job whose parent ended is re-parented to the holder (not
    init), reaped by it when it ends (no zombie), and ended by the stop ladder with the rest of the session."""
    d = Daemon(tmp_path / "data").start()
    with d.client() as api:
        command = ["sh", "-c", "(sleep 300 &); (sleep 1 &); exec sleep 600"]
        tid = api.post("/v1/terminals", json={"command": command}).json()["id"]
        leader = api.get(f"/v1/terminals/{tid}").json()["pid"]
        holder = _parent(leader)
        eventually(lambda: len(_kids(holder)) == 3, what="both orphans to be the holder's")
        eventually(lambda: len(_kids(holder)) == 2, what="the short one to end and be reaped (no zombie)")
        orphan = next(p for p in _kids(holder) if p != leader)
        assert _members(leader) and orphan in _members(leader)
        ended = api.delete(f"/v1/terminals/{tid}")
        assert ended.status_code == 200 and ended.json()["ended_by"] == "SIGHUP", ended.text
        assert not running(orphan) and not _members(leader), "the orphan was ended with its session"
    d.finish()


def _kids(pid: int) -> list[int]:
    """The children of `pid` that have not ended (a zombie counts: it has not been reaped)."""
    task = Path(f"/proc/{pid}/task/{pid}/children")
    return [int(p) for p in task.read_text().split()] if task.exists() else []


def _parent(pid: int) -> int:
    return int(Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[1])


def _members(sid: int) -> list[int]:
    from lookout.terminal.holder.pty import session_members

    return [p for p in session_members(sid) if running(p)]


def test_ls_and_kill_work_without_a_daemon(tmp_path: Path) -> None:
    d = Daemon(tmp_path / "data").start()
    with d.client() as api:
        first, second = _shell(api), _shell(api)
        pids = [api.get(f"/v1/terminals/{t}").json()["pid"] for t in (first, second)]
    d.stop()
    listed = _lookout(tmp_path / "data", "ls")
    assert listed.returncode == 0 and f"{first}: bash [80x24] running pid {pids[0]}" in listed.stdout, listed
    assert f"{second}: bash [80x24] running" in listed.stdout
    killed = _lookout(tmp_path / "data", "kill", first)
    assert killed.returncode == 0 and f"{first}: ended" in killed.stdout, killed
    assert eventually(lambda: not running(pids[0]), what="the first shell to end") and running(pids[1])
    assert _lookout(tmp_path / "data", "kill", "--all").returncode == 0
    eventually(lambda: not running(pids[1]), what="the second shell to end")
    again = Daemon(tmp_path / "data").start()
    with again.client() as api:
        statuses = {t["id"]: t["status"] for t in api.get("/v1/terminals").json()["terminals"]}
        assert statuses == {first: "exited", second: "exited"}, "exits that happened while no daemon ran"
    again.finish()


def test_sockets_that_cannot_be_trusted_are_never_adopted(tmp_path: Path) -> None:
    d = Daemon(tmp_path / "data").start()
    with d.client() as api:
        ids = [_shell(api) for _ in range(3)]
        pids = [api.get(f"/v1/terminals/{t}").json()["pid"] for t in ids]
    d.stop(signal.SIGKILL)
    holders = tmp_path / "data" / "holders"
    for tid in ids:  # the real holders move aside (they are ended at the end by pid)
        os.rename(holders / f"{tid}.sock", holders / f"{tid}.moved")
    linked, foreign, garbage = ids
    os.symlink(holders / f"{linked}.moved", holders / f"{linked}.sock")
    planted = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    planted.bind(str(holders / f"{foreign}.sock"))
    planted.listen(1)
    os.chown(holders / f"{foreign}.sock", 65534, 65534)  # as if planted by another user
    liar = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    liar.bind(str(holders / f"{garbage}.sock"))
    liar.listen(1)
    stop = threading.Event()

    def speak_garbage() -> None:
        liar.settimeout(0.2)
        while not stop.is_set():
            try:
                conn, _ = liar.accept()
            except (TimeoutError, OSError):
                continue
            with conn:
                conn.sendall(b"\x00\xffnot a holder\n")

    thread = threading.Thread(target=speak_garbage, daemon=True)
    thread.start()
    try:
        again = Daemon(tmp_path / "data").start()
        with again.client() as api:
            listed = {t["id"]: t for t in api.get("/v1/terminals").json()["terminals"]}
            reasons = {tid: listed[tid]["lost_reason"] or "" for tid in ids}
            assert all(listed[tid]["status"] == "lost" for tid in ids), listed
            assert "symbolic link" in reasons[linked]
            assert "belongs to user 65534" in reasons[foreign]
            assert "not a JSON message" in reasons[garbage] or "greeting" in reasons[garbage], reasons
            assert api.get("/healthz").status_code == 200 and _shell(api)
        log = again.log.read_text()
        assert all(f"terminal {tid} is not adopted" in log for tid in ids)
        again.finish()
    finally:
        stop.set()
        planted.close()
        liar.close()
        for pid in pids:  # `finish` (`lookout kill --all`) ended them already, without their sockets
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)


def test_lookout_restart_restarts_the_daemon_in_place_and_keeps_the_terminals(tmp_path: Path) -> None:
    d = Daemon(tmp_path / "data").start()
    with d.client() as api:
        tid = _shell(api)
        pid = api.get(f"/v1/terminals/{tid}").json()["pid"]
        api.post(f"/v1/terminals/{tid}/act", json={"input": {"text": "Z=kept\r"}, "until": {"stable_ms": 200}})
    restarted = _lookout(tmp_path / "data", "restart")
    assert restarted.returncode == 0 and "serves" in restarted.stdout, restarted
    assert d.log.read_bytes().count(READY_LINE) == 2, "a new daemon, on the same socket"
    with d.client() as api:
        info = api.get(f"/v1/terminals/{tid}").json()
        assert info["status"] == "running" and info["pid"] == pid
        r = api.post(f"/v1/terminals/{tid}/act", json={"input": {"text": "echo Z=$Z\r"}, "until": {"regex": "^Z=kept"}})
        assert r.json()["ended"] == "regex", r.text
    d.finish()


def test_a_wait_in_flight_when_the_daemon_dies_ends_with_an_error_never_a_match(tmp_path: Path) -> None:
    d = Daemon(tmp_path / "data").start()
    with d.client(timeout=60) as api:
        tid = _shell(api)
        cursor = api.get(f"/v1/terminals/{tid}").json()["raw_size"]
    body = {"until": {"regex": "never-printed"}, "timeout_ms": 50_000}
    waiting = InFlight(d.port, d.token, f"/v1/terminals/{tid}/wait", body)
    eventually(waiting.read_by_daemon, what="the daemon to read the wait")
    d.stop(signal.SIGKILL)
    assert waiting.answer() is None, "the connection ends without an answer"
    again = Daemon(tmp_path / "data").start()
    with again.client() as api:
        api.post(f"/v1/terminals/{tid}/input", json={"text": "echo never-print$((0))ed\r"})
        resumed = _wait(api, tid, {"regex": "^never-print0ed"}, since=cursor)  # from the cursor it had
        assert resumed["matched"], resumed
    again.finish()
