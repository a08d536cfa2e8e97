"""GET /v1/terminals/{id}/screen and act's `screen` options over HTTP: the app in process, real PTYs."""
from __future__ import annotations

import httpx
import orjson
import pytest

from lookout.core.tokens import count_tokens

# Row 0 plain, row 1 empty, row 2 bold red "alert", row 3 a blue background, row 4 "end"; then the cursor
# waits at the end of row 4.
DRAWING = r"printf 'plain row\n\n\033[1;31malert\033[0m here\n\033[44m    \033[0m\nend'; exec sleep 60"


@pytest.fixture
def api(app_api: httpx.Client) -> httpx.Client:
    """Every test here runs against the app in process: none needs the daemon's process."""
    return app_api


def _terminal(api: httpx.Client, command: list[str], cols: int = 40, rows: int = 8) -> str:
    r = api.post("/v1/terminals", json={"command": command, "cols": cols, "rows": rows})
    assert r.status_code == 201, r.text
    tid = r.json()["id"]
    settled = api.post(f"/v1/terminals/{tid}/wait", json={"until": {"stable_ms": 300}, "since": 0, "timeout_ms": 10000})
    assert settled.json()["matched"], settled.text
    return tid


def _screen(api: httpx.Client, tid: str, **params: object) -> dict:
    r = api.get(f"/v1/terminals/{tid}/screen", params=params)
    assert r.status_code == 200, r.text
    body = r.json()
    assert body["tokens"] == count_tokens(r.text)  # the response counts its own compact JSON
    assert ": " not in r.text[:200] and "\n" not in r.text  # compact, never pretty-printed
    return body


def test_layers_viewports_and_budget_over_http(api: httpx.Client) -> None:
    tid = _terminal(api, ["sh", "-c", DRAWING])

    default = _screen(api, tid)
    assert default["text"][:5] == ["plain row", "", "alert here", "", "end"]
    assert default["cursor"] == {"left": 3, "top": 4, "visible": True}
    assert default["viewport"] == {"mode": "full"} and default["terminal"] == {"width": 40, "height": 8}
    assert default["state"] == "running" and default["raw_offset"] > 0 and default["delta_cursor"] >= 0
    assert "fgColors" not in default

    every = _screen(api, tid, layers="text,fgColors,bgColors,bold", encoding="runs")
    palette = every["colorPalette"]
    assert [(start, end, palette[symbol]) for start, end, symbol in every["fgColors"][2]] == [(0, 5, "#cd0000")]
    assert [(start, end, palette[symbol]) for start, end, symbol in every["bgColors"][3]] == [(0, 4, "#0000ee")]
    assert every["bold"][2] == [[0, 5, "b"]] and every["styleLegend"] == {"b": "bold"}
    assert "cursor" not in every

    compact = _screen(api, tid, layers="text,bgColors", compact="true", encoding="cells")
    assert compact["rows"] == [0, 2, 3, 4]
    assert compact["text"] == ["plain row", "alert here", "", "end"]

    region = _screen(api, tid, region="6,2,100,2")
    assert region["viewport"] == {"mode": "region", "left": 6, "top": 2, "width": 34, "height": 2}
    assert region["text"] == ["here", ""]
    assert (region["cursor"]["relLeft"], region["cursor"]["relTop"]) == (-3, 2)

    near = _screen(api, tid, around_cursor=1)
    assert near["viewport"]["top"] == 3 and near["text"] == ["", "end", ""]

    words = "for i in 1 2 3 4 5 6 7; do echo row $i lorem ipsum dolor sit; done; exec sleep 60"
    wordy = _terminal(api, ["sh", "-c", words])
    full = _screen(api, wordy)
    budget = _screen(api, wordy, max_tokens=full["tokens"] - 20)
    assert budget["tokens"] <= full["tokens"] - 20 and budget["omitted"]["rows"] > 0
    assert budget["rows"][0] == 0 and budget["rows"][-1] == 7  # the head and the tail stay

    text = api.get(f"/v1/terminals/{tid}/screen", params={"format": "text", "layers": "text,cursor,bold"})
    assert text.status_code == 200 and text.headers["content-type"].startswith("text/plain")
    lines = text.text.splitlines()
    assert lines[0].startswith("# screen 40x8 viewport=full cursor=3,4 ")
    assert f"tokens={count_tokens(text.text)}" in lines[0]
    assert lines[1:4] == ["plain row", "", "alert here"] and "# bold: b=bold" in lines


def test_bad_screen_options_are_clear_errors(api: httpx.Client) -> None:
    tid = _terminal(api, ["sh", "-c", "echo hi; exec sleep 60"])
    for params, status, needle in (
        ({"layers": "text,colour"}, 400, "valid layers: text,cursor,fgColors,bgColors,styles,bold,italic,underline"),
        ({"region": "1,2,3"}, 400, "left,top,width,height"),
        ({"region": "0,0,5,5", "around_cursor": 2}, 400, "exclude each other"),
        ({"around_cursor": -1}, 422, "around_cursor"),
        ({"encoding": "zip"}, 422, "encoding"),
        ({"max_tokens": 0}, 422, "max_tokens"),
        ({"aroundCursor": 2}, 422, "aroundCursor"),
        ({"changed_since": 5}, 400, "cursor 5"),
    ):
        r = api.get(f"/v1/terminals/{tid}/screen", params=params)
        assert r.status_code == status, (params, r.text)
        assert needle in r.json()["error"]["message"], (params, r.text)
    far_away = _screen(api, tid, region="500,500,10,10")  # outside the screen: clipped, not an error
    assert far_away["text"] == [] and far_away["viewport"]["width"] == 0


def test_changed_since_and_act_screen_options(api: httpx.Client) -> None:
    tid = _terminal(api, ["bash", "--norc", "--noprofile"], rows=10)
    # until the screen is still, so that every change so far is in a delta before `before` is read
    api.post(f"/v1/terminals/{tid}/act", json={"input": {"text": "echo first\r"}, "until": {"stable_ms": 500}})
    before = _screen(api, tid)
    act = api.post(
        f"/v1/terminals/{tid}/act",
        json={
            "input": {"text": "echo second\r"},
            "until": {"regex": "^second"},
            "screen": {"changed_since": before["delta_cursor"], "layers": ["text", "cursor"]},
            "detail": True,
        },
    )
    assert act.status_code == 200, act.text
    screen = act.json()["screen"]
    assert 0 not in screen["rows"] and "second" in screen["text"]  # row 0 (the first prompt) did not change
    assert all(row >= before["cursor"]["top"] for row in screen["rows"])
    assert screen["tokens"] == count_tokens(orjson.dumps(screen).decode())

    compact = api.post(
        f"/v1/terminals/{tid}/act",
        json={"input": {"keys": ["Enter"]}, "screen": {"compact": True, "region": [0, 0, 4, 10], "format": "text"}},
    )
    assert compact.status_code == 200, compact.text
    lines = compact.json()["screen"].splitlines()
    assert lines[0].startswith("# screen 40x10 viewport=region:0,0,4x10")
    assert lines[1].startswith("0: ") and all(": " in line for line in lines[1:])
    bad = api.post(f"/v1/terminals/{tid}/act", json={"input": {"text": "echo never\r"}, "screen": {"layers": "nope"}})
    assert bad.status_code == 400 and "valid layers" in bad.json()["error"]["message"]
    assert "never" not in "\n".join(_screen(api, tid)["text"])  # a bad screen option sends nothing
