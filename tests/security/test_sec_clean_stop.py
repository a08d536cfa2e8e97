"""Issue 46: a clean stop of the container is told apart from a crash in what terminals say afterwards.
`lookout supervise` runs as the image runs it and is stopped as `podman stop` stops it (SIGTERM, which it
passes to the daemon); then every process left is killed, the holders too, as a container's end kills them.
The next daemon's terminals say they were ended by the clean stop; after a crash (kill -9 of the daemon,
then of the holders) they still ask whether they were killed."""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import httpx

from tests.conftest import REPO, TOKEN, Daemon, free_port
from tests.support.polling import eventually
from tests.support.processes import running

MARKER = "clean-stop.json"


def _parent(pid: int) -> int:
    return int(Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[1])


def _shell(api: httpx.Client) -> tuple[str, int]:
    """A new bash terminal, once its prompt is up: (its id, its program's pid)."""
    tid = api.post("/v1/terminals", json={"command": "bash", "cols": 80, "rows": 24}).json()["id"]
    r = api.post(f"/v1/terminals/{tid}/wait", json={"until": {"state_in": ["idle"]}, "since": 0, "timeout_ms": 30_000})
    assert r.status_code == 200 and r.json()["matched"], r.text
    return tid, api.get(f"/v1/terminals/{tid}").json()["pid"]


def _end_as_a_container_does(pid: int) -> None:
    """SIGKILL to the holder of `pid`, then to `pid`: what a container's end does to the processes left."""
    holder = _parent(pid)
    for victim in (holder, pid):
        with contextlib.suppress(ProcessLookupError):
            os.kill(victim, signal.SIGKILL)
    eventually(lambda: not running(pid) and not running(holder), what="the holder and its program to end")


def _healthy(api: httpx.Client) -> bool:
    try:
        return api.get("/healthz").status_code == 200
    except httpx.TransportError:  # the supervisor has not bound its socket yet
        return False


def _reasons(api: httpx.Client) -> dict[str, tuple[str, str]]:
    return {t["id"]: (t["status"], t["lost_reason"] or "") for t in api.get("/v1/terminals").json()["terminals"]}


def test_terminals_a_clean_stop_ended_say_so_and_those_a_crash_ended_do_not(tmp_path: Path) -> None:
    data, port = tmp_path / "data", free_port()
    env = {k: v for k, v in os.environ.items() if not k.startswith("LOOKOUT_")} | {"LOOKOUT_TOKEN": TOKEN}
    supervisor = subprocess.Popen([sys.executable, "-m", "lookout", "supervise", "--port", str(port), "--data-dir",
                                   str(data)], cwd=REPO, env=env, stderr=subprocess.PIPE, text=True)  # fmt: skip
    try:
        with httpx.Client(base_url=f"http://127.0.0.1:{port}", headers={"Authorization": f"Bearer {TOKEN}"},
                          timeout=30) as api:  # fmt: skip
            eventually(lambda: _healthy(api), what="the supervised daemon to answer", timeout=60)
            stopped, stopped_pid = _shell(api)
        supervisor.send_signal(signal.SIGTERM)  # `podman stop`
        _, said = supervisor.communicate(timeout=30)
    finally:
        if supervisor.poll() is None:
            supervisor.kill()
            supervisor.wait()
    assert supervisor.returncode == 0, said
    assert (data / MARKER).is_file(), "the clean stop is recorded"
    assert running(stopped_pid), "the clean stop leaves the terminal to its holder"
    _end_as_a_container_does(stopped_pid)
    listed = subprocess.run([sys.executable, "-m", "lookout", "ls", "--data-dir", str(data)], cwd=REPO, env=env,
                            capture_output=True, text=True, timeout=60, check=False)  # fmt: skip
    assert "clean stop" in listed.stdout and "was it killed" not in listed.stdout, listed.stdout

    again = Daemon(data).start()
    with again.client() as api:
        status, reason = _reasons(api)[stopped]
        assert status == "lost" and "clean stop" in reason and "was it killed" not in reason, reason
        assert not (data / MARKER).exists(), "the next start reads the record and removes it"
        crashed, crashed_pid = _shell(api)
    assert again.stop(signal.SIGKILL) == -signal.SIGKILL  # a crash: nothing is recorded
    assert not (data / MARKER).exists()
    _end_as_a_container_does(crashed_pid)

    third = Daemon(data).start()
    with third.client() as api:
        reasons = _reasons(api)
        assert reasons[crashed][0] == "lost" and "was it killed?" in reasons[crashed][1], reasons
        assert "clean stop" not in reasons[crashed][1]
        assert "clean stop" in reasons[stopped][1], "what the first said is kept"
    third.finish()


def test_a_planted_record_of_a_clean_stop_is_ignored_with_a_warning_and_removed(tmp_path: Path) -> None:
    data = tmp_path / "data"
    data.mkdir(mode=0o700)
    (data / MARKER).write_text('{"at": "yesterday", "terminals": "all"}')
    d = Daemon(data).start()
    with d.client() as api:
        assert api.get("/healthz").status_code == 200
    deadline = time.monotonic() + 10
    while "is not a clean stop's record" not in d.log.read_text() and time.monotonic() < deadline:
        time.sleep(0.05)
    assert "is not a clean stop's record" in d.log.read_text()
    assert not (data / MARKER).exists()
    d.finish()
