"""Network attacks on the daemon as a subprocess: DNS rebinding (Host, Origin), weak and guessed tokens, the
token in the log, hostile /ui/ names, ambiguous credentials, and requests that never finish."""
from __future__ import annotations

import base64
import os
import re
import socket
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
import websockets
from playwright.sync_api import expect, sync_playwright

from lookout.browser.browser import FLAGS, find_executable
from tests.conftest import REPO, Daemon

TOKEN = "s3cret-token-that-must-not-leak"


@pytest.fixture
def secure(tmp_path: Path) -> Iterator[Daemon]:
    daemon = Daemon(tmp_path / "data", token=TOKEN, LOOKOUT_ALLOWED_HOSTS="lookout.test, 10.1.2.3",
                    LOOKOUT_HEADER_TIMEOUT_S="1", LOOKOUT_BODY_TIMEOUT_S="1").start()  # fmt: skip
    yield daemon
    daemon.stop()


def raw_request(port: int, head: str, timeout: float = 30) -> bytes:
    """Send `head` (CRLF line ends added) as is and return everything the daemon answers until it closes."""
    with socket.create_connection(("127.0.0.1", port), timeout=timeout) as s:
        s.sendall(head.replace("\n", "\r\n").encode("latin-1"))
        answer = b""
        while b"\r\n\r\n" not in answer:
            chunk = s.recv(65536)
            if not chunk:
                break
            answer += chunk
        return answer


def read_until_closed(s: socket.socket) -> bytes:
    answer = b""
    while chunk := s.recv(4096):
        answer += chunk
    return answer


def upgrade(daemon: Daemon, path: str, host: str, origin: str | None = None, query: str = "",
            extra: str = "") -> int:  # fmt: skip
    """The status of a raw WebSocket upgrade with exactly these Host and Origin headers."""
    origin_line = f"Origin: {origin}\n" if origin else ""
    answer = raw_request(daemon.port, f"GET {path}{query} HTTP/1.1\nHost: {host}\n{origin_line}Upgrade: websocket\n"
                         "Connection: Upgrade\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\n"
                         f"Sec-WebSocket-Version: 13\n{extra}\n")  # fmt: skip
    return int(answer.split(b" ", 2)[1])


def test_a_foreign_host_is_refused_on_http_and_websocket(secure: Daemon) -> None:
    auth = {"Authorization": f"Bearer {TOKEN}"}
    for host in (f"evil.example:{secure.port}", "evil.example", f"127.0.0.1.evil.example:{secure.port}",
                 f"192.168.1.5:{secure.port}", "localhost.evil.example", ""):  # fmt: skip
        for path in ("/v1/terminals", "/healthz", "/"):
            answer = httpx.get(f"{secure.url}{path}", headers={**auth, "Host": host})
            assert answer.status_code == 403, (host, path, answer.text)
            assert answer.json()["error"]["code"] == "forbidden_host"
        evil_origin = f"http://{host}"
        assert upgrade(secure, "/v1/events", host, evil_origin, f"?token={TOKEN}") == 403, host
    for host in (f"127.0.0.1:{secure.port}", f"localhost:{secure.port}", "LOCALHOST", f"[::1]:{secure.port}",
                 "127.0.0.2", f"lookout.test:{secure.port}", "10.1.2.3"):  # fmt: skip
        assert httpx.get(f"{secure.url}/v1/terminals", headers={**auth, "Host": host}).status_code == 200, host
        assert upgrade(secure, "/v1/events", host, f"http://{host}", f"?token={TOKEN}") == 101, host


def test_a_foreign_origin_is_refused_on_http_and_websocket(secure: Daemon) -> None:
    auth = {"Authorization": f"Bearer {TOKEN}"}
    own = f"http://127.0.0.1:{secure.port}"
    others = ("http://evil.example", f"http://localhost:{secure.port + 1}", "null", f"http://lookout.test:{secure.port}")
    for origin in others:
        answer = httpx.get(f"{secure.url}/v1/terminals", headers={**auth, "Origin": origin})
        assert answer.status_code == 403, (origin, answer.text)
        assert answer.json()["error"]["code"] == "forbidden_origin"
        host = f"127.0.0.1:{secure.port}"
        assert upgrade(secure, "/v1/events", host, origin, f"?token={TOKEN}") == 403, origin
    assert httpx.get(f"{secure.url}/v1/terminals", headers={**auth, "Origin": own}).status_code == 200
    assert upgrade(secure, "/v1/events", f"127.0.0.1:{secure.port}", own, f"?token={TOKEN}") == 101


