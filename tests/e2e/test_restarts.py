"""Restarts nobody notices (lookout.daemon): `lookout restart` is a hot restart on the same listening socket (no
connection refused, a wait in flight answered when its condition holds, the official MCP client's session
intact), a socket handed over as systemd does survives a crash, a clean stop answers the waits in flight at
once, a new daemon that cannot start leaves the old one serving, and one daemon serves a data dir."""

from __future__ import annotations

import asyncio
import base64
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import threading
import time
from functools import partial
from pathlib import Path

import httpx
import pytest

from lookout.daemon.lock import lock_holder
from lookout.terminal import places
from tests.conftest import READY_LINE, REPO, TOKEN, Daemon, free_port
from tests.support.in_flight import InFlight
from tests.support.mcp_client import call, over_http
from tests.support.polling import eventually
from tests.support.supervised import supervise, told

AUTH = {"Authorization": f"Bearer {TOKEN}"}


def _lookout(data: Path, *args: str, source: Path = REPO) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "lookout", *args, "--data-dir", str(data)], cwd=source,
                          capture_output=True, text=True, timeout=300, check=False)  # fmt: skip


def _shell(api: httpx.Client) -> str:
    tid = api.post("/v1/terminals", json={"command": "bash", "cols": 80, "rows": 24}).json()["id"]
    ready = api.post(
        f"/v1/terminals/{tid}/wait", json={"until": {"state_in": ["idle"]}, "since": 0, "timeout_ms": 30_000}
    )
    assert ready.json()["matched"], ready.text
    return tid


class Knocker(threading.Thread):
    """Opens a new connection to the daemon every `every` seconds (GET /healthz) until stopped; counts what
    was refused or failed (and when that request began), and which pids answered."""

    def __init__(self, url: str, every: float) -> None:
        super().__init__(daemon=True)
        self.url, self.every = url, every
        self.done = threading.Event()
        self.failures: list[str] = []
        self.failed_at: list[tuple[float, BaseException | None]] = []
        self.answered: list[tuple[float, int]] = []
        """When each answered request began, and the pid of the daemon that answered it."""

    @property
    def pids(self) -> list[int]:
        return [pid for _, pid in self.answered]

    def run(self) -> None:
        while not self.done.is_set():
            began = time.monotonic()
            try:
                answer = httpx.get(f"{self.url}/healthz", timeout=30)  # a new connection each time
                if answer.status_code != 200:
                    self.failures.append(f"{answer.status_code} {answer.text[:100]}")
                    self.failed_at.append((began, None))
                else:
                    self.answered.append((began, answer.json()["pid"]))
            except httpx.HTTPError as exc:
                self.failures.append(repr(exc))
                self.failed_at.append((began, exc))
            time.sleep(self.every)


