"""Browser pages end to end: the daemon as a subprocess, real headless Chromium, pages from 127.0.0.1."""
from __future__ import annotations

import base64
import io
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from PIL import Image

from lookout.core.tokens import count_tokens
from tests.conftest import Daemon
from tests.support.http import ok_json
from tests.support.pages import FORMS, big_page, ref_of
from tests.support.site import QuietHandler, serve_directory

SHOP = """<!doctype html><html><head><title>Shop</title></head><body>
<nav aria-label="Main"><a href="/">Home</a> <a href="/about">About</a></nav>
<main><h1>Products</h1><p>Only today: <b>$19.99</b></p>
<form><label>Email <input type="email" placeholder="you@example.com"></label>
<label><input type="checkbox" checked> Remember me</label><button type="button">Buy now</button></form>
<p class="error" role="alert">Card declined</p>
<div style="margin-top:3000px"><a href="/far">Far link</a></div></main></body></html>"""


class _Quiet(QuietHandler):
    """Serves the test pages; `/slow` answers after 0.8 s (a slow XHR)."""

    def do_GET(self) -> None:
        if self.path != "/slow":
            super().do_GET()
            return
        time.sleep(0.8)
        body = b"slow answer"
        self.send_response(200)
        self.send_header("Content-Type", "text/plain")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    root = tmp_path_factory.mktemp("site")
    (root / "shop.html").write_text(SHOP)
    (root / "big.html").write_text(big_page(800))
    (root / "app.html").write_text(APP)
    (root / "next.html").write_text(NEXT)
    (root / "canvas.html").write_text(CANVAS)
    (root / "modal.html").write_text(MODAL)
    (root / "forms.html").write_text(FORMS)
    (root / "frames.html").write_text(FRAMES)
    (root / "report.csv").write_text("a,b\n1,2\n")
    with serve_directory(root, _Quiet) as url:
        yield url


def test_open_snapshot_and_close_a_page(api: httpx.Client, site: str) -> None:
    page = ok_json(api.post("/v1/pages", json={"url": f"{site}/shop.html"}), 201)
    assert page["title"] == "Shop" and page["url"] == f"{site}/shop.html"
    assert page["viewport"] == {"width": 1280, "height": 720}
    assert [p["id"] for p in ok_json(api.get("/v1/pages"))["pages"]] == [page["id"]]
    snap = ok_json(api.post(f"/v1/pages/{page['id']}/snapshot"))
    text = snap["text"]
    assert text.startswith(f"# Page: Shop — {site}/shop.html\n# Elements: ")
    assert f"# Tokens: {snap['metadata']['tokens']}\n" in text
    assert snap["metadata"]["tokens"] == count_tokens(text)
    assert snap["metadata"]["truncated"] is False
    assert '- button "Buy now" [ref=e' in text and '- checkbox "Remember me" [checked] [ref=e' in text
    assert '[placeholder=you@example.com]' in text and "$19.99" in text and "Card declined" in text
    assert "[box=" not in text and "[cursor=" not in text
    assert ok_json(api.get(f"/v1/pages/{page['id']}"))["last_obs"] == snap["obs_id"]
    closed = ok_json(api.delete(f"/v1/pages/{page['id']}"))
    assert closed["closed"] is True
    assert api.post(f"/v1/pages/{page['id']}/snapshot").status_code == 404


def test_interactive_only_keeps_text_that_carries_meaning(api: httpx.Client, site: str) -> None:
    page = ok_json(api.post("/v1/pages", json={"url": f"{site}/shop.html"}), 201)
    text = ok_json(api.post(f"/v1/pages/{page['id']}/snapshot", json={"interactive_only": True}))["text"]
    assert "$19.99" in text and "Card declined" in text and '- button "Buy now"' in text


