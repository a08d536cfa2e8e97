"""GET /v1/timeline/frames/{seq} (issue: see what the agent saw): a frame with what the agent was given in it,
shown again: the terminal screen it read (rebuilt at that offset, even after the terminal moved on), the page
snapshot's text, the device screenshot with its elements; 410 when the record is gone, 404 for no frame."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from lookout.terminal.screen.engines import ENGINE_NAMES
from tests.conftest import Daemon


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


COLOURS = r"printf '\033[31mred\033[0m \033[1;44mbold on blue\033[0m \033[4;38;2;10;200;30mgreen\033[0m\n'"


def _act(api: httpx.Client, tid: str, text: str, screen: dict[str, Any], detail: bool = True) -> dict[str, Any]:
    """`text`, then until its command ended (or, for text that runs nothing, until the screen is still)."""
    until = {"block_end": True} if text.endswith("\r") else {"stable_ms": 300}
    r = api.post(f"/v1/terminals/{tid}/act", json={"input": {"text": text}, "until": until, "timeout_ms": 20000,
                                                     "screen": screen, "detail": detail})  # fmt: skip
    assert r.status_code == 200, r.text
    assert r.json()["ended"] in ("block_end", "stable"), r.text
    return r.json()


@pytest.fixture(params=ENGINE_NAMES)
def engine_api(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[httpx.Client]:
    """The daemon as a subprocess with each screen engine."""
    daemon = Daemon(tmp_path / "data", LOOKOUT_SCREEN_ENGINE=request.param).start()
    with daemon.client() as client:
        yield client
    daemon.finish()


def test_frames_give_back_the_act_answers_layer_by_layer(engine_api: httpx.Client, tmp_path: Path) -> None:
    """Each act answer's screen, with the layers, region, budget, scrollback and format it asked for, comes back
    from its frame as it was given (every layer, the header and the token count), after the terminal moved on;
    a frame whose scrollback reaches before the newest checkpoint replays from further back. Both engines."""
    api = engine_api
    tid = api.post("/v1/terminals", json={"command": "bash", "cols": 100, "rows": 12}).json()["id"]
    every = "text,cursor,fgColors,bgColors,styles,bold,italic,underline"
    answers = [
        _act(api, tid, COLOURS + "\r", {"layers": every}),
        _act(api, tid, "seq 1 30\r", {"layers": "text,fgColors,bgColors", "region": "0,2,8,6", "encoding": "cells"}),
        _act(api, tid, COLOURS + "\r", {"layers": "text,cursor,styles", "around_cursor": 2, "compact": True}),
        _act(api, tid, "seq 1 40\r", {"layers": "text,fgColors", "max_tokens": 60, "scrollback": 25}),
        _act(api, tid, COLOURS + "\r", {"layers": every, "format": "text"}),
        _act(api, tid, COLOURS + "\r", {"layers": "text,bgColors"}, detail=False),
    ]
    assert answers[3]["screen"]["omitted"], "the budget left rows out"
    cursor = answers[4]["wait"]["cursor"]
    # until the screen is still, so that every change so far is in a delta before the delta cursor is read
    api.post(f"/v1/terminals/{tid}/wait", json={"until": {"stable_ms": 700}, "timeout_ms": 10000})
    delta = api.get(f"/v1/terminals/{tid}/screen").json()["delta_cursor"]
    answers.append(_act(api, tid, "typed, not run", {"layers": "text,cursor", "changed_since": delta}))
    assert 0 not in answers[-1]["screen"]["rows"] and cursor > 0
    api.post(f"/v1/terminals/{tid}/input", json={"keys": ["C-u"]})
    # more than a checkpoint's worth of output, then fewer lines than the scrollback asked for
    big = "yes 0123456789012345678901234567890123456789012345678901234567890123456789 | head -n 8000; seq 1 300\r"
    answers.append(_act(api, tid, big, {"layers": "text", "scrollback": 2000, "max_tokens": 200_000}))
    assert len(answers[-1]["screen"]["scrollback"]) == 2000
    api.post(f"/v1/terminals/{tid}/act", json={"input": {"text": "clear; echo moved on\r"}, "until": {"block_end": True}})

    screens = [f for f in _frames(api, f"terminal:{tid}") if f["category"] == "terminal screen"]
    read_by_act = screens[: len(answers) + 1]
    del read_by_act[6]  # the GET /screen for the delta cursor
    for answer, frame in zip(answers, read_by_act, strict=True):
        shown = _shown(api, frame["seq"])
        assert shown.status_code == 200, shown.text
        observation = shown.json()["observation"]
        assert "incomplete" not in observation, observation["incomplete"]
        given, again = answer["screen"], observation["screen"]
        if isinstance(given, str):
            assert again == given
            continue
        for layer in ("text", "cursor", "fgColors", "bgColors", "styles", "bold", "italic", "underline",
                      "colorPalette", "styleLegend", "rows", "omitted", "scrollback"):  # fmt: skip
            assert again.get(layer) == given.get(layer), f"{layer} of frame {frame['seq']}"
        if "tokens" in given:  # a detailed answer: the whole screen, header and count included
            assert again == given
    assert "fgColors" in answers[0]["screen"] and "bgColors" in answers[5]["screen"]
    big_frame = read_by_act[-1]
    at = big_frame["refs"]["raw_offset"]
    kept = [int(p.stem) for p in (tmp_path / "data" / "terminals" / tid / "checkpoints").glob("*.json")]
    newest = max((offset for offset in kept if offset <= at), default=None)
    assert newest is not None, f"no checkpoint before offset {at} (checkpoints at {sorted(kept)})"
    replayed = _shown(api, big_frame["seq"]).json()["observation"]["replayed_bytes"]
    assert replayed > at - newest, (
        "the newest checkpoint left too few lines: the journal was replayed again from further back"
    )
