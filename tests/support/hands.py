"""Hands on one terminal in the tests of issue 44: an HTTP client per hand (each naming its agent), a bash of the
test's own, a line acted on until its block ends, and the gate a long command waits on."""
from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import httpx

from tests.conftest import Daemon
from tests.support.http import ok_json

ORDERS = [("A", "B"), ("B", "A")]
GATE = "until [ -e gate ]; do sleep 0.05; done; rm gate"
"""What a long command waits on: the test opens the gate (`_open`) once the other hand's input is written, so the
input comes while the command runs however loaded the machine is."""

@contextmanager
def hands(daemon: Daemon, *names: str) -> Iterator[dict[str, httpx.Client]]:
    """An HTTP client per hand, each naming its agent; a connection a request (a hand's act runs in a thread
    while another request of the same hand is made)."""
    clients = {
        name: httpx.Client(base_url=daemon.url, timeout=60, limits=httpx.Limits(max_keepalive_connections=0),
                           headers={"Authorization": f"Bearer {daemon.token}", "X-Lookout-Agent": name})
        for name in names
    }  # fmt: skip
    try:
        yield clients
    finally:
        for client in clients.values():
            client.close()


def bash_terminal(api: httpx.Client, home: Path) -> str:
    home.mkdir(exist_ok=True)
    body = {"command": ["bash"], "cwd": str(home), "env": {"HOME": str(home)}, "cols": 100, "rows": 30}
    tid = ok_json(api.post("/v1/terminals", json=body), 201)["id"]
    ready = api.post(f"/v1/terminals/{tid}/wait", json={"until": {"state_in": ["idle"]}, "timeout_ms": 30_000})
    assert ready.json()["matched"], ready.text
    return tid


def act_line(api: httpx.Client, tid: str, line: str, until: dict[str, Any] | None = None) -> dict[str, Any]:
    body = {"input": {"text": line, "keys": ["Enter"]}, "until": until or {"block_end": True}, "timeout_ms": 30_000,
            "detail": True}  # fmt: skip
    return ok_json(api.post(f"/v1/terminals/{tid}/act", json=body))
