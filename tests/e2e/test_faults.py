"""Faults the daemon survives: kill -9 in the middle of a flood, the browser killed, the adb server
restarted, stubborn children, many sessions created and deleted (no zombies, no descriptors left behind).

`LOOKOUT_SOAK_SESSIONS` sets how many sessions the churn test makes (200 by default; `make soak` uses 1,000).
"""
from __future__ import annotations

import os
import signal
import subprocess
from collections.abc import Callable
from pathlib import Path
from typing import Any

import httpx

from tests.conftest import Daemon
from tests.support.polling import eventually

LINE = "0123456789abcdef"
PATTERN = f"{LINE}\r\n".encode()  # as the terminal writes each line (ONLCR)


def children(pid: int) -> list[int]:
    """Every live descendant of `pid`."""
    parents: dict[int, int] = {}
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                stat = Path(f"/proc/{entry}/stat").read_text()
            except OSError:
                continue
            parents[int(entry)] = int(stat.rsplit(")", 1)[1].split()[1])
    found, frontier = [], [pid]
    while frontier:
        parent = frontier.pop()
        kids = [p for p, pp in parents.items() if pp == parent]
        found.extend(kids)
        frontier.extend(kids)
    return found


def state(pid: int) -> str:
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return "gone"


def cmdline(pid: int) -> bytes:
    try:
        return Path(f"/proc/{pid}/cmdline").read_bytes()
    except OSError:
        return b""