def _serve(tmp_path: Path, *args: str, token: str) -> subprocess.CompletedProcess[str]:
    command = [sys.executable, "-m", "lookout", "serve", "--data-dir", str(tmp_path / "data"), *args]
    env = {**os.environ, "LOOKOUT_TOKEN": token}
    return subprocess.run(command, cwd=REPO, env=env, capture_output=True, text=True, timeout=60)


def test_a_short_token_is_refused_at_start(tmp_path: Path) -> None:
    for args in (("--host", "0.0.0.0", "--port", "1"), ("--port", "1")):
        done = _serve(tmp_path, *args, token="a")
        assert done.returncode == 2, done
        assert "at least 16 characters" in done.stderr and "Traceback" not in done.stderr
    (tmp_path / "data").mkdir(exist_ok=True, mode=0o700)
    (tmp_path / "data" / "token").write_text("short\n")
    (tmp_path / "data" / "token").chmod(0o600)
    done = _serve(tmp_path, "--port", "1", token="")
    assert done.returncode == 2 and "at least 16 characters" in done.stderr, done


def test_repeated_wrong_tokens_are_slowed_per_client(secure: Daemon) -> None:
    wrong = {"Authorization": "Bearer wrong-token-wrong-token"}
    waits: list[str | None] = []
    with httpx.Client(base_url=secure.url, timeout=60) as attacker:
        for _ in range(8):
            answer = attacker.get("/v1/terminals", headers=wrong)
            assert answer.status_code == 401
            waits.append(answer.headers.get("retry-after"))
        free = waits.index(next(w for w in waits if w is not None))
        assert free >= 3 and all(w is None for w in waits[:free]), waits
        slowed = [int(w) for w in waits[free:] if w is not None]
        assert len(slowed) == len(waits) - free and slowed == sorted(slowed) and slowed[-1] > slowed[0], waits
        # another client is not slowed by this one's failures
        other = httpx.HTTPTransport(local_address="127.0.0.2")
        with httpx.Client(base_url=secure.url, transport=other, timeout=60) as bystander:
            answer = bystander.get("/v1/terminals", headers=wrong)
            assert answer.status_code == 401 and "retry-after" not in answer.headers
        # the right token still works, and clears the count
        assert attacker.get("/v1/terminals", headers={"Authorization": f"Bearer {TOKEN}"}).status_code == 200
        answer = attacker.get("/v1/terminals", headers=wrong)
        assert answer.status_code == 401 and "retry-after" not in answer.headers


def _subprotocol(token: str) -> str:
    return "lookout.bearer." + base64.urlsafe_b64encode(token.encode()).decode().rstrip("=")


async def test_websockets_take_the_token_in_a_subprotocol(secure: Daemon) -> None:
    url = f"ws://127.0.0.1:{secure.port}/v1/events"
    async with websockets.connect(url, subprotocols=["lookout", _subprotocol(TOKEN)]) as ws:  # type: ignore[list-item]
        assert ws.subprotocol == "lookout", "the token is never echoed back"
    status = upgrade(secure, "/v1/events", f"127.0.0.1:{secure.port}",
                     extra=f"Sec-WebSocket-Protocol: lookout, {_subprotocol('wrong-token-wrong-token')}\n")  # fmt: skip
    assert status == 403


