"""`lookout supervise --standby` keeps a second daemon ready (lookout.daemon.supervisor): when the daemon is killed
the way the OOM killer kills, the standby takes over (its pid answers, the terminals keep their programs and
every line of their output) and another standby is started; a daemon that dies soon after taking over, as the
one before it did, is started again after a pause instead (a crash loop); after `lookout restart` the standby,
which runs the code from before, is replaced; the supervisor's end ends the standby too."""

from __future__ import annotations

import base64
import os
import re
import signal
import subprocess
import sys
from functools import partial
from pathlib import Path

import httpx

from lookout.daemon.lock import lock_holder
from lookout.daemon.supervisor import STABLE_S
from tests.conftest import REPO, TOKEN, free_port
from tests.support.polling import eventually
from tests.support.supervised import supervise, told

AUTH = {"Authorization": f"Bearer {TOKEN}"}
READY = "standby: this daemon (pid {}) is ready"


def _standbys(log: Path) -> list[int]:
    """The pids of the standbys the supervisor started, in order."""
    return [int(pid) for pid in re.findall(r"started a standby \(pid (\d+)\)", log.read_text())]


def _ready_standby(log: Path, number: int) -> int:
    """The pid of the `number`th standby (1-based), once it says it is ready."""
    pid = eventually(lambda: (_standbys(log)[number - 1 :] or [0])[0], timeout=120, what=f"standby {number}")
    eventually(partial(told, log, READY.format(pid), 1), timeout=120, what=f"standby {pid} to be ready")
    return pid


def _deaths(log: Path) -> list[tuple[str, str]]:
    """(seconds it had run, what followed) of each daemon death the supervisor told, in order."""
    return re.findall(r"died \(-9\) after ([\d.]+) s; ([^\n]*)", log.read_text())


def _more_deaths(log: Path, than: int) -> bool:
    return len(_deaths(log)) > than


def _served_by_another(api: httpx.Client, killed: int) -> bool:
    return _serving(api) not in (0, killed)


def _serving(api: httpx.Client) -> int:
    """The pid of the daemon that answers `GET /healthz`; 0 when a connection to a killed one was reset."""
    try:
        return int(api.get("/healthz").json()["pid"])
    except httpx.TransportError:
        return 0


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] != "Z"


def test_the_standby_takes_over_from_a_killed_daemon_and_is_replaced(tmp_path: Path) -> None:
    port, data, log_path = free_port(), tmp_path / "data", tmp_path / "supervise.log"
    log = log_path.open("ab")
    supervisor = supervise(data, port, log, "--standby")
    try:
        with httpx.Client(base_url=f"http://127.0.0.1:{port}", headers=AUTH, timeout=60) as api:
            first = eventually(lambda: lock_holder(data), timeout=120, what="the daemon to start")
            eventually(lambda: api.get("/healthz").status_code == 200, timeout=60, what="the daemon to answer")
            standby = _ready_standby(log_path, 1)
            assert lock_holder(data) == first, "the standby holds nothing while it waits"
            tid = api.post("/v1/terminals", json={"command": "bash", "cols": 80, "rows": 24}).json()["id"]
            program = api.get(f"/v1/terminals/{tid}").json()["pid"]
            api.post(
                f"/v1/terminals/{tid}/input",
                json={"text": "for i in $(seq 1 300); do echo line-$i; sleep 0.01; done\r"},
            )

            assert first is not None
            os.kill(first, signal.SIGKILL)
            eventually(lambda: _serving(api) == standby, timeout=60, what="the standby to serve")
            assert lock_holder(data) == standby
            done = api.post(f"/v1/terminals/{tid}/wait", json={"until": {"regex": "line-300"}, "since": 0,
                            "timeout_ms": 60_000})  # fmt: skip
            assert done.json()["matched"], done.text
            assert api.get(f"/v1/terminals/{tid}").json()["pid"] == program
            raw = api.get(f"/v1/terminals/{tid}/raw", params={"offset": 0, "limit": 1 << 20}).json()
            lines = re.findall(rb"line-(\d+)\r\n", base64.b64decode(raw["data_b64"]))
            assert lines == [str(i).encode() for i in range(1, 301)], "no line lost or doubled across the crash"
            assert f"the standby (pid {standby}) takes over" in log_path.read_text()

            second = _ready_standby(log_path, 2)  # another is kept ready
            restarted = subprocess.run([sys.executable, "-m", "lookout", "restart", "--data-dir", str(data)], cwd=REPO,
                                       capture_output=True, text=True, timeout=300, check=False)  # fmt: skip
            assert restarted.returncode == 0, restarted
            eventually(lambda: not _alive(second), timeout=60, what="the standby with the old code to be ended")
            third = _ready_standby(log_path, 3)

            # Daemons that die soon after they took over: the first may still get a standby (when the one before
            # it had run STABLE_S), but one that dies soon after another did gets none: a crash loop, started
            # again after a pause.
            for _ in range(2):
                deaths, killed = len(_deaths(log_path)), _serving(api)
                os.kill(killed, signal.SIGKILL)
                eventually(partial(_more_deaths, log_path, deaths), timeout=60, what="the supervisor to see it")
                if "starting it again in" in _deaths(log_path)[-1][1]:
                    break
                eventually(partial(_served_by_another, api, killed), timeout=120, what="the standby to serve")
            (before, _), (ran, then) = _deaths(log_path)[-2:]
            assert "starting it again in" in then and float(ran) < STABLE_S and float(before) < STABLE_S, then
        supervisor.send_signal(signal.SIGTERM)
        assert supervisor.wait(60) == 0, log_path.read_text()
        assert not _alive(third), "the standby ended with the supervisor"
    finally:
        if supervisor.poll() is None:
            supervisor.kill()
            supervisor.wait()
        subprocess.run([sys.executable, "-m", "lookout", "kill", "--all", "--data-dir", str(data)], cwd=REPO,
                       check=False, capture_output=True)  # fmt: skip
        for pid in _standbys(log_path):
            if _alive(pid):
                os.kill(pid, signal.SIGKILL)
        log.close()
