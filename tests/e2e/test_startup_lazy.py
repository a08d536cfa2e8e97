"""The daemon answers without having loaded the tokenizer (issue 20): its load holds the GIL, so loaded at
start, even in a thread once listening, it delayed the first answer, and a daemon that counts no tokens would pay
for it. It loads once a terminal is opened (issue 47: not with the first count, which may be the end of many
terminals at once)."""
from __future__ import annotations

from pathlib import Path

from tests.conftest import Daemon
from tests.support.polling import eventually

TOKENIZER_LIBRARY = "_quicktok"


def _mapped(pid: int, library: str) -> bool:
    """Whether the process has loaded the shared library (its import maps it)."""
    return library in Path(f"/proc/{pid}/maps").read_text()


def test_tokenizer_loads_when_a_terminal_opens_not_at_start(daemon: Daemon) -> None:
    assert daemon.proc is not None
    pid = daemon.proc.pid
    with daemon.client() as api:
        assert api.get("/v1/terminals").status_code == 200
        assert not _mapped(pid, TOKENIZER_LIBRARY)
        r = api.post("/v1/terminals", json={"command": ["sh", "-c", "echo hello; exec sleep 60"]})
        assert r.status_code == 201, r.text
        tid = r.json()["id"]
        # Nothing has counted a token yet (no input, no screen, no end): the open alone loads it.
        eventually(lambda: _mapped(pid, TOKENIZER_LIBRARY), what="the tokenizer to load once a terminal opened")
        wait = {"until": {"regex": "hello"}, "timeout_ms": 20000, "screen": {"max_tokens": 200}, "detail": True}
        done = api.post(f"/v1/terminals/{tid}/act", json=wait)
        assert done.status_code == 200, done.text
        assert done.json()["screen"]["tokens"] > 0
        api.delete(f"/v1/terminals/{tid}")