@pytest.mark.parametrize(
    "options",
    [{}, {"max_tokens": 500}, {"max_tokens": 1500, "max_elements": 1000}, {"viewport_only": True},
     {"interactive_only": True, "max_tokens": 800}, {"max_elements": 20}],
)  # fmt: skip
def test_the_budget_holds_on_a_big_page(api: httpx.Client, site: str, options: dict) -> None:
    page = ok_json(api.post("/v1/pages", json={"url": f"{site}/big.html"}), 201)
    snap = ok_json(api.post(f"/v1/pages/{page['id']}/snapshot", json=options))
    meta = snap["metadata"]
    assert meta["tokens"] == count_tokens(snap["text"]) <= options.get("max_tokens", 4000)
    if meta["included_elements"] > options.get("max_elements", 150):  # only controls on screen pass the limit
        assert '- link "Section 0"' in snap["text"] and '- button "Add 0"' in snap["text"]
    assert meta["truncated"] is True and meta["total_elements"] > 4000
    assert f"# Elements: {meta['included_elements']} of {meta['total_elements']} (truncated: {meta['reason']})" in snap["text"]
    assert "folded" in snap["text"], "nothing is cut silently"


def test_full_is_the_escape_hatch(api: httpx.Client, site: str) -> None:
    page = ok_json(api.post("/v1/pages", json={"url": f"{site}/big.html"}), 201)
    snap = ok_json(api.post(f"/v1/pages/{page['id']}/snapshot", json={"full": True}))
    assert snap["metadata"]["truncated"] is False and snap["metadata"]["tokens"] > 20_000
    assert '- button "Add 799"' in snap["text"]


def test_bad_input(api: httpx.Client) -> None:
    assert api.post("/v1/pages", json={"url": "javascript:alert(1)"}).status_code == 400
    unreachable = api.post("/v1/pages", json={"url": "http://127.0.0.1:9/"})
    assert unreachable.status_code == 409 and "navigation to http://127.0.0.1:9/ failed" in unreachable.text
    assert api.get("/v1/pages").json()["pages"] == [], "a page that could not open is not kept"
    assert api.post("/v1/pages/p_nope/snapshot").status_code == 404
    assert api.post("/v1/pages", json={"viewport": {"width": 5}}).status_code == 422
    page = ok_json(api.post("/v1/pages", json={"url": "about:blank"}), 201)["id"]
    for name in ("a\x00b.txt", "x" * 5000):  # a NUL byte, a name too long for the file system: 400, no traceback
        refused = api.post(f"/v1/pages/{page}/action", json={"action": "upload", "ref": "e1", "files": [name]})
        assert refused.status_code == 400 and refused.json()["error"]["details"]["field"] == "files", refused.text
    # a JSON body without Content-Type: application/json (curl -d) is read as JSON
    curl_like = api.post("/v1/pages", content=b'{"url": "about:blank"}',
                         headers={"Content-Type": "application/x-www-form-urlencoded"})  # fmt: skip
    assert curl_like.status_code == 201, curl_like.text


def test_no_browser_is_a_503_that_says_how_to_get_one(tmp_path: Path) -> None:
    daemon = Daemon(tmp_path / "data", LOOKOUT_BROWSER_EXECUTABLE=str(tmp_path / "no-chromium")).start()
    try:
        with daemon.client() as api:
            response = api.post("/v1/pages", json={})
            assert response.status_code == 503
            assert "apt-get install chromium" in response.json()["error"]["message"]
    finally:
        daemon.stop()


def test_a_browser_driver_that_cannot_start_is_a_503_with_its_reason(tmp_path: Path) -> None:
    """Playwright's bundled Node.js failing to load (as it did without libatomic1 in the image) is a 503 that
    carries the loader's own words, not an opaque 500. The stand-in node fails the way the real one did."""
    node = tmp_path / "node"
    node.write_text("#!/bin/sh\necho 'node: error while loading shared libraries: libatomic.so.1: cannot open "
                    "shared object file: No such file or directory' >&2\nexit 127\n")  # fmt: skip
    node.chmod(0o755)
    daemon = Daemon(tmp_path / "data", PLAYWRIGHT_NODEJS_PATH=str(node)).start()
    try:
        with daemon.client() as api:
            response = api.post("/v1/pages", json={})
            assert response.status_code == 503, response.text
            message = response.json()["error"]["message"]
            assert "driver could not start" in message and "libatomic.so.1" in message
    finally:
        daemon.stop()


APP = """<!doctype html><html><head><title>App</title></head><body>
<h1>App</h1>
<label>Name <input id="name"></label>
<label><input type="checkbox" id="agree"> I agree</label>
<select id="colour" aria-label="Colour"><option>Red</option><option>Blue</option></select>
<button id="add" onclick="const li = document.createElement('li'); li.textContent = 'Row ' +
  document.querySelectorAll('li').length; document.querySelector('ul').append(li)">Add row</button>
<button onclick="console.error('boom happened'); fetch('/missing-resource')">Break</button>
<button onclick="alert('Hello there')">Alert</button>
<a href="/next.html">Next page</a>
<ul></ul>
</body></html>"""
NEXT = "<!doctype html><title>Next</title><h1>Second page</h1><a href='/app.html'>Back to app</a>"


