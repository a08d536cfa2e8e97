"""Issue 46, what another local process can plant: staging directories that name a live terminal, links and
sockets that accept and never answer, silent connections to `daemon.sock`, a link at `daemon.sock`. The
daemon runs as a subprocess; the attacks are real files, sockets and connections."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
from pathlib import Path

from tests.conftest import REPO, Daemon


def _dead_pid() -> int:
    pid = subprocess.Popen(["true"])
    pid.wait()
    return pid.pid


def test_planted_staging_dirs_end_no_live_terminal_and_silent_sockets_do_not_hold_the_start(tmp_path: Path) -> None:
    daemon = Daemon(tmp_path / "data").start()
    silent: list[socket.socket] = []
    try:
        with daemon.client() as api:
            live = api.post("/v1/terminals", json={"command": ["cat"], "shell_integration": False}).json()
        daemon.stop()  # the terminal stays with its holder
        data = daemon.data_dir
        dead = data / "staging" / str(_dead_pid())
        (dead / live["id"]).mkdir(parents=True)  # names the live terminal
        outside = tmp_path / "outside"
        (outside / "t_0000000001").mkdir(parents=True)
        os.symlink(outside, data / "staging" / str(_dead_pid() + 1))  # a link in the place of a staging dir
        for n in range(6):  # six sockets that accept (backlog) and never answer
            tid = f"t_00000000{n:02d}"
            (dead / tid).mkdir()
            sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            sock.bind(str(data / "holders" / f"{tid}.sock"))
            sock.listen(8)
            silent.append(sock)
        started = time.monotonic()
        daemon.start()
        print(f"ready {time.monotonic() - started:.1f} s after start, with six silent sockets planted")
        with daemon.client() as api:
            again = api.get(f"/v1/terminals/{live['id']}").json()
        assert again["status"] == "running" and again["pid"] == live["pid"]
        assert Path(f"/proc/{live['pid']}").exists(), "the live terminal's program still runs"
        assert (outside / "t_0000000001").is_dir(), "the link was not followed"
        log = daemon.log.read_text()
        assert f"ended terminal {live['id']}" not in log and f"left terminal {live['id']} running" in log
    finally:
        for sock in silent:
            sock.close()
        daemon.finish()


def test_silent_daemon_sock_connections_are_closed(daemon: Daemon) -> None:
    path = str(daemon.data_dir / "daemon.sock")
    conns = []
    for _ in range(100):
        conn = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        conn.connect(path)
        conn.settimeout(60)
        conns.append(conn)
    try:
        assert all(conn.recv(1) == b"" for conn in conns), "each silent connection is closed by the daemon"
    finally:
        for conn in conns:
            conn.close()
    with daemon.client() as api:
        assert api.get("/healthz").status_code == 200


def test_restart_follows_no_link_planted_at_daemon_sock(daemon: Daemon, tmp_path: Path) -> None:
    other = tmp_path / "other"
    other.mkdir(mode=0o700)
    os.symlink(daemon.data_dir / "daemon.sock", other / "daemon.sock")
    env = {k: v for k, v in os.environ.items() if not k.startswith("LOOKOUT_")}
    done = subprocess.run([sys.executable, "-m", "lookout", "restart", "--data-dir", str(other)], cwd=REPO, env=env,
                          capture_output=True, text=True, timeout=120, check=False)  # fmt: skip
    assert done.returncode != 0 and "symbolic link" in done.stderr, done.stderr
    assert daemon.proc is not None and daemon.proc.poll() is None
    with daemon.client() as api:
        assert api.get("/healthz").status_code == 200
    assert "restart" not in daemon.log.read_text().lower().split("ready at", 1)[1], "the daemon was not restarted"