def test_lookout_restart_refuses_no_connection_and_a_wait_in_flight_answers_true(tmp_path: Path) -> None:
    daemon = Daemon(tmp_path / "data").start()
    assert daemon.proc is not None
    with daemon.client(timeout=60) as api:
        tid = _shell(api)
        terminal_pid = api.get(f"/v1/terminals/{tid}").json()["pid"]
        waited: dict[str, object] = {}

        def wait() -> None:  # a wait of 30 s whose condition holds 5 s after the restart began
            body = {
                "input": {"text": "sleep 5; echo DONE-$((6*7))\r"},
                "until": {"regex": "DONE-42"},
                "timeout_ms": 30_000,
            }
            with daemon.client(timeout=60) as waiter:
                waited.update(waiter.post(f"/v1/terminals/{tid}/act", json=body).json())

        waiting = threading.Thread(target=wait)
        waiting.start()
        eventually(lambda: api.get(f"/v1/terminals/{tid}").json()["block"], what="the command to start")
        knocker = Knocker(daemon.url, 0.01)
        knocker.start()
        restarted = _lookout(tmp_path / "data", "restart")
        restarted_at = time.monotonic()
        new_pid = lock_holder(tmp_path / "data")
        waiting.join(60)

        def after_restart() -> set[int]:
            """Who answered the connections opened after `lookout restart` returned (one opened before may
            still be answered by the old daemon)."""
            return {pid for began, pid in knocker.answered if began > restarted_at}

        eventually(after_restart, what="a knock begun after the restart to be answered")
        knocker.done.set()
        knocker.join()
        assert restarted.returncode == 0 and f"the new daemon (pid {new_pid}) serves" in restarted.stdout, restarted
        assert new_pid is not None and new_pid != daemon.proc.pid
        assert not knocker.failures, (
            f"{len(knocker.failures)} of {len(knocker.pids)} connections failed: {knocker.failures[:3]}"
        )
        assert after_restart() == {new_pid}, "then only the new one"
        assert waited["ended"] == "regex" and "DONE-42" in waited["screen"]["text"], waited  # type: ignore[index]
        eventually(lambda: daemon.proc is not None and daemon.proc.poll() is not None, timeout=60,
                   what="the old daemon to end once it has answered")  # fmt: skip
        info = api.get(f"/v1/terminals/{tid}").json()
        assert info["pid"] == terminal_pid and info["status"] == "running"
        frames = api.get("/v1/timeline/frames", params={"resource": f"terminal:{tid}"}).json()["frames"]
        assert any(f["kind"] == "observation" and f["category"] == "terminal screen" for f in frames), \
            "the old daemon's answer is in the timeline the new one writes"  # fmt: skip
    daemon.finish()


async def test_the_official_mcp_client_calls_through_three_restarts(tmp_path: Path) -> None:
    daemon = Daemon(tmp_path / "data").start()
    failures: list[str] = []
    calls = 0
    async with over_http(daemon.url, daemon.token) as session:
        tid = (await call(session, "terminal_open", command=["bash"], cols=80, rows=12))["id"]
        for _ in range(3):
            restart = asyncio.create_task(asyncio.to_thread(_lookout, tmp_path / "data", "restart"))
            while not restart.done():
                try:
                    await call(session, "terminal_list")
                    calls += 1
                except Exception as exc:  # noqa: BLE001 (any failure is what the test counts)
                    failures.append(repr(exc))
                await asyncio.sleep(0.1)
            assert (await restart).returncode == 0
        step = await call(session, "terminal_act", terminal_id=tid, input={"text": "echo still-$((1+1))", "keys": ["Enter"]},
                          until={"regex": "still-2"})  # fmt: skip
        assert step["ended"] == "regex", step
    daemon.finish()
    assert calls > 10 and not failures, (calls, failures[:3])


def test_a_socket_passed_as_systemd_does_is_used_and_outlives_a_crash(tmp_path: Path) -> None:
    """The test plays systemd: it binds the socket, starts the daemon with LISTEN_FDS and LISTEN_PID, and
    starts it again after kill -9, while a client connects every 20 ms."""
    listening = socket.create_server(("127.0.0.1", 0), backlog=1024)
    port = listening.getsockname()[1]
    data = tmp_path / "data"
    log = (tmp_path / "daemon.log").open("ab")
    # fd 3 in the daemon, as systemd passes it; LISTEN_PID is the daemon's own pid (the wrapper execs it)
    wrapper = (f"import os, sys; os.dup2({listening.fileno()}, 3); os.environ.update(LISTEN_PID=str(os.getpid()), "
               f"LISTEN_FDS='1'); os.execv(sys.executable, [sys.executable, '-m', 'lookout', 'serve', '--port', '1', "
               f"'--data-dir', {str(data)!r}])")  # fmt: skip

    def start() -> subprocess.Popen[bytes]:
        proc = subprocess.Popen([sys.executable, "-c", wrapper], cwd=REPO, env={**os.environ, "LOOKOUT_TOKEN": TOKEN},
                                pass_fds=[listening.fileno()], stdout=log, stderr=log)  # fmt: skip
        eventually(lambda: lock_holder(data) == proc.pid, timeout=120, what="the daemon to take the data dir")
        return proc

    first = start()
    url = f"http://127.0.0.1:{port}"
    with httpx.Client(base_url=url, headers=AUTH, timeout=60) as api:
        eventually(lambda: api.get("/healthz").status_code == 200, timeout=60, what="the daemon to answer")
        tid = _shell(api)
        knocker = Knocker(url, 0.02)
        knocker.start()
        eventually(lambda: knocker.pids, what="the first daemon to answer a knock")
        first.kill()
        first.wait()
        dead = time.monotonic()
        second = start()
        eventually(lambda: len(set(knocker.pids)) == 2, timeout=60, what="the new daemon to answer")
        knocker.done.set()
        knocker.join()
        # No connection is refused. A kill -9 cuts the one request the killed daemon had already accepted (no
        # server can answer it); every connection opened after the crash is answered by the next daemon.
        cut_by_the_kill = [
            began < dead and isinstance(exc, httpx.RemoteProtocolError) for began, exc in knocker.failed_at
        ]
        assert cut_by_the_kill in ([], [True]), knocker.failures[:3]
        assert api.get(f"/v1/terminals/{tid}").json()["status"] == "running"
        second.send_signal(signal.SIGTERM)
        second.wait(30)
    subprocess.run([sys.executable, "-m", "lookout", "kill", "--all", "--data-dir", str(data)], cwd=REPO, check=False,
                   capture_output=True)  # fmt: skip
    assert b"(socket: systemd)" in (tmp_path / "daemon.log").read_bytes()