@pytest.fixture
def app_page(api: httpx.Client, site: str) -> str:
    page = ok_json(api.post("/v1/pages", json={"url": f"{site}/app.html"}), 201)
    return page["id"]


def _act(api: httpx.Client, page_id: str, **body: object) -> httpx.Response:
    return api.post(f"/v1/pages/{page_id}/action", json=body)


def test_actions_by_ref_and_their_effects(api: httpx.Client, site: str, app_page: str) -> None:
    snap = ok_json(api.post(f"/v1/pages/{app_page}/snapshot"))["text"]
    filled = ok_json(_act(api, app_page, action="fill", ref=ref_of(snap, '- textbox "Name"'), text="Ada"))
    assert filled["effects"]["focus"] == 'textbox "Name"' and filled["effects"]["controls"] == [{"control": 'textbox "Name"', "value": "Ada"}]
    ok_json(_act(api, app_page, action="check", ref=ref_of(snap, '- checkbox "I agree"')))
    ok_json(_act(api, app_page, action="select", ref=ref_of(snap, '- combobox "Colour"'), values=["Blue"]))
    added = ok_json(_act(api, app_page, action="click", ref=ref_of(snap, '- button "Add row"'),
                     snapshot={"max_tokens": 1000}))  # fmt: skip
    after = added["snapshot"]["text"]
    assert "Row 0" in after and '- checkbox "I agree" [checked]' in after and "navigation" not in added["effects"]
    broke = ok_json(_act(api, app_page, action="click", ref=ref_of(snap, '- button "Break"')))
    assert {"level": "error", "text": "boom happened"} in broke["effects"]["console"]
    alerted = ok_json(_act(api, app_page, action="click", ref=ref_of(snap, '- button "Alert"')))
    assert alerted["effects"]["dialogs"] == [{"type": "alert", "message": "Hello there", "answer": "dismissed"}]
    moved = ok_json(_act(api, app_page, action="click", ref=ref_of(snap, '- link "Next page"')))
    assert moved["effects"]["navigation"] == {"url": f"{site}/next.html"} and moved["title"] == "Next"
    assert moved["settled"].startswith("requests ended, the page loaded, DOM quiet 100 ms at "), moved["settled"]
    assert "focus" not in moved["effects"], "the new page has no focus: none is reported (not null)"


def test_stale_and_unknown_refs_are_409(api: httpx.Client, site: str, app_page: str) -> None:
    assert "no snapshot" in _act(api, app_page, action="click", ref="e1").json()["error"]["message"]
    snap = ok_json(api.post(f"/v1/pages/{app_page}/snapshot"))["text"]
    unknown = _act(api, app_page, action="click", ref="e99999")
    assert unknown.status_code == 409 and "ref e99999 is unknown" in unknown.json()["error"]["message"]
    ok_json(_act(api, app_page, action="navigate", url=f"{site}/next.html"))
    stale = _act(api, app_page, action="click", ref=ref_of(snap, '- button "Add row"'))
    assert stale.status_code == 409 and "navigated since snapshot" in stale.json()["error"]["message"]
    back = ok_json(_act(api, app_page, action="back"))
    assert back["url"] == f"{site}/app.html"
    snap = ok_json(api.post(f"/v1/pages/{app_page}/snapshot"))
    assert "# Navigation: " in snap["text"]
    assert _act(api, app_page, action="click").status_code == 400
    assert _act(api, app_page, action="fly").status_code == 422


def test_wait_for_text(api: httpx.Client, app_page: str) -> None:
    snap = ok_json(api.post(f"/v1/pages/{app_page}/snapshot"))["text"]
    ok_json(_act(api, app_page, action="click", ref=ref_of(snap, '- button "Add row"')))
    assert ok_json(_act(api, app_page, action="wait", wait={"text": "Row 0"}))["ok"] is True
    ok_json(_act(api, app_page, action="wait", ref=ref_of(snap, '- button "Add row"'), wait={"state": "visible"}))
    ok_json(_act(api, app_page, action="wait", wait={"dom_quiet": True}, timeout_ms=30_000))
    timed_out = _act(api, app_page, action="wait", wait={"text": "never there"}, timeout_ms=300)
    assert timed_out.status_code == 409 and "wait failed" in timed_out.json()["error"]["message"]