def test_kill_9_in_the_middle_of_a_flood_loses_nothing(tmp_path: Path) -> None:
    daemon = Daemon(tmp_path / "data").start()
    with daemon.client() as api:
        flood = f"yes {LINE} | head -c 100000000; sleep 60"
        tid = api.post("/v1/terminals", json={"command": ["sh", "-c", flood], "cols": 80, "rows": 24}).json()["id"]
        pid = api.get(f"/v1/terminals/{tid}").json()["pid"]
        reported = eventually(lambda: (size := api.get(f"/v1/terminals/{tid}").json()["raw_size"]) > 20_000_000 and size,
                              what="20 MB of output")  # fmt: skip
    daemon.stop(signal.SIGKILL)
    raw = tmp_path / "data" / "terminals" / tid / "output.raw"
    on_disk = raw.stat().st_size
    assert on_disk >= reported, "every byte the API had reported is in output.raw"
    data = raw.read_bytes()
    whole = len(data) // len(PATTERN) * len(PATTERN)
    assert data[:whole] == PATTERN * (whole // len(PATTERN)), "the journal is the exact stream, in order"
    assert state(pid) != "gone", "the flood goes on under its holder"

    frames = tmp_path / "data" / "timeline" / "frames.jsonl"
    with frames.open("ab") as f:
        f.write(b'{"seq": 999999, "torn')  # as a crash in the middle of an append leaves it
    again = Daemon(tmp_path / "data").start()
    try:
        with again.client() as api:
            info = api.get(f"/v1/terminals/{tid}").json()
            assert info["status"] == "running" and info["pid"] == pid and info["raw_size"] >= on_disk, info
            screen = api.get(f"/v1/terminals/{tid}/screen").json()
            rows = [row for row in screen["text"] if row]
            assert rows and all(LINE.startswith(row) for row in rows), rows
            assert api.get("/v1/timeline/frames").status_code == 200
            assert api.get("/v1/timeline/context", params={"budget": 500}).json()["metadata"]["total_tokens"] <= 500
    finally:
        again.stop()


def test_a_child_that_ignores_hangup_and_term_is_gone_after_delete(api: httpx.Client) -> None:
    stubborn = "trap '' HUP TERM; echo ready; while :; do sleep 1; done"
    tid = api.post("/v1/terminals", json={"command": ["sh", "-c", stubborn]}).json()["id"]
    api.post(f"/v1/terminals/{tid}/wait", json={"until": {"regex": "ready"}, "timeout_ms": 10000, "since": 0})
    pid = api.get(f"/v1/terminals/{tid}").json()["pid"]
    assert api.delete(f"/v1/terminals/{tid}").status_code == 200
    assert state(pid) == "gone"
    assert api.get(f"/v1/terminals/{tid}").json()["status"] == "exited"


def test_many_sessions_leave_no_zombies_and_no_descriptors(api: httpx.Client, daemon: Daemon) -> None:
    assert daemon.proc is not None
    pid = daemon.proc.pid
    count = int(os.environ.get("LOOKOUT_SOAK_SESSIONS", "200"))

    def churn(n: int) -> None:
        for i in range(n):
            command = ["cat"] if i % 2 else ["sh", "-c", "exit 0"]
            tid = api.post("/v1/terminals", json={"command": command, "cols": 40, "rows": 10}).json()["id"]
            assert api.delete(f"/v1/terminals/{tid}", params={"purge": "true"}).status_code == 200

    churn(10)  # warm up: lazily opened files, thread pools
    descriptors = len(os.listdir(f"/proc/{pid}/fd"))
    churn(count)
    assert api.get("/v1/terminals").json()["terminals"] == []
    left = [p for p in children(pid) if b"chrom" not in cmdline(p) and b"lookout.terminal.holder" not in cmdline(p)]
    # (the holders' fork server stays: it is the daemon's, not a session's)
    assert [p for p in left if state(p) == "Z"] == [], "no zombies"
    assert left == [], f"no process left behind: {[cmdline(p) for p in left]}"
    assert len(os.listdir(f"/proc/{pid}/fd")) <= descriptors + 3, "descriptors do not grow with sessions"


def test_a_killed_browser_is_started_again_and_old_pages_say_they_are_gone(api: httpx.Client, daemon: Daemon) -> None:
    assert daemon.proc is not None
    page = api.post("/v1/pages", json={"url": "data:text/html,<title>One</title><p>first</p>"}).json()["id"]
    assert api.post(f"/v1/pages/{page}/snapshot", json={}).status_code == 200
    browsers = [p for p in children(daemon.proc.pid) if b"chrom" in cmdline(p)]
    assert browsers
    for pid in browsers:
        os.kill(pid, signal.SIGKILL)
    gone = eventually(lambda: (r := api.post(f"/v1/pages/{page}/snapshot", json={})).status_code == 409 and r,
                      what="the old page to report the crash")  # fmt: skip
    assert "closed" in gone.json()["error"]["message"]
    fresh = api.post("/v1/pages", json={"url": "data:text/html,<title>Two</title><p>second</p>"})
    assert fresh.status_code == 201, fresh.text
    snapshot = api.post(f"/v1/pages/{fresh.json()['id']}/snapshot", json={}).json()
    assert "second" in snapshot["text"]
    listed = {p["id"]: p for p in api.get("/v1/pages").json()["pages"]}
    assert listed[page]["closed"] is True and listed[fresh.json()["id"]]["closed"] is False


def test_devices_come_back_after_the_adb_server_restarts(
    adb_server: Any, adb_api: httpx.Client, make_device: Callable[..., Any]
) -> None:
    fake, serial = make_device()
    assert adb_api.post(f"/v1/devices/{serial}/screenshot", json={}).status_code == 200
    adb_server.stop()
    down = adb_api.get("/v1/devices")
    assert down.status_code == 503 and "no adb server" in down.json()["error"]["message"]
    assert adb_api.post(f"/v1/devices/{serial}/tap", json={"x": 10, "y": 10}).status_code == 503
    adb_server.start()
    assert adb_server.connect(fake) == serial
    listed = eventually(lambda: (r := adb_api.get("/v1/devices")).status_code == 200 and r.json()["devices"],
                        what="the device to be listed again")  # fmt: skip
    assert [d["serial"] for d in listed] == [serial]
    assert adb_api.post(f"/v1/devices/{serial}/screenshot", json={}).status_code == 200
    assert adb_api.post(f"/v1/devices/{serial}/tap", json={"x": 10, "y": 10}).status_code == 200


def test_a_full_disk_degrades_the_session_says_so_and_the_daemon_keeps_serving(tmp_path: Path) -> None:
    """The data dir on a 1 MB tmpfs (mounted here, as root); where mounting is not allowed, the same limit
    comes from RLIMIT_FSIZE (writes past 1 MB fail with EFBIG instead of ENOSPC)."""
    disk = tmp_path / "disk"
    disk.mkdir()
    mount = ["mount", "-t", "tmpfs", "-o", "size=1m", "tmpfs", str(disk)]
    mounted = subprocess.run(mount, capture_output=True, check=False).returncode == 0
    daemon = Daemon(disk / "data")
    if not mounted:
        daemon.start_command = ["prlimit", f"--fsize={1 << 20}", "--"]
    try:
        daemon.start()
        with daemon.client() as api:
            flood = "seq 1 400000; echo end-of-flood; exec cat"
            tid = api.post("/v1/terminals", json={"command": ["sh", "-c", flood], "cols": 80, "rows": 24}).json()["id"]
            # The journal is the only way output reaches the daemon (it must survive the daemon): what the disk
            # refused is missing from the screen too, and the terminal says so and from where (a write of the
            # daemon's own, a snapshot, may fail first and be said first).
            info = eventually(lambda: "neither stored nor shown" in ((t := api.get(f"/v1/terminals/{tid}").json())["degraded"] or "") and t,
                              what="degraded by the journal's failure")  # fmt: skip
            assert "failed" in info["degraded"]
            assert info["status"] == "running"
            if mounted:
                refused = api.post("/v1/terminals", json={"command": ["cat"]})
                assert refused.status_code == 507 and "disk" in refused.json()["error"]["message"]
                assert [t["id"] for t in api.get("/v1/terminals").json()["terminals"]] == [tid]
            assert httpx.get(f"{daemon.url}/healthz").status_code == 200
        assert daemon.stop() in (0, -signal.SIGTERM)
        assert "survived SIGKILL" not in daemon.log.read_text()
    finally:
        if daemon.proc is not None:
            daemon.finish()  # before the disk goes: its holders' sockets are on it
        if mounted:
            subprocess.run(["umount", "-l", str(disk)], check=False)
