"""GET /v1/timeline/frames/{seq} (issue: see what the agent saw): a frame with what the agent was given in it,
shown again: the terminal screen it read (rebuilt at that offset, even after the terminal moved on), the page
snapshot's text, the device screenshot with its elements; 410 when the record is gone, 404 for no frame."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import httpx


def _frames(api: httpx.Client, resource: str) -> list[dict[str, Any]]:
    return api.get("/v1/timeline/frames", params={"resource": resource, "text": "true"}).json()["frames"]


def _shown(api: httpx.Client, seq: int) -> httpx.Response:
    return api.get(f"/v1/timeline/frames/{seq}")


def test_a_terminal_frame_shows_the_screen_the_agent_read_then(adb_api: httpx.Client) -> None:
    api = adb_api
    tid = api.post("/v1/terminals", json={"command": "bash", "cols": 60, "rows": 8}).json()["id"]
    first = api.post(f"/v1/terminals/{tid}/act", json={"input": {"text": "echo first-read\r"},
                                                         "until": {"regex": "^first-read"}}).json()  # fmt: skip
    api.post(f"/v1/terminals/{tid}/act", json={"input": {"text": "clear; echo later\r"}, "until": {"regex": "^later"}})
    screens = [f for f in _frames(api, f"terminal:{tid}") if f["category"] == "terminal screen"]
    then = next(f for f in screens if "first-read" in f["text"]["full"])
    shown = _shown(api, then["seq"])
    assert shown.status_code == 200, shown.text
    observation = shown.json()["observation"]
    assert observation["kind"] == "terminal screen" and observation["raw_offset"] == then["refs"]["raw_offset"]
    assert "first-read" in observation["screen"]["text"] and "later" not in observation["screen"]["text"]
    assert [row.rstrip() for row in observation["screen"]["text"]][: len(first["screen"]["text"])] == [
        row.rstrip() for row in first["screen"]["text"]
    ]
    typed = next(f for f in _frames(api, f"terminal:{tid}") if f["category"] == "terminal input")
    assert _shown(api, typed["seq"]).json()["observation"] is None, "an input frame shows no observation"
    assert api.delete(f"/v1/terminals/{tid}", params={"purge": "true"}).status_code == 200
    gone = _shown(api, then["seq"])
    assert gone.status_code == 410 and gone.json()["error"]["code"] == "gone", gone.text


def test_page_and_device_frames_show_their_observations(
    adb_api: httpx.Client, make_device: Callable[..., Any]
) -> None:
    api = adb_api
    page = api.post("/v1/pages", json={"url": "data:text/html,<title>Shop</title><button>Buy now</button>"}).json()
    snap = api.post(f"/v1/pages/{page['id']}/snapshot").json()
    frame = next(f for f in _frames(api, f"page:{page['id']}") if f["refs"].get("obs_id") == snap["obs_id"])
    observation = _shown(api, frame["seq"]).json()["observation"]
    assert observation["kind"] == "page snapshot" and observation["text"] == snap["text"]

    _, serial = make_device()
    shot = api.post(f"/v1/devices/{serial}/screenshot", json={"ui": True}).json()
    frame = next(f for f in _frames(api, f"device:{serial}") if f["refs"].get("obs_id") == shot["obs_id"])
    observation = _shown(api, frame["seq"]).json()["observation"]
    assert observation["kind"] == "device screenshot" and observation["image"] == shot["image"]
    assert observation["elements"] == shot["ui"]["elements"]
    assert api.get(observation["url"]).status_code == 200

    api.delete(f"/v1/pages/{page['id']}")
    assert _shown(api, 10**9).status_code == 404 and _shown(api, 0).status_code == 404
