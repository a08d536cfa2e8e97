"""Input that reaches a daemon after it let its terminals go to the daemon that replaced it (`lookout restart`)
is passed on to that daemon: written once, in order, and answered, never refused with "send it again"."""

from __future__ import annotations

import base64
import json
import socket
import subprocess
import sys
import time
from pathlib import Path

import httpx

from tests.conftest import REPO, TOKEN, Daemon


def _shell(api: httpx.Client) -> str:
    tid = api.post("/v1/terminals", json={"command": "bash", "cols": 80, "rows": 24}).json()["id"]
    ready = api.post(
        f"/v1/terminals/{tid}/wait", json={"until": {"state_in": ["idle"]}, "since": 0, "timeout_ms": 30_000}
    )
    assert ready.json()["matched"], ready.text
    return tid


def _answer(sock: socket.socket) -> tuple[int, dict[str, object]]:
    """The status and JSON body of the one HTTP answer on `sock` (the old daemon closes the connection after it)."""
    sock.settimeout(120)
    data = b""
    while chunk := sock.recv(65536):
        data += chunk
    head, _, body = data.partition(b"\r\n\r\n")
    if b"transfer-encoding: chunked" in head.lower():
        body = _unchunked(body)
    return int(head.split(b" ", 2)[1]), json.loads(body)


def _unchunked(body: bytes) -> bytes:
    out = b""
    while body:
        size_line, _, body = body.partition(b"\r\n")
        size = int(size_line, 16)
        if not size:
            break
        out, body = out + body[:size], body[size + 2 :]
    return out


def test_an_act_whose_input_reaches_the_old_daemon_after_the_take_over_is_written_once_and_answered(
    tmp_path: Path,
) -> None:
    """The act's headers reach the old daemon before the restart (it begins the request); its body only after
    the new daemon serves, so its input finds the terminal already let go."""
    data = tmp_path / "data"
    daemon = Daemon(data, LOOKOUT_BODY_TIMEOUT_S="600").start()
    with daemon.client(timeout=60) as api:
        tid = _shell(api)
        body = json.dumps({"input": {"text": "echo ONCE-$((6*7))\r"}, "until": {"regex": "ONCE-42"},
                           "timeout_ms": 30_000}).encode()  # fmt: skip
        sock = socket.create_connection(("127.0.0.1", daemon.port))
        sock.sendall(
            f"POST /v1/terminals/{tid}/act HTTP/1.1\r\nHost: 127.0.0.1:{daemon.port}\r\nAuthorization: Bearer {TOKEN}"
            f"\r\nContent-Type: application/json\r\nContent-Length: {len(body)}\r\n\r\n".encode()
        )
        time.sleep(0.5)  # the old daemon reads the headers and begins the request (the restart takes seconds more)
        restarted = subprocess.run([sys.executable, "-m", "lookout", "restart", "--data-dir", str(data)], cwd=REPO,
                                   capture_output=True, text=True, timeout=300, check=False)  # fmt: skip
        assert restarted.returncode == 0 and "serves" in restarted.stdout, restarted
        sock.sendall(body)
        status, answer = _answer(sock)
        sock.close()
        assert status == 200, answer
        assert answer["ended"] == "regex", answer
        second = api.post(f"/v1/terminals/{tid}/act", json={"input": {"text": "echo TWO-$((1+1))\r"},
                                                               "until": {"regex": "TWO-2"}, "timeout_ms": 30_000})  # fmt: skip
        assert second.status_code == 200 and second.json()["ended"] == "regex", second.text
        raw = base64.b64decode(api.get(f"/v1/terminals/{tid}/raw", params={"offset": 0}).json()["data_b64"])
        assert raw.count(b"ONCE-42") == 1, raw[-400:]
        blocks = api.get(f"/v1/terminals/{tid}/blocks").json()["blocks"]
        assert [b["command"] for b in blocks if "ONCE" in (b["command"] or "")] == ["echo ONCE-$((6*7))"], blocks
        assert raw.index(b"ONCE-42") < raw.index(b"echo TWO-"), "written in the order it was sent"
    daemon.finish()