CANVAS = """<!doctype html><title>Canvas</title><body style="margin:0;height:3000px">
<button style="position:absolute;left:640px;top:360px;width:200px;height:100px"
 onclick="document.title = 'clicked'">Big</button></body>"""


def test_screenshot_is_scaled_and_a_click_at_its_pixels_lands(api: httpx.Client, site: str) -> None:
    page = ok_json(api.post("/v1/pages", json={"url": f"{site}/canvas.html"}), 201)
    shot = ok_json(api.post(f"/v1/pages/{page['id']}/screenshot", json={"inline": True}))
    assert shot["page"] == {"width": 1280, "height": 720} and shot["image"] == {"width": 1000, "height": 562}
    assert shot["scale_factor"] == 1.28 and shot["tokens"] == 750
    image = api.get(shot["url"])
    assert image.headers["content-type"] == "image/png"
    assert Image.open(io.BytesIO(image.content)).size == (1000, 562)
    assert base64.b64decode(shot["image_b64"]) == image.content
    missed = ok_json(_act(api, page["id"], action="click", x=100, y=100, obs_id=shot["obs_id"]))
    assert missed["title"] == "Canvas"
    hit = ok_json(_act(api, page["id"], action="click", x=578, y=320, obs_id=shot["obs_id"]))  # (740, 410) on the page
    assert hit["title"] == "clicked"
    outside = _act(api, page["id"], action="click", x=1001, y=10, obs_id=shot["obs_id"])
    assert outside.status_code == 400
    half = _act(api, page["id"], action="click", x=578, obs_id=shot["obs_id"])  # no y: refused, not a 500
    assert half.status_code == 400 and half.json()["error"]["details"]["field"] == "obs_id", half.text
    api.post(f"/v1/pages/{page['id']}/action", json={"action": "press", "key": "PageDown"})
    moved = _act(api, page["id"], action="click", x=578, y=320, obs_id=shot["obs_id"])
    assert moved.status_code == 409 and "take a new one" in moved.json()["error"]["message"]
    raw = ok_json(api.post(f"/v1/pages/{page['id']}/screenshot", json={"raw": True, "full_page": True, "format": "jpeg"}))
    assert raw["image"] == {"width": 1280, "height": 3000} and "Raw mode" in raw["warning"]


def test_a_stale_screenshot_click_says_what_changed_and_observations_outlive_their_page(
    api: httpx.Client, site: str
) -> None:
    page = ok_json(api.post("/v1/pages", json={"url": f"{site}/canvas.html"}), 201)
    shot = ok_json(api.post(f"/v1/pages/{page['id']}/screenshot"))
    ok_json(_act(api, page["id"], action="press", key="PageDown"))
    moved = _act(api, page["id"], action="click", x=578, y=320, obs_id=shot["obs_id"])
    message = moved.json()["error"]["message"]
    assert moved.status_code == 409 and "the scroll position was x 0, y 0 and is now x 0, y " in message, message
    ok_json(api.delete(f"/v1/pages/{page['id']}"))
    assert ok_json(api.get(f"/v1/pages/{page['id']}/observations/{shot['obs_id']}"))["kind"] == "screenshot"
    assert api.get(shot["url"]).status_code == 200