def test_the_token_is_in_no_log_line_after_websockets_and_a_ui_session(secure: Daemon, tmp_path: Path) -> None:
    host = f"127.0.0.1:{secure.port}"
    assert upgrade(secure, "/v1/events", host, query=f"?token={TOKEN}") == 101
    assert upgrade(secure, "/v1/events", host, query=f"?agent=x&token={TOKEN}&mode=raw") == 101
    assert upgrade(secure, "/v1/events", host, "http://evil.example", f"?token={TOKEN}") == 403
    assert upgrade(secure, "/v1/nowhere", host, query=f"?token={TOKEN}") == 403
    urls: list[str] = []
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=find_executable(None), args=list(FLAGS))
        page = browser.new_page()
        page.on("websocket", lambda ws: urls.append(ws.url))
        page.goto(f"{secure.url}/")
        page.get_by_label("API token").fill(TOKEN)
        page.get_by_role("button", name="Sign in").click()
        expect(page.get_by_text("live")).to_be_visible()
        page.get_by_role("link", name="New terminal").click()
        page.get_by_label("Command").fill("bash")
        page.get_by_label("Working directory").fill(str(tmp_path))
        page.get_by_role("button", name="Open terminal").click()
        page.locator(".xterm-host").click()
        page.keyboard.type("echo ui-$((6*7))")
        page.keyboard.press("Enter")
        expect(page.locator(".xterm-rows")).to_contain_text("ui-42")
        browser.close()
    assert len(urls) >= 2 and not any(TOKEN in u or "token=" in u for u in urls), urls
    secure.stop()
    log = secure.log.read_text()
    assert log.count('"WebSocket /v1/events') >= 4, log
    assert TOKEN not in log and not re.search(r"token=(?!\[redacted\])", log), log
    files = [p for p in secure.data_dir.rglob("*") if p.is_file() and p.name != "token"]
    assert files and all(TOKEN.encode() not in p.read_bytes() for p in files)


def test_hostile_ui_names_are_4xx_without_a_traceback(secure: Daemon) -> None:
    for name in ("%00", "a%00b.js", "a" * 5000, "js/" + "b" * 5000 + ".js", "/".join(["a"] * 3000)):
        answer = httpx.get(f"{secure.url}/ui/{name}")
        assert answer.status_code == 404, (name[:40], answer.text)
        assert answer.json()["error"]["code"] == "not_found"
    assert httpx.get(f"{secure.url}/ui/js/api.js").status_code == 200
    secure.stop()
    assert "Traceback" not in secure.log.read_text()


def test_two_authorization_headers_are_refused(secure: Daemon) -> None:
    for second in (f"Bearer {TOKEN}", "Bearer wrong"):
        answer = raw_request(secure.port, f"GET /v1/terminals HTTP/1.1\nHost: 127.0.0.1\nAuthorization: Bearer {TOKEN}\n"
                             f"Authorization: {second}\nConnection: close\n\n")  # fmt: skip
        assert answer.startswith(b"HTTP/1.1 400 "), answer


def test_a_405_says_what_is_allowed(secure: Daemon) -> None:
    with secure.client() as api:
        answer = api.put("/v1/terminals")
    assert answer.status_code == 405 and set(answer.headers["allow"].split(", ")) >= {"GET", "POST"}
    assert answer.json()["error"]["code"] == "method_not_allowed"


def test_a_half_sent_request_line_is_closed(secure: Daemon) -> None:
    with socket.create_connection(("127.0.0.1", secure.port), timeout=60) as s:
        s.sendall(b"GET /healthz HT")
        read_until_closed(s)  # a socket timeout (60 s) fails the test
    with socket.create_connection(("127.0.0.1", secure.port), timeout=60) as s:
        s.sendall(b"GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Slow: ")
        assert not read_until_closed(s).startswith(b"HTTP/1.1 200")


def test_an_incomplete_body_ends_in_an_error(secure: Daemon) -> None:
    with socket.create_connection(("127.0.0.1", secure.port), timeout=60) as s:
        s.sendall(f"POST /v1/terminals HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer {TOKEN}\r\n"
                  "Content-Type: application/json\r\nContent-Length: 100\r\n\r\n{\"command\":".encode())  # fmt: skip
        answer = read_until_closed(s)
    assert answer.startswith(b"HTTP/1.1 408 "), answer
    assert b'"code":"request_timeout"' in answer
    with secure.client() as api:
        assert api.get("/v1/terminals").json()["terminals"] == [], "the half-sent request started nothing"
