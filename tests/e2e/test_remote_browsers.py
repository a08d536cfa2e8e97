"""Pages on a browser elsewhere (issue: browsers and devices elsewhere): the daemon drives a Playwright browser
server and a Chromium over CDP, both real and on loopback, exactly as its own browser (snapshots with refs,
actions with effects, screenshots, diffs, profiles as storage state); a remote browser that goes away is a
503 that says so, and the daemon connects again once it is back; one that never answers is a 503 at the
first page call that names its address without the secrets in it."""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from tests.conftest import Daemon, free_port
from tests.support.pages import ref_of
from tests.support.remote_browsers import CdpChromium, PlaywrightServer
from tests.support.site import serve_directory

APP = """<!doctype html><title>Remote app</title><h1>Remote app</h1>
<label>Name <input id="who"></label><button onclick="document.title = 'Hello ' + document.getElementById('who').value">Greet</button>"""


@pytest.fixture
def site(tmp_path: Path) -> Iterator[str]:
    root = tmp_path / "site"
    root.mkdir()
    (root / "app.html").write_text(APP)
    with serve_directory(root) as url:
        yield url


def _drive(api: httpx.Client, site: str) -> None:
    """What an agent does with a page, asserted to work the same as on the daemon's own browser."""
    page = api.post("/v1/pages", json={"url": f"{site}/app.html"})
    assert page.status_code == 201, page.text
    pid = page.json()["id"]
    first = api.post(f"/v1/pages/{pid}/snapshot").json()
    assert "Remote app" in first["text"]
    act = {"action": "fill", "ref": ref_of(first["text"], '- textbox "Name"'), "text": "far"}
    assert api.post(f"/v1/pages/{pid}/action", json=act).status_code == 200
    click = api.post(f"/v1/pages/{pid}/action", json={"action": "click", "ref": ref_of(first["text"], '- button "Greet"'),
                                                      "snapshot": {"since": first["obs_id"]}})  # fmt: skip
    assert click.status_code == 200, click.text
    assert api.get(f"/v1/pages/{pid}").json()["title"] == "Hello far"
    shot = api.post(f"/v1/pages/{pid}/screenshot", json={"max_dimension": 500})
    assert shot.status_code == 200 and shot.json()["image"]["width"] <= 500
    assert api.delete(f"/v1/pages/{pid}").status_code == 200


def test_pages_on_a_playwright_server_and_a_reconnect_after_it_went_away(tmp_path: Path, site: str) -> None:
    port = free_port()
    server = PlaywrightServer(tmp_path, port).start()
    d = Daemon(tmp_path / "data", LOOKOUT_BROWSER_WS_ENDPOINT=server.endpoint).start()
    try:
        with d.client(timeout=120) as api:
            _drive(api, site)
            kept = api.post("/v1/pages", json={"url": f"{site}/app.html"}).json()["id"]
            server.stop()
            gone = api.post(f"/v1/pages/{kept}/snapshot")
            assert gone.status_code == 503 and re.search("went away|closed", gone.json()["error"]["message"]), gone.text
            refused = api.post("/v1/pages", json={"url": f"{site}/app.html"})
            assert refused.status_code == 503 and f"127.0.0.1:{port}" in refused.json()["error"]["message"]
            server = PlaywrightServer(tmp_path, port).start()  # back, at the same endpoint
            _drive(api, site)  # the daemon connects again by itself
    finally:
        d.finish()
        server.stop()


def test_pages_and_a_profile_on_a_chromium_over_cdp(tmp_path: Path, site: str) -> None:
    chromium = CdpChromium(tmp_path).start()
    d = Daemon(tmp_path / "data", LOOKOUT_BROWSER_CDP_URL=chromium.url).start()
    try:
        with d.client(timeout=120) as api:
            _drive(api, site)
            page = api.post("/v1/pages", json={"url": f"{site}/app.html", "profile": "far"}).json()["id"]
            api.post(f"/v1/pages/{page}/action", json={"action": "navigate", "url": f"{site}/app.html#x"})
            state = {"cookies": [{"name": "seen", "value": "yes", "domain": "127.0.0.1", "path": "/", "expires": -1,
                                  "httpOnly": False, "secure": False, "sameSite": "Lax"}], "origins": []}  # fmt: skip
            assert api.put("/v1/profiles/far/storage", json=state).status_code == 200
            assert api.delete(f"/v1/pages/{page}").status_code == 200
            stored = tmp_path / "data" / "profiles" / "far" / "storage.json"
            assert stored.is_file() and stored.stat().st_mode & 0o777 == 0o600 and "seen" in stored.read_text()
            exported = api.get("/v1/profiles/far/storage").json()
            assert [c["name"] for c in exported["cookies"]] == ["seen"]
    finally:
        d.finish()
        chromium.stop()


def test_a_cdp_url_that_answers_nothing_is_a_503_naming_it_without_its_secrets(tmp_path: Path) -> None:
    port = free_port()
    url = f"http://user:s3cret@127.0.0.1:{port}/?token=abcdef"
    d = Daemon(tmp_path / "data", LOOKOUT_BROWSER_CDP_URL=url).start()  # starts: the browser is not needed yet
    try:
        with d.client(timeout=120) as api:
            r = api.post("/v1/pages", json={"url": "about:blank"})
            assert r.status_code == 503, r.text
            message = r.json()["error"]["message"]
            assert f"http://127.0.0.1:{port}/" in message and "s3cret" not in message and "abcdef" not in message
            assert api.get("/healthz").status_code == 200
    finally:
        d.finish()
