"""Issue 46, start-up: the socket served decides whether a token is needed, whichever way it came; every bad
setting is one line and status 2. `lookout serve` runs as a subprocess, as the image and systemd run it."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import REPO, Daemon

# Puts the socket at descriptor 3 and LISTEN_PID, as systemd does for the process it starts, then becomes
# `lookout serve`.
AS_SYSTEMD = (
    "import os, sys; os.dup2(int(sys.argv[1]), 3); os.environ['LISTEN_PID'] = str(os.getpid()); "
    "os.execv(sys.executable, sys.argv[2:])"
)


def _serve(
    data: Path, env: dict[str, str], pass_fds: tuple[int, ...] = (), systemd: bool = False
) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("LOOKOUT_")} | env
    command = [sys.executable, "-m", "lookout", "serve", "--data-dir", str(data)]
    if systemd:
        command = [sys.executable, "-c", AS_SYSTEMD, str(pass_fds[0]), sys.executable, *command[1:]]
    return subprocess.run(command, cwd=REPO, env=env, pass_fds=pass_fds, capture_output=True, text=True, timeout=60,
                          check=False)  # fmt: skip


@pytest.mark.parametrize("way", ["LOOKOUT_LISTEN_FD", "systemd"])
def test_a_wildcard_socket_handed_over_without_a_token_is_refused(tmp_path: Path, way: str) -> None:
    sock = socket.socket()
    sock.bind(("0.0.0.0", 0))
    sock.listen()
    with sock:
        env = {"LISTEN_FDS": "1"} if way == "systemd" else {"LOOKOUT_LISTEN_FD": str(sock.fileno())}
        done = _serve(tmp_path / "data", env, (sock.fileno(),), systemd=way == "systemd")
    assert done.returncode == 2, done.stderr
    assert "refusing to serve" in done.stderr and "0.0.0.0" in done.stderr and "LOOKOUT_TOKEN" in done.stderr
    assert ("the systemd socket" in done.stderr) == (way == "systemd")
    assert "Traceback" not in done.stderr and not (tmp_path / "data" / "token").exists(), "no token was generated"


def test_a_loopback_socket_handed_over_is_served_without_a_configured_token(tmp_path: Path) -> None:
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    sock.listen()
    with sock:
        proc = subprocess.Popen([sys.executable, "-m", "lookout", "serve", "--data-dir", str(tmp_path / "data")], cwd=REPO,
                                env={k: v for k, v in os.environ.items() if not k.startswith("LOOKOUT_")}
                                | {"LOOKOUT_LISTEN_FD": str(sock.fileno())},
                                pass_fds=(sock.fileno(),), stderr=subprocess.PIPE, text=True)  # fmt: skip
        try:
            assert proc.stderr is not None
            for line in proc.stderr:
                if "ready at" in line or proc.poll() is not None:
                    break
            assert "ready at" in line, line
        finally:
            proc.terminate()
            proc.wait(30)


@pytest.mark.parametrize(
    ("name", "value", "said"),
    [
        ("LOOKOUT_LISTEN_FD", "99999999999999999999", "not a descriptor number"),
        ("LOOKOUT_LISTEN_FD", "-1", "not a descriptor number"),
        ("LOOKOUT_HOST", "not-an-address", "cannot listen on not-an-address"),
        ("LOOKOUT_PORT", "99999", "port"),
        ("LOOKOUT_MAX_STREAMS", "0", "max_streams"),
        ("LOOKOUT_MAX_SESSIONS", "many", "max_sessions"),
    ],
)
def test_every_bad_setting_is_one_line_and_status_2(tmp_path: Path, name: str, value: str, said: str) -> None:
    done = _serve(tmp_path / "data", {"LOOKOUT_TOKEN": "a-token-of-twenty-chars", name: value})
    assert done.returncode == 2, done.stderr
    lines = [line for line in done.stderr.splitlines() if line.startswith("lookout")]
    assert len(lines) == 1 and said in lines[0] and "Traceback" not in done.stderr, done.stderr


def test_a_clean_stop_logs_no_failure_of_the_holders_fork_server(tmp_path: Path) -> None:
    daemon = Daemon(tmp_path / "data").start()
    try:
        with daemon.client() as api:  # the fork server starts, with its spares
            assert api.post("/v1/terminals", json={"command": ["cat"], "shell_integration": False}).status_code == 201
        daemon.stop()
        log = daemon.log.read_text()
        assert "a spare failed" not in log and "Traceback" not in log, log[-2000:]
    finally:
        daemon.finish()