def test_a_clean_stop_answers_a_long_wait_at_once_with_the_cursor_to_resume_from(tmp_path: Path) -> None:
    daemon = Daemon(tmp_path / "data").start()
    assert daemon.proc is not None
    with daemon.client(timeout=60) as api:
        tid = _shell(api)
    body = {"until": {"regex": "never-printed"}, "timeout_ms": 300_000}
    waiting = InFlight(daemon.port, daemon.token, f"/v1/terminals/{tid}/wait", body)
    eventually(waiting.read_by_daemon, what="the daemon to read the wait")
    daemon.proc.send_signal(signal.SIGTERM)
    daemon.proc.wait(60)  # far less than the wait's 300 s (bench/restart_load.py times it)
    answered = waiting.answer()
    assert answered is not None and answered[0] == 200, answered
    answer = answered[1]
    assert answer["matched"] is False and answer["reason"] == "stopping", answer
    assert "wait again with since=" in str(answer["note"]) and isinstance(answer["cursor"], int)
    daemon.finish()


def test_a_new_daemon_that_cannot_start_leaves_the_old_one_serving(tmp_path: Path) -> None:
    other = tmp_path / "checkout"
    shutil.copytree(REPO / "lookout", other / "lookout", ignore=shutil.ignore_patterns("node_modules", "__pycache__"))
    daemon = Daemon(tmp_path / "data")
    daemon.source = other
    daemon.start()
    assert daemon.proc is not None
    with daemon.client() as api:
        tid = _shell(api)
        (other / "lookout" / "server.py").write_text("raise SystemExit('a broken upgrade')\n")  # the new code is broken
        restarted = _lookout(tmp_path / "data", "restart", source=other)
        assert restarted.returncode == 1 and "the new daemon did not start" in restarted.stderr, restarted
        assert lock_holder(tmp_path / "data") == daemon.proc.pid
        assert api.get("/healthz").json()["pid"] == daemon.proc.pid
        r = api.post(f"/v1/terminals/{tid}/act", json={"input": {"text": "echo alive\r"}, "until": {"regex": "^alive"}})
        assert r.json()["ended"] == "regex", r.text
    daemon.finish()