def test_diffs_show_an_added_row_and_a_changed_checkbox(api: httpx.Client, site: str, app_page: str) -> None:
    first = ok_json(api.post(f"/v1/pages/{app_page}/snapshot"))
    text = first["text"]
    ok_json(_act(api, app_page, action="click", ref=ref_of(text, '- button "Add row"')))
    checked = ok_json(_act(api, app_page, action="check", ref=ref_of(text, '- checkbox "I agree"'),
                       snapshot={"max_tokens": 1000}))  # fmt: skip
    assert checked["snapshot"]["metadata"]["diff_against"] == first["obs_id"]
    diff = ok_json(api.post(f"/v1/pages/{app_page}/snapshot", json={"since": first["obs_id"]}))
    lines = diff["text"].splitlines()
    meta = diff["metadata"]
    assert lines[1] == f"# Diff against {first['obs_id']}: {meta['added']} added, 0 removed, {meta['changed']} changed"
    assert meta["tokens"] == count_tokens(diff["text"]) and meta["tokens"] < first["metadata"]["tokens"]
    list_line = next(line for line in lines if line.startswith("~ - list [ref="))  # the list got a ref
    list_ref = list_line.split("[ref=")[1].split("]")[0]
    assert any(line.startswith(f"+ [in {list_ref}] - listitem") and line.endswith(": Row 0") for line in lines)
    assert any(line.startswith('~ - checkbox "I agree" [checked] [ref=') for line in lines)
    assert lines[-1] == f"= {meta['unchanged']} unchanged" and meta["unchanged"] > 5
    ok_json(_act(api, app_page, action="navigate", url=f"{site}/next.html"))
    full = ok_json(api.post(f"/v1/pages/{app_page}/snapshot", json={"since": first["obs_id"]}))
    assert f"# Full snapshot: the URL changed since {first['obs_id']}" in full["text"]
    assert full["metadata"]["tokens"] == count_tokens(full["text"])
    shot = ok_json(api.post(f"/v1/pages/{app_page}/screenshot"))
    assert api.post(f"/v1/pages/{app_page}/snapshot", json={"since": shot["obs_id"]}).status_code == 400
    assert api.post(f"/v1/pages/{app_page}/snapshot", json={"since": "o_0000000000"}).status_code == 404


def test_find_and_expand_reach_what_was_folded(api: httpx.Client, site: str) -> None:
    page = ok_json(api.post("/v1/pages", json={"url": f"{site}/big.html"}), 201)
    assert api.post(f"/v1/pages/{page['id']}/find", json={"text": "x"}).status_code == 409
    snap = ok_json(api.post(f"/v1/pages/{page['id']}/snapshot", json={"max_tokens": 1000}))
    assert "Add 799" not in snap["text"]
    found = ok_json(api.post(f"/v1/pages/{page['id']}/find", json={"text": "add 799"}))
    assert found["count"] == 1 and found["obs_id"] == snap["obs_id"]
    (match,) = found["matches"]
    assert match["line"].startswith('- button "Add 799" [ref=') and any("- table" in p for p in match["path"])
    row_ref = next(p for p in reversed(match["path"]) if p.startswith("- row")).split("[ref=")[1].split("]")[0]
    expanded = ok_json(api.post(f"/v1/pages/{page['id']}/snapshot", json={"expand": row_ref, "max_tokens": 300}))
    text = expanded["text"]
    assert f"# Expanded: {row_ref}" in text and "Item 799" in text and '- button "Add 799"' in text
    assert expanded["metadata"]["tokens"] <= 300 and expanded["metadata"]["truncated"] is False
    regex = ok_json(api.post(f"/v1/pages/{page['id']}/find", json={"text": r"^- button \"Add 7\d\d\"", "regex": True}))
    assert regex["count"] == 100 and len(regex["matches"]) == 50
    assert api.post(f"/v1/pages/{page['id']}/find", json={"text": "(", "regex": True}).status_code == 400
    gone = api.post(f"/v1/pages/{page['id']}/snapshot", json={"expand": "e999999"})
    assert gone.status_code == 409


MODAL = """<!doctype html><title>Modal</title><body>
<nav>""" + " ".join(f"<a href='/l{i}'>Link {i}</a>" for i in range(40)) + """</nav>
<button onclick="document.getElementById('m').style.display='block'">Open settings</button>
<div id="m" role="dialog" aria-modal="true" aria-labelledby="mt" style="display:none">
<h2 id="mt">Settings</h2><label><input type="checkbox"> Dark mode</label>
<button onclick="document.getElementById('m').style.display='none'">Close</button></div></body>"""


