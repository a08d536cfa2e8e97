"""Issue 35, secrets of a remote browser's address: a `LOOKOUT_BROWSER_WS_ENDPOINT` (or CDP URL) holding a
password and tokens, where nothing answers as a browser would (a socket that accepts and never speaks, a web
server that answers 404 to everything), is a 503 whose message, like the timeline and the daemon's log, holds
none of them, whatever Playwright's own error text says (it quotes the whole address). The daemon runs as a
subprocess."""
from __future__ import annotations

import http.server
import socket
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.conftest import Daemon

PASSWORD = "pa55-w0rd-never-shown"
TOKEN_IN_QUERY = "query-t0ken-never-shown"


class _NotFound(http.server.BaseHTTPRequestHandler):
    def do_GET(self) -> None:  # noqa: N802 (the handler's name is the method's)
        self.send_response(404)
        self.end_headers()

    def log_message(self, *_: object) -> None:
        pass


@pytest.fixture(params=["silent", "404"])
def nothing_port(request: pytest.FixtureRequest) -> Iterator[int]:
    """A port where no browser answers: one that accepts and never speaks, or a web server's 404."""
    if request.param == "silent":
        with socket.socket() as listener:
            listener.bind(("127.0.0.1", 0))
            listener.listen(16)
            yield listener.getsockname()[1]
        return
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _NotFound)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        yield server.server_port
    finally:
        server.shutdown()
        server.server_close()


@pytest.mark.parametrize("variable", ["LOOKOUT_BROWSER_WS_ENDPOINT", "LOOKOUT_BROWSER_CDP_URL"])
def test_a_remote_browser_that_answers_nothing_is_a_503_without_its_secrets(
    tmp_path: Path, nothing_port: int, variable: str
) -> None:
    scheme = "ws" if variable.endswith("WS_ENDPOINT") else "http"
    query = f"token={TOKEN_IN_QUERY}&apiKey={TOKEN_IN_QUERY}x"
    url = f"{scheme}://someone:{PASSWORD}@127.0.0.1:{nothing_port}/browser?{query}"
    daemon = Daemon(tmp_path / "data", **{variable: url}).start()
    with daemon.client(timeout=120) as api:
        answer = api.post("/v1/pages", json={"url": "about:blank"})
        assert answer.status_code == 503, answer.text
        assert f"127.0.0.1:{nothing_port}" in answer.json()["error"]["message"]  # where, said without the secrets
        frames = api.get("/v1/timeline/frames", params={"limit": 100}).text
    daemon.stop()
    log = daemon.log.read_text()
    for text in (answer.text, frames, log):
        assert PASSWORD not in text and TOKEN_IN_QUERY not in text