def test_a_second_daemon_on_a_data_dir_in_use_exits_at_once_and_touches_nothing(tmp_path: Path) -> None:
    daemon = Daemon(tmp_path / "data").start()
    assert daemon.proc is not None
    staged = tmp_path / "data" / places.STAGING / str(daemon.proc.pid)
    eventually(  # each made to its last file (a place's directory comes before its files)
        lambda: staged.is_dir() and len([p for p in staged.iterdir() if (p / "output.idx").exists()]) == places.POOL,
        what="its own places",
    )
    before = {path: path.stat().st_mtime_ns for path in (tmp_path / "data").rglob("*") if path.is_file()}
    second = subprocess.run([sys.executable, "-m", "lookout", "serve", "--port", str(free_port()), "--data-dir",
                             str(tmp_path / "data")], cwd=REPO, capture_output=True, text=True, timeout=120,
                            env={**os.environ, "LOOKOUT_TOKEN": TOKEN}, check=False)  # fmt: skip
    assert second.returncode == 1 and f"pid {daemon.proc.pid}" in second.stderr, second
    after = {path: path.stat().st_mtime_ns for path in (tmp_path / "data").rglob("*") if path.is_file()}
    assert after == before, "nothing of the data dir was written"
    assert lock_holder(tmp_path / "data") == daemon.proc.pid
    assert READY_LINE not in second.stderr.encode()
    daemon.finish()


def test_lookout_restart_signals_nothing_but_the_daemon_of_its_data_dir(tmp_path: Path) -> None:
    decoy = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(120)", "serve"])
    other = Daemon(tmp_path / "other").start()
    try:
        data = tmp_path / "data"
        data.mkdir(mode=0o700)
        (data / "daemon.pid").write_text(f"{decoy.pid}\n")  # what an earlier version left, naming anybody now
        restarted = _lookout(data, "restart")
        assert restarted.returncode == 1 and "no lookout daemon serves" in restarted.stderr, restarted
        assert decoy.poll() is None, "the decoy was not signalled"
        assert (
            other.proc is not None and other.proc.poll() is None and lock_holder(tmp_path / "other") == other.proc.pid
        )
    finally:
        decoy.kill()
        other.finish()


def test_supervise_starts_the_daemon_again_after_kill_9_and_ends_cleanly(tmp_path: Path) -> None:
    """What the container runs (`lookout supervise`, tini as PID 1): a daemon killed as the OOM killer kills
    is started again on the same socket, its terminals keep their pids and output; SIGTERM ends it all with
    status 0."""
    port, data = free_port(), tmp_path / "data"
    log = (tmp_path / "supervise.log").open("ab")
    supervisor = supervise(data, port, log)
    url = f"http://127.0.0.1:{port}"
    with httpx.Client(base_url=url, headers=AUTH, timeout=60) as api:
        eventually(lambda: lock_holder(data) is not None, timeout=120, what="the daemon to start")
        eventually(lambda: api.get("/healthz").status_code == 200, timeout=60, what="the daemon to answer")
        tid = _shell(api)
        program = api.get(f"/v1/terminals/{tid}").json()["pid"]
        api.post(
            f"/v1/terminals/{tid}/input", json={"text": "for i in $(seq 1 400); do echo line-$i; sleep 0.01; done\r"}
        )
        first = lock_holder(data)
        assert first is not None
        os.kill(first, signal.SIGKILL)
        eventually(lambda: lock_holder(data) not in (None, first), timeout=120, what="the daemon to be started again")
        done = api.post(
            f"/v1/terminals/{tid}/wait", json={"until": {"regex": "line-400"}, "since": 0, "timeout_ms": 60_000}
        )
        assert done.json()["matched"], done.text
        assert api.get(f"/v1/terminals/{tid}").json()["pid"] == program
        raw = api.get(f"/v1/terminals/{tid}/raw", params={"offset": 0, "limit": 1 << 20}).json()
        lines = re.findall(rb"line-(\d+)\r\n", base64.b64decode(raw["data_b64"]))
        assert lines == [str(i).encode() for i in range(1, 401)], "no line lost or doubled across the crash"
    supervisor.send_signal(signal.SIGTERM)
    assert supervisor.wait(30) == 0
    subprocess.run([sys.executable, "-m", "lookout", "kill", "--all", "--data-dir", str(data)], cwd=REPO, check=False,
                   capture_output=True)  # fmt: skip
    assert lock_holder(data) is None


def _another_daemon(data: Path, previous: int) -> int:
    """The pid of the daemon holding the data dir's lock if it is not `previous`, else 0."""
    pid = lock_holder(data)
    return pid if pid is not None and pid != previous else 0


