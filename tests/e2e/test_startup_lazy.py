"""The daemon answers without having loaded the tokenizer (issue 20): its load holds the GIL, so loaded at
start, even in a thread once listening, it delayed the first answer, and a daemon that counts no tokens would pay
for it. It loads once a terminal is opened (issue 47: not with the first count, which may be the end of many
terminals at once). A hot restart's new daemon loads it before it accepts only when the daemon before had."""

from __future__ import annotations

import subprocess
import sys

from tests.conftest import REPO, Daemon
from tests.support.polling import eventually
from tests.support.tokenizer import tokenizer_mapped


def test_tokenizer_loads_when_a_terminal_opens_not_at_start(daemon: Daemon) -> None:
    assert daemon.proc is not None
    pid = daemon.proc.pid
    with daemon.client() as api:
        assert api.get("/v1/terminals").status_code == 200
        assert not tokenizer_mapped(pid)
        r = api.post("/v1/terminals", json={"command": ["sh", "-c", "echo hello; exec sleep 60"]})
        assert r.status_code == 201, r.text
        tid = r.json()["id"]
        # Nothing has counted a token yet (no input, no screen, no end): the open alone loads it.
        eventually(lambda: tokenizer_mapped(pid), what="the tokenizer to load once a terminal opened")
        wait = {"until": {"regex": "hello"}, "timeout_ms": 20000, "screen": {"max_tokens": 200}, "detail": True}
        done = api.post(f"/v1/terminals/{tid}/act", json=wait)
        assert done.status_code == 200, done.text
        assert done.json()["screen"]["tokens"] > 0
        api.delete(f"/v1/terminals/{tid}")


def test_a_hot_restart_of_a_daemon_that_counted_nothing_loads_no_tokenizer(daemon: Daemon) -> None:
    assert daemon.proc is not None
    old_pid = daemon.proc.pid
    restarted = subprocess.run([sys.executable, "-m", "lookout", "restart", "--data-dir", str(daemon.data_dir)],
                               cwd=REPO, capture_output=True, text=True, timeout=300)  # fmt: skip
    assert restarted.returncode == 0, restarted
    with daemon.client() as api:
        pid = api.get("/healthz").json()["pid"]
        assert pid != old_pid
        assert api.get("/v1/terminals").status_code == 200
        assert not tokenizer_mapped(pid)