def test_an_open_modal_dialog_comes_first_and_alone(api: httpx.Client, site: str) -> None:
    page = ok_json(api.post("/v1/pages", json={"url": f"{site}/modal.html"}), 201)
    before = ok_json(api.post(f"/v1/pages/{page['id']}/snapshot"))["text"]
    assert "Link 39" in before and "Modal dialog" not in before
    ok_json(_act(api, page["id"], action="click", ref=ref_of(before, '- button "Open settings"')))
    during = ok_json(api.post(f"/v1/pages/{page['id']}/snapshot"))["text"]
    assert '# Modal dialog "Settings" is open: the rest of the page (' in during
    assert '- checkbox "Dark mode"' in during and "Link 3" not in during
    ok_json(_act(api, page["id"], action="click", ref=ref_of(during, '- button "Close"')))
    after = ok_json(api.post(f"/v1/pages/{page['id']}/snapshot"))["text"]
    assert "Link 39" in after and "# Modal" not in after


def test_a_script_runs_steps_and_stops_at_the_failing_one(api: httpx.Client, site: str, app_page: str) -> None:
    snap = ok_json(api.post(f"/v1/pages/{app_page}/snapshot"))["text"]
    add, name = ref_of(snap, '- button "Add row"'), ref_of(snap, '- textbox "Name"')
    steps = [{"action": "fill", "ref": name, "text": "Grace"}, {"action": "click", "ref": add},
             {"action": "click", "ref": add}, {"action": "screenshot"}, {"action": "click", "ref": "e99999"},
             {"action": "click", "ref": add}]  # fmt: skip
    done = ok_json(api.post(f"/v1/pages/{app_page}/script", json={"steps": steps, "snapshot": {"max_tokens": 800}}))
    assert [r["ok"] for r in done["results"]] == [True, True, True, True, False]
    assert done["stopped_at"]["step"] == 4 and "ref e99999 is unknown" in done["stopped_at"]["reason"]
    assert done["results"][3]["url"].endswith("/image")
    final = done["snapshot"]
    assert "Row 1" in final["text"] and "Row 2" not in final["text"] and final["metadata"]["tokens"] <= 800
    moved = ok_json(api.post(f"/v1/pages/{app_page}/script", json={"steps": [
        {"action": "click", "ref": ref_of(final["text"], '- link "Next page"')}, {"action": "click", "ref": add}]}))
    assert moved["stopped_at"] == {"step": 0, "reason": f"the page navigated to {site}/next.html: the next steps' refs are stale"}
    bad = api.post(f"/v1/pages/{app_page}/script", json={"steps": [{"action": "jump"}]})
    assert bad.status_code == 400 and "step 0" in bad.json()["error"]["message"]


def test_a_script_step_that_cannot_run_is_refused_before_any_step_runs(api: httpx.Client, app_page: str) -> None:
    snap = ok_json(api.post(f"/v1/pages/{app_page}/snapshot"))["text"]
    add, name = ref_of(snap, '- button "Add row"'), ref_of(snap, '- textbox "Name"')
    steps = [{"action": "click", "ref": add}, {"action": "fill", "ref": name}]
    refused = api.post(f"/v1/pages/{app_page}/script", json={"steps": steps})
    assert refused.status_code == 400 and refused.json()["error"]["message"] == "step 1: fill needs text", refused.text
    assert "Row 0" not in ok_json(api.post(f"/v1/pages/{app_page}/snapshot"))["text"]  # the click did not run


def test_input_a_control_cannot_take_is_a_400_naming_it(api: httpx.Client, site: str) -> None:
    page = ok_json(api.post("/v1/pages", json={"url": f"{site}/forms.html"}), 201)["id"]
    snap = ok_json(api.post(f"/v1/pages/{page}/snapshot"))["text"]
    letters = _act(api, page, action="fill", ref=ref_of(snap, '- spinbutton "Quantity"'), text="ten")
    assert letters.status_code == 400 and letters.json()["error"]["details"]["field"] == "text", letters.text
    assert 'spinbutton "Quantity"' in letters.json()["error"]["message"]
    assert "takes a number" in letters.json()["error"]["message"]
    missing = _act(api, page, action="select", ref=ref_of(snap, '- combobox "Size"'), values=["Huge"])
    assert missing.status_code == 400 and missing.json()["error"]["details"]["field"] == "values", missing.text
    assert 'combobox "Size"' in missing.json()["error"]["message"] and '"Small", "Large"' in missing.json()["error"]["message"]
    typed = ok_json(_act(api, page, action="fill", ref=ref_of(snap, '- spinbutton "Quantity"'), text="10"))
    assert typed["effects"]["controls"] == [{"control": 'spinbutton "Quantity"', "value": "10"}]