def test_supervise_asked_to_stop_while_it_waits_to_start_a_crashed_daemon_again_ends_at_once(tmp_path: Path) -> None:
    """A daemon that keeps dying soon after its start is started again after a pause (`docker stop` may come
    then): SIGTERM in that pause ends the supervisor with status 0, and no daemon is started after it."""
    port, data = free_port(), tmp_path / "data"
    log_path = tmp_path / "supervise.log"
    log = log_path.open("ab")
    supervisor = supervise(data, port, log)
    try:
        daemon = 0
        for crashes in (1, 2, 3):  # pauses of 0.5, 1 and 2 s before the next start
            daemon = eventually(partial(_another_daemon, data, daemon), timeout=120, what=f"daemon {crashes} to start")
            os.kill(daemon, signal.SIGKILL)
            eventually(partial(told, log_path, "starting it again in", crashes), timeout=60,
                       what=f"the supervisor to see crash {crashes}")  # fmt: skip
        supervisor.send_signal(signal.SIGTERM)  # in the 2 s pause
        assert supervisor.wait(60) == 0, log_path.read_text()
        assert log_path.read_text().count("started the daemon") == 3, log_path.read_text()
    finally:
        if supervisor.poll() is None:
            supervisor.kill()
            supervisor.wait()
        subprocess.run([sys.executable, "-m", "lookout", "kill", "--all", "--data-dir", str(data)], cwd=REPO, check=False,
                       capture_output=True)  # fmt: skip
        if (started := lock_holder(data)) is not None:
            os.kill(started, signal.SIGKILL)
        log.close()


def test_supervise_counts_the_time_of_a_daemon_that_took_over_from_its_takeover(tmp_path: Path) -> None:
    """After `lookout restart` under the supervisor, the new daemon's time runs from when it took over: when it
    dies soon after, that is a crash soon after a start (the pause before the next start grows), not a death
    after the minutes its predecessor had run."""
    port, data = free_port(), tmp_path / "data"
    log_path = tmp_path / "supervise.log"
    log = log_path.open("ab")
    supervisor = supervise(data, port, log)
    try:
        first = eventually(partial(_another_daemon, data, 0), timeout=120, what="the daemon to start")
        time.sleep(3)  # the first daemon runs 3 s longer than its successor will have run when it dies
        restarted_at = time.monotonic()
        assert _lookout(data, "restart").returncode == 0
        successor = eventually(partial(_another_daemon, data, first), timeout=120, what="the new daemon")
        eventually(partial(told, log_path, f"the daemon (pid {successor}) took over from pid {first}", 1), timeout=60,
                   what="the supervisor to follow the new daemon")  # fmt: skip
        os.kill(successor, signal.SIGKILL)
        eventually(partial(told, log_path, f"the daemon (pid {successor}) died", 1), timeout=60, what="the crash")
        since_restart = time.monotonic() - restarted_at
        ran = float(re.search(rf"pid {successor}\) died \(-9\) after ([\d.]+) s", log_path.read_text())[1])
        # its takeover came after the restart began (counted from the first daemon's start, 3 s more); the log
        # rounds to 0.1 s
        assert ran <= since_restart + 0.05, (since_restart, log_path.read_text())
    finally:
        supervisor.send_signal(signal.SIGTERM)
        if supervisor.wait(60) is None:
            supervisor.kill()
        subprocess.run([sys.executable, "-m", "lookout", "kill", "--all", "--data-dir", str(data)], cwd=REPO, check=False,
                       capture_output=True)  # fmt: skip
        log.close()


@pytest.mark.parametrize("how", ["restart", "kill -9"])
def test_the_restart_test_helper_finds_the_daemon_that_replaced_the_one_it_started(tmp_path: Path, how: str) -> None:
    """Daemon.stop stops the daemon `lookout restart` started too (tests leave nothing running)."""
    daemon = Daemon(tmp_path / "data").start()
    if how == "restart":
        assert _lookout(tmp_path / "data", "restart").returncode == 0
    else:
        daemon.stop(signal.SIGKILL)
        daemon.start()
    daemon.stop()
    assert lock_holder(tmp_path / "data") is None
