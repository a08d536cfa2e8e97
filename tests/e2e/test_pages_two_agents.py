"""Two agents on one page (issue 44, item 7), the daemon as a subprocess with real headless Chromium: a ref from
a snapshot taken before another agent's action is refused (409 with why) when its element went or changed, and
let through when it did not; each action's effects are its own, listed once under the agent that acted, even
when the two act at once; the page's listing says who acted last; a page's lease refuses the other agent."""
from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from tests.conftest import Daemon
from tests.support.http import ok_json
from tests.support.pages import ref_of
from tests.support.site import QuietHandler, serve_directory

A = {"X-Lookout-Agent": "agent-A"}
B = {"X-Lookout-Agent": "agent-B"}
BOARD = """<!doctype html><html><head><title>Board</title></head><body>
<ul id=list><li>Report <button onclick="console.warn('opened report')">Open report</button></li></ul>
<button onclick="document.getElementById('list').remove(); console.warn('B cleared')">Clear all</button>
<button id=save onclick="console.warn('saved')">Save</button>
<button onclick="document.getElementById('save').disabled = true; console.warn('B locked')">Lock</button>
<button onclick="console.warn('B noted')">Note</button>
<button onclick="fetch('/slow').then(() => console.warn('A slow done')); console.warn('A slow start')">Slow</button>
<button onclick="console.warn('B quick')">Quick</button>
</body></html>"""


class _Slow(QuietHandler):
    def do_GET(self) -> None:
        if self.path != "/slow":
            super().do_GET()
            return
        import time

        time.sleep(1.0)
        self.send_response(200)
        self.send_header("Content-Length", "2")
        self.end_headers()
        self.wfile.write(b"ok")


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    root: Path = tmp_path_factory.mktemp("site")
    (root / "board.html").write_text(BOARD)
    with serve_directory(root, _Slow) as url:
        yield url


def _open(api: httpx.Client, site: str) -> str:
    return ok_json(api.post("/v1/pages", json={"url": f"{site}/board.html"}), 201)["id"]


def _snapshot(api: httpx.Client, pid: str, agent: dict[str, str]) -> str:
    return ok_json(api.post(f"/v1/pages/{pid}/snapshot", json={}, headers=agent))["text"]


def _click(api: httpx.Client, pid: str, ref: str, agent: dict[str, str]) -> httpx.Response:
    return api.post(f"/v1/pages/{pid}/action", json={"action": "click", "ref": ref}, headers=agent)


def _warnings(answer: dict[str, Any]) -> list[str]:
    return [c["text"] for c in answer["effects"].get("console", [])]


def test_a_ref_whose_element_another_agent_removed_is_refused_with_why(api: httpx.Client, site: str) -> None:
    pid = _open(api, site)
    mine = _snapshot(api, pid, A)
    theirs = _snapshot(api, pid, B)
    assert _warnings(ok_json(_click(api, pid, ref_of(theirs, '- button "Clear all"'), B))) == ["B cleared"]
    refused = _click(api, pid, ref_of(mine, '- button "Open report"'), A)
    assert refused.status_code == 409, refused.text
    message = refused.json()["error"]["message"]
    assert "no longer on the page" in message and "'agent-B'" in message and "click" in message, message
    listed = ok_json(api.get("/v1/pages"))["pages"][0]
    assert listed["last_action"]["agent"] == "agent-B" and listed["last_action"]["action"] == "click"


def test_a_ref_whose_element_another_agent_changed_is_refused_and_an_untouched_one_goes(
    api: httpx.Client, site: str
) -> None:
    pid = _open(api, site)
    mine = _snapshot(api, pid, A)
    theirs = _snapshot(api, pid, B)
    ok_json(_click(api, pid, ref_of(theirs, '- button "Lock"'), B))
    refused = _click(api, pid, ref_of(mine, '- button "Save"'), A)
    assert refused.status_code == 409, refused.text
    message = refused.json()["error"]["message"]
    assert "changed" in message and "disabled" in message and "agent-B" in message, message
    ok_json(_click(api, pid, ref_of(theirs, '- button "Note"'), B))
    opened = ok_json(_click(api, pid, ref_of(mine, '- button "Open report"'), A))  # checked: as A saw it
    assert _warnings(opened) == ["opened report"]
    assert ok_json(api.get(f"/v1/pages/{pid}"))["last_action"]["agent"] == "agent-A"


def test_effects_are_each_action_s_own_when_two_agents_act_at_once(
    daemon: Daemon, api: httpx.Client, site: str
) -> None:
    pid = _open(api, site)
    text = _snapshot(api, pid, A)
    _snapshot(api, pid, B)
    answers: dict[str, dict[str, Any]] = {}

    def act(name: str, label: str, agent: dict[str, str]) -> None:
        with daemon.client() as client:
            answers[name] = ok_json(_click(client, pid, ref_of(text, f'- button "{label}"'), agent))

    slow = threading.Thread(target=act, args=("A", "Slow", A))
    slow.start()
    act("B", "Quick", B)  # sent while A's action waits for its request
    slow.join()
    assert _warnings(answers["A"]) == ["A slow start", "A slow done"]
    assert _warnings(answers["B"]) == ["B quick"]
    frames = {name: api.get("/v1/timeline/frames", params={"agent": f"agent-{name}", "resource": f"page:{pid}", "text": True})
              .json()["frames"] for name in "AB"}  # fmt: skip
    shown = {name: json.dumps([f for f in got if f["kind"] == "action"]) for name, got in frames.items()}
    assert shown["A"].count("A slow done") == 1 and "B quick" not in shown["A"]
    assert shown["B"].count("B quick") == 1 and "A slow" not in shown["B"]


def test_a_held_page_refuses_the_other_agent(api: httpx.Client, site: str) -> None:
    pid = _open(api, site)
    text = _snapshot(api, pid, B)
    ok_json(api.post(f"/v1/pages/{pid}/lease", json={"duration_s": 300}, headers=A))
    refused = _click(api, pid, ref_of(text, '- button "Note"'), B)
    assert refused.status_code == 409 and refused.json()["error"]["code"] == "leased"
    assert "agent-A" in refused.json()["error"]["message"]
    script = api.post(f"/v1/pages/{pid}/script", json={"steps": [{"action": "reload"}]}, headers=B)
    assert script.status_code == 409
    assert api.delete(f"/v1/pages/{pid}", headers=B).status_code == 409
    assert ok_json(api.get("/v1/pages"))["pages"][0]["lease"]["holder"] == "agent-A"
    ok_json(_click(api, pid, ref_of(_snapshot(api, pid, A), '- button "Note"'), A))
    ok_json(api.delete(f"/v1/pages/{pid}/lease", headers=A))
    ok_json(_click(api, pid, ref_of(text, '- button "Note"'), B))
