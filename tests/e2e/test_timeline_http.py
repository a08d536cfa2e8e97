"""The timeline end to end: a terminal, a page and a device driven through the daemon (a subprocess), then
their history asked for within budgets."""
from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from lookout.core.tokens import count_tokens
from tests.support.adb_fake import ui_dump, ui_node
from tests.support.http import ok_json
from tests.support.site import serve_directory

UI_XML = ui_dump(ui_node("TextView", "Inbox zero", "title", (0, 0, 1080, 300), package="com.mail"))


@pytest.fixture
def site(tmp_path: Path) -> Iterator[str]:
    root = tmp_path / "site"
    root.mkdir()
    (root / "a.html").write_text("<title>First</title><h1>First page</h1><a href='b.html'>Next</a>")
    (root / "b.html").write_text("<title>Second</title><h1>Checkout done</h1><p>Order 4711 confirmed</p>")
    with serve_directory(root) as url:
        yield url


@pytest.fixture
def lookout(adb_api: httpx.Client) -> httpx.Client:
    adb_api.headers["X-Lookout-Agent"] = "tester"
    return adb_api


def _command(api: httpx.Client, tid: str, line: str) -> dict[str, Any]:
    body = {"input": {"text": line, "keys": ["Enter"]}, "until": {"block_end": True}, "timeout_ms": 10000}
    return ok_json(api.post(f"/v1/terminals/{tid}/act", json=body))


def _check_attribution(context: dict[str, Any], frames: list[int]) -> None:
    """Messages in order, each covering its own range; with the elided ranges they cover every frame."""
    covered: list[int] = []
    for message in context["messages"]:
        span = message["source_frames"]
        covered.extend(s for s in frames if span["from"] <= s <= span["to"])
    for gap in context["metadata"]["elided"]:
        if gap["message"] is None:
            covered.extend(s for s in frames if gap["from"] <= s <= gap["to"])
    assert sorted(covered) == frames


def test_history_of_a_terminal_a_page_and_a_device_within_budgets(
    lookout: httpx.Client, site: str, make_device: Callable[..., Any], tmp_path: Path
) -> None:
    api = lookout
    home = tmp_path / "home"
    home.mkdir()
    tid = ok_json(api.post("/v1/terminals", json={"command": ["bash"], "cwd": str(home), "env": {"HOME": str(home)}}), 201)["id"]
    ok_json(api.post(f"/v1/terminals/{tid}/wait", json={"until": {"state_in": ["idle"]}, "timeout_ms": 10000}))
    for i in range(12):
        _command(api, tid, f"seq {i * 40} | tail -n 30")
    failed = _command(api, tid, "ls /no-such-dir-for-lookout")
    assert failed["ended"] == "block_end" and failed["exit_code"] == 2

    page = ok_json(api.post("/v1/pages", json={"url": f"{site}/a.html"}), 201)["id"]
    ok_json(api.post(f"/v1/pages/{page}/snapshot", json={}))
    ok_json(api.post(f"/v1/pages/{page}/action", json={"action": "navigate", "url": f"{site}/b.html"}))
    ok_json(api.post(f"/v1/pages/{page}/snapshot", json={}))

    fake, serial = make_device()
    fake.set_ui(UI_XML)
    ok_json(api.post(f"/v1/devices/{serial}/screenshot", json={}))
    ok_json(api.post(f"/v1/devices/{serial}/tap", json={"x": 100, "y": 200}))
    last_ui = ok_json(api.get(f"/v1/devices/{serial}/ui"))

    listed = ok_json(api.get("/v1/timeline/frames", params={"limit": 2000}))["frames"]
    seqs = [f["seq"] for f in listed]
    assert seqs == list(range(1, len(seqs) + 1)) and len(seqs) > 30
    assert {f["agent"] for f in listed} == {"tester"}
    resources = {f["resource"] for f in listed}
    assert {f"terminal:{tid}", f"page:{page}", f"device:{serial}"} <= resources
    error = next(f for f in listed if f["category"] == "command" and f["data"]["exit_code"] == 2)
    assert error["pinned"] and error["role"] == "system" and "No such file" in error["data"]["tail"]

    for budget in (500, 2000, 8000):
        context = ok_json(api.get("/v1/timeline/context", params={"budget": budget}))
        text = "\n".join(m["content"] for m in context["messages"])
        total = sum(count_tokens(m["content"]) for m in context["messages"])
        assert total == context["metadata"]["total_tokens"] <= budget
        assert "exited 2" in text, budget  # the last exit code
        assert f"{site}/b.html" in text, budget  # the current URL
        assert last_ui["obs_id"] in text and "Inbox zero" in text, budget  # the last device screen
        _check_attribution(context, seqs)
        if budget == 500:
            assert context["metadata"]["elided"], "a small budget elides"
            handle = next(m for m in context["messages"] if "elided" in m["content"])
            assert "GET /v1/timeline/extract?from=" in handle["content"]

    only_page = ok_json(api.get("/v1/timeline/context", params={"budget": 2000, "resource": f"page:{page}"}))
    assert all(f"page:{page}" in m["content"] for m in only_page["messages"])
    assert "Order 4711 confirmed" in "\n".join(m["content"] for m in only_page["messages"])
    assert ok_json(api.get("/v1/timeline/context", params={"agent": "someone-else"}))["messages"] == []

    extracted = ok_json(api.get("/v1/timeline/extract", params={"from": error["seq"], "to": error["seq"]}))
    assert extracted["source_frames"] == {"from": error["seq"], "to": error["seq"]}
    assert "No such file" in extracted["content"] and extracted["tokens"] == count_tokens(extracted["content"])


def test_bad_timeline_queries_are_clear_errors(app_api: httpx.Client) -> None:
    assert app_api.get("/v1/timeline/context", params={"budget": 0}).status_code == 422
    r = app_api.get("/v1/timeline/extract", params={"from": 5, "to": 2})
    assert r.status_code == 400 and "before" in r.json()["error"]["message"]
    assert app_api.get("/v1/timeline/extract", params={"from": 1}).status_code == 422
    empty = ok_json(app_api.get("/v1/timeline/context", params={"budget": 100}))
    assert empty["messages"] == [] and empty["metadata"]["total_tokens"] == 0