def test_dialogs_are_answered_as_told_and_uploads_stay_in_their_directory(
    daemon: Daemon, api: httpx.Client, site: str
) -> None:
    page = ok_json(api.post("/v1/pages", json={"url": f"{site}/forms.html"}), 201)["id"]
    snap = ok_json(api.post(f"/v1/pages/{page}/snapshot"))["text"]
    confirm = ok_json(_act(api, page, action="click", ref=ref_of(snap, '- button "Confirm"'), snapshot={}))
    assert confirm["effects"]["dialogs"] == [{"type": "confirm", "message": "Sure?", "answer": "dismissed"}]
    assert "no" in confirm["snapshot"]["text"]
    told = ok_json(_act(api, page, action="dialog", accept=True, text="Ada"))
    assert "accepted with 'Ada'" in told["note"]
    asked = ok_json(_act(api, page, action="click", ref=ref_of(snap, '- button "Name?"'), snapshot={}))
    assert asked["effects"]["dialogs"][0]["answer"] == "accepted" and "Ada" in asked["snapshot"]["text"]
    uploads = daemon.data_dir / "uploads"
    uploads.mkdir(parents=True, exist_ok=True)
    (uploads / "report.txt").write_text("hello")
    snap = ok_json(api.post(f"/v1/pages/{page}/snapshot"))["text"]
    file_ref = ref_of(snap, '- button "File"')
    done = ok_json(_act(api, page, action="upload", ref=file_ref, files=["report.txt"], snapshot={}))
    assert "report.txt" in done["snapshot"]["text"]
    for outside in ["../token", "/etc/passwd", "missing.txt"]:
        refused = _act(api, page, action="upload", ref=file_ref, files=[outside])
        assert refused.status_code == 400 and "upload directory" in refused.json()["error"]["message"]


FRAMES = """<!doctype html><title>Frames</title>
<iframe srcdoc="<button onclick=&quot;this.textContent='Pressed in frame'&quot;>Frame button</button>"></iframe>
<shadow-box></shadow-box>
<script>
customElements.define('shadow-box', class extends HTMLElement {
  connectedCallback() {
    const root = this.attachShadow({mode: 'open'});
    root.innerHTML = '<button>Shadow button</button>';
    root.querySelector('button').onclick = () => root.querySelector('button').textContent = 'Shadow pressed';
  }
});
</script>
<a href="/report.csv" download>Get report</a>
<button onclick="fetch('/slow').then(r => r.text()).then(t => document.getElementById('x').textContent = t)">Load</button>
<p id="x">waiting</p>"""


def test_frames_shadow_dom_downloads_and_slow_requests(api: httpx.Client, site: str) -> None:
    page = ok_json(api.post("/v1/pages", json={"url": f"{site}/frames.html"}), 201)["id"]
    snap = ok_json(api.post(f"/v1/pages/{page}/snapshot"))["text"]
    frame_ref = ref_of(snap, '- button "Frame button"')
    assert frame_ref.startswith("f")  # a ref inside the iframe
    ok_json(_act(api, page, action="click", ref=frame_ref))
    ok_json(_act(api, page, action="click", ref=ref_of(snap, '- button "Shadow button"')))
    after = ok_json(api.post(f"/v1/pages/{page}/snapshot"))["text"]
    assert '- button "Pressed in frame"' in after and '- button "Shadow pressed"' in after
    downloaded = ok_json(_act(api, page, action="click", ref=ref_of(after, '- link "Get report"')))
    (kept,) = downloaded["effects"]["downloads"]
    assert {k: kept[k] for k in ("url", "filename", "state")} == {
        "url": f"{site}/report.csv", "filename": "report.csv", "state": "saved"}  # fmt: skip
    name = kept["get"].rsplit("/", 1)[1]
    assert kept["get"] == f"/v1/pages/{page}/downloads/{name}" and name.endswith("-report.csv")
    assert kept["path"].endswith(f"/pages/{page}/downloads/{name}")
    served = api.get(kept["get"])
    assert served.status_code == 200 and served.content == b"a,b\n1,2\n"
    assert api.get(f"/v1/pages/{page}/downloads/..%2Fhistory.jsonl").status_code == 404
    loaded = ok_json(_act(api, page, action="click", ref=ref_of(after, '- button "Load"'), snapshot={}))
    assert "slow answer" in loaded["snapshot"]["text"], "the action settled until its request ended"
