"""Security properties enumerated from the app's own routes, so that a new route cannot slip through:
every route needs the token, every WebSocket also a same-origin `Origin`, no path parameter reaches
outside the data dir, and nothing secret reaches the log."""
from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
import websockets
from starlette.routing import BaseRoute, Route, WebSocketRoute
from websockets.exceptions import InvalidStatus

from lookout.api.guard import OPEN_PATHS, OPEN_PREFIXES
from lookout.config import Settings
from lookout.server import create_app
from tests.conftest import Daemon

PARAM = re.compile(r"\{(\w+)(?::\w+)?\}")
HOSTILE = ["..", "%2e%2e", "..%2f..%2fetc%2fpasswd", "%2e%2e%2f%2e%2e%2f%2e%2e%2fetc", "a%00b", "%00", "x" * 300,
           "..%5c..%5cwindows", "%252e%252e", "~root", "-rf", "t_%2e%2e"]  # fmt: skip


def _walk(routes: list[BaseRoute], prefix: str = "") -> Iterator[tuple[str, BaseRoute]]:
    """Every route with its full path, also inside included routers (FastAPI wraps them)."""
    for route in routes:
        inner = getattr(route, "original_router", None)
        if inner is not None:
            yield from _walk(inner.routes, prefix + route.include_context.prefix)
        else:
            yield prefix + getattr(route, "path", ""), route


def routes(tmp_path: Path) -> tuple[list[tuple[str, str]], list[str]]:
    """(method, path) of every HTTP route that needs the token, and the path of every WebSocket route."""
    app = create_app(Settings(data_dir=tmp_path / "routes", token="x" * 16))
    app.state.later_routes.include_all()  # those an ordinary request does not need are included on first use
    http, ws = [], []
    for path, route in _walk(app.routes):
        if isinstance(route, WebSocketRoute):
            ws.append(path)
        elif isinstance(route, Route) and path not in OPEN_PATHS and not path.startswith(OPEN_PREFIXES):
            http.extend((method, path) for method in sorted(route.methods or ()) if method != "HEAD")
    return http, ws


def fill(path: str, value: str = "x") -> str:
    return PARAM.sub(value, path)


@pytest.fixture
def secure(tmp_path: Path) -> Iterator[Daemon]:
    daemon = Daemon(tmp_path / "data", token="s3cret-token-that-must-not-leak", LOOKOUT_ADB_PORT="1").start()
    yield daemon
    daemon.stop()


def test_every_route_needs_the_token(secure: Daemon, tmp_path: Path) -> None:
    http, ws = routes(tmp_path)
    assert len(http) >= 35 and len(ws) >= 2, (http, ws)
    for n, (method, path) in enumerate(http):
        # each route probed from its own loopback address: one address's wrong tokens are slowed (test_sec_network)
        transport = httpx.HTTPTransport(local_address=f"127.0.{n // 200 + 1}.{n % 200 + 2}")
        with httpx.Client(base_url=secure.url, transport=transport) as probe:
            for headers in ({}, {"Authorization": "Bearer wrong"}, {"Authorization": f"Basic {secure.token}"}):
                answer = probe.request(method, fill(path), headers=headers, json={})
                assert answer.status_code == 401, (method, path, headers, answer.text)
                assert answer.json()["error"]["code"] == "unauthorized"
            wrong_query = probe.request(method, f"{fill(path)}?token=wrong", json={})
            assert wrong_query.status_code == 401, (method, path)
    assert httpx.get(f"{secure.url}/openapi.json").status_code == 401
    assert httpx.get(f"{secure.url}/docs").status_code == 401


async def test_every_websocket_needs_the_token_and_the_same_origin(secure: Daemon, tmp_path: Path) -> None:
    _, ws = routes(tmp_path)
    with secure.client() as api:
        tid = api.post("/v1/terminals", json={"command": ["cat"]}).json()["id"]
    for path in ws:
        url = f"ws://127.0.0.1:{secure.port}{fill(path, tid)}"
        for query, origin in (("", None), ("?token=wrong", None), (f"?token={secure.token}", "http://evil.example"),
                              (f"?token={secure.token}", f"http://localhost.evil.example:{secure.port}")):  # fmt: skip
            with pytest.raises(InvalidStatus) as refused:
                async with websockets.connect(url + query, origin=origin):
                    pass
            assert refused.value.response.status_code == 403, (path, query, origin)
        async with websockets.connect(f"{url}?token={secure.token}", origin=f"http://127.0.0.1:{secure.port}") as ok:
            assert ok.response.status_code == 101, path


def test_no_path_parameter_escapes_the_data_dir(secure: Daemon, tmp_path: Path) -> None:
    http, _ = routes(tmp_path)
    outside = sorted(p.name for p in tmp_path.iterdir())
    checked = 0
    with secure.client() as api:
        for method, path in http:
            if not PARAM.search(path):
                continue
            for value in HOSTILE:
                answer = api.request(method, fill(path, value), json={})
                refused = (400, 404, 405, 409, 422) + ((503,) if path.startswith("/v1/devices") else ())  # no adb here
                assert answer.status_code in refused, (method, path, value, answer.text)
                assert answer.json()["error"]["message"]
                checked += 1
    assert checked > 300
    assert sorted(p.name for p in tmp_path.iterdir()) == outside, "nothing was written beside the data dir"
    assert not any((tmp_path / "data").rglob("*passwd*"))


def test_the_token_never_reaches_the_log(secure: Daemon) -> None:
    with secure.client() as api:
        api.post("/v1/terminals", json={"command": ["sh", "-c", "exit 3"]})
        api.get("/v1/terminals/t_nonexistent")
        api.get("/v1/timeline/context", params={"budget": 100})
    httpx.get(f"{secure.url}/v1/terminals", headers={"Authorization": "Bearer wrong"})
    httpx.get(f"{secure.url}/v1/events?token={secure.token}")
    secure.stop()
    log = secure.log.read_text()
    assert "lookout: http://127.0.0.1" in log and secure.token not in log
    data = secure.data_dir
    assert all(secure.token not in p.read_text(errors="replace") for p in data.rglob("*") if p.is_file()
               and p.stat().st_size < 1 << 20)  # fmt: skip


def test_lone_surrogates_are_refused_and_pairs_pass(secure: Daemon) -> None:
    json_body = {"Content-Type": "application/json"}
    with secure.client() as api:
        tid = api.post("/v1/terminals", json={"command": ["cat"]}).json()["id"]
        for path, body, field in (
            (f"/v1/terminals/{tid}/input", '{"text": "a\\ud800b"}', "body.text"),
            (f"/v1/terminals/{tid}/input", '{"keys": ["Enter", "\\udfff"]}', "body.keys[1]"),
            ("/v1/terminals", '{"command": ["echo", "\\udc80"]}', "body.command[1]"),
            ("/v1/pages", '{"url": "data:text/html,\\ud800"}', "body.url"),
            (f"/v1/terminals/{tid}/wait", '{"until": {"regex": "\\ude00"}}', "body.until.regex"),
        ):
            answer = api.post(path, content=body, headers=json_body)
            assert answer.status_code == 400, (path, answer.text)
            assert answer.json()["error"]["details"]["field"] == field
        paired = api.post(f"/v1/terminals/{tid}/act", content='{"input": {"text": "\\ud83d\\ude00\\r"}, "until": {"regex": "\\ud83d\\ude00"}}',
                          headers=json_body)  # fmt: skip
        assert paired.status_code == 200 and paired.json()["ended"] == "regex"
