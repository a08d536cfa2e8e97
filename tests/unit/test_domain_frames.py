"""What terminals, devices and pages record in the timeline (pure builders)."""
from __future__ import annotations

from dataclasses import replace
from typing import Any

import pytest

from lookout.browser.action_kinds import Click, Type
from lookout.browser.frames import action_frame, snapshot_frame
from lookout.core.errors import BadInput
from lookout.device.frames import device_frame, failed_action_frame
from lookout.terminal.blocks.blocks import Block
from lookout.terminal.frames import (
    TAIL_BYTES,
    block_frame,
    block_tail,
    exit_frame,
    input_frame,
    output_tail,
    screen_frame,
    visible,
)
from lookout.terminal.input.steps import InputStep
from lookout.terminal.screen.engines.base import Cursor
from lookout.terminal.screen.frame_screens import Recorded
from lookout.terminal.screen.layers import Region, ScreenData, ViewOptions


def test_input_is_shown_as_typed_and_hidden_input_is_not_recorded() -> None:
    frame = input_frame("t1", [InputStep(text="ls -la\r", keys=("C-c",))], hidden=False)
    assert frame.resource == "terminal:t1" and frame.kind == "action"
    assert frame.full == "typed `ls -la⏎`; pressed C-c"
    secret = input_frame("t1", [InputStep(text="hunter2\r")], hidden=True)
    assert "hunter2" not in secret.full + secret.line + str(secret.data)
    assert visible("a\x1b[A\x03\t") == "a␛[A^C⇥"


def _screen(text: list[str], cursor: tuple[int, int], **data: Any) -> ScreenData:
    return ScreenData(cols=80, rows=len(text), cursor=Cursor(col=cursor[1], row=cursor[0]), text=text,
                      row_cells=lambda row: [], **data)  # fmt: skip


def test_screen_frame_drops_blank_rows_and_names_the_cursor_line() -> None:
    describe = {"cols": 80, "rows": 5, "state": "idle", "cwd": "/src", "title": "", "raw_size": 42}
    frame = screen_frame("t1", _screen(["$ make", "ok", "$ ", "", ""], (2, 2)), describe, ViewOptions(), 0)
    assert frame.full == "screen 80x5, idle, cursor row 2 col 2:\n$ make\nok\n$"
    assert frame.line.endswith("`$`") and frame.subject == "screen"
    assert frame.refs == {"raw_offset": 42, "view": {"layers": ["text", "cursor"]}, "answer": {}}


def test_screen_frame_keeps_what_rebuilds_the_answer() -> None:
    """The view asked for, and what a replay cannot know: the state and delta cursor of the answer, the rows a
    changed_since read returned, how many scrollback lines the screen gave."""
    describe = {"cols": 80, "rows": 3, "state": "running", "title": "", "raw_size": 7}
    data = _screen(["a", "b", "c"], (0, 1), scrollback=["old 1", "old 2"], changed_rows={2, 0},
                   extra={"state": "running", "raw_offset": 7, "delta_cursor": 120})  # fmt: skip
    options = ViewOptions(layers=("text", "fgColors"), region=Region(1, 0, 10, 2), max_tokens=300, format="text")
    frame = screen_frame("t1", data, describe, options, 50)
    assert frame.refs == {
        "raw_offset": 7,
        "view": {"layers": ["text", "fgColors"], "region": [1, 0, 10, 2], "max_tokens": 300, "format": "text",
                 "scrollback": 50},
        "answer": {"state": "running", "delta_cursor": 120, "scrollback_lines": 2, "changed_rows": [0, 2]},
    }  # fmt: skip
    recorded = Recorded.from_refs(frame.refs)
    assert recorded is not None and recorded.options == options and recorded.lines == 2
    assert recorded.changed_rows == {0, 2} and recorded.note is None
    assert recorded.extra == {"state": "running", "raw_offset": 7, "delta_cursor": 120}
    old = Recorded.from_refs({"raw_offset": 7})
    assert old is not None and old.options == ViewOptions() and old.note is not None, "an old frame says so"
    assert Recorded.from_refs({"block": 3}) is None
    with pytest.raises(BadInput):
        Recorded.from_refs({"raw_offset": 7, "view": {"layers": ["text"]}, "answer": {"changed_rows": "all"}})


def test_a_failed_command_is_pinned_with_its_last_lines() -> None:
    block = Block(n=3, command="make test", exit_code=2, cwd="/src", started_at=100.0, ended_at=101.5,
                  duration_ms=1500, start=0, end=10)  # fmt: skip
    tail = output_tail(b"\x1b[31mcompiling\x1b[0m\r\nstep 1\r\n" + b"line\r\n" * 10 + b"FAILED: 2 tests\r\n")
    assert tail.split("\n")[-1] == "FAILED: 2 tests" and len(tail.split("\n")) == 5 and "\x1b" not in tail
    frame = block_frame("t1", block, tail, "agent-a")
    assert frame.pinned and frame.agent == "agent-a" and frame.kind == "event"
    assert frame.line == "`make test` exited 2 in /src" and frame.full.endswith("FAILED: 2 tests")
    assert frame.data == {"command": "make test", "exit_code": 2, "cwd": "/src", "tail": tail}
    assert frame.refs == {"block": 3, "raw": {"start": 0, "end": 10}}
    ok = block_frame("t1", replace(block, exit_code=0), tail, "agent-a")
    assert not ok.pinned and "FAILED" not in ok.full
    assert exit_frame("t1", 1, False, "a").pinned and not exit_frame("t1", -15, True, "a").pinned


def test_a_block_tail_is_read_from_the_end_of_the_block_only() -> None:
    output = b"x" * (2 * TAIL_BYTES) + b"\r\nlast line\r\n"
    journal = b"$ make\r\n" + output + b"$ "
    block = Block(n=1, command="make", exit_code=1, cwd="/", started_at=1.0, ended_at=2.0, duration_ms=1000,
                  start=8, end=8 + len(output))  # fmt: skip
    reads: list[tuple[int, int]] = []

    def read_raw(offset: int, limit: int) -> bytes:
        reads.append((offset, limit))
        return journal[offset : offset + limit]

    assert block_tail(block, read_raw).endswith("last line")
    assert reads == [(8 + len(output) - TAIL_BYTES, TAIL_BYTES)]
    short = replace(block, end=8 + 6)
    assert block_tail(short, read_raw) == "xxxxxx" and reads[-1] == (8, 6)


def test_device_frames() -> None:
    shot = device_frame({"serial": "emu-1", "kind": "observation", "what": "screenshot", "obs_id": "o_1",
                         "image": {"width": 462, "height": 1000}})  # fmt: skip
    assert shot.full == "screenshot 462x1000 (obs o_1): GET /v1/devices/emu-1/observations/o_1/image"
    elements = [{"index": 1, "class": "Button", "text": "Log in"}, {"index": 2, "class": "View"}]
    ui = device_frame({"serial": "emu-1", "kind": "observation", "what": "ui", "obs_id": "o_2"}, elements, "com.x")
    assert ui.full.startswith("UI of com.x (obs o_2):\n{") and ui.data == {"app": "com.x", "screen": "Log in"}
    with_ui = device_frame({"serial": "emu-1", "kind": "observation", "what": "screenshot", "obs_id": "o_3",
                            "image": {"width": 462, "height": 1000}}, elements, "com.x")  # fmt: skip
    assert with_ui.full.endswith('2 elements:\n{"index":1,"class":"Button","text":"Log in"}\n{"index":2,"class":"View"}')
    tap = device_frame({"serial": "emu-1", "kind": "action", "what": "tap", "device_point": [540, 1575],
                        "point": [225, 656], "element": {"index": 1, "class": "Button", "text": "Log in"}})  # fmt: skip
    assert tap.full == "tapped element 1 (Button 'Log in') at image point [225, 656] (device point [540, 1575])"
    assert tap.kind == "action"
    row = device_frame({"serial": "emu-1", "kind": "action", "what": "long_press", "device_point": [360, 363],
                        "point": [243, 245], "held_ms": 800,
                        "element": {"index": 45, "class": "RelativeLayout", "inner_text": "Ana | 22:37"}})  # fmt: skip
    assert row.full == ("long-pressed (800 ms) element 45 (RelativeLayout 'Ana | 22:37') at image point [243, 245] "
                        "(device point [360, 363])")
    bare = device_frame({"serial": "emu-1", "kind": "action", "what": "tap", "device_point": [1, 2], "point": [0, 1]})
    assert bare.full == "tapped at image point [0, 1] (device point [1, 2])"
    failed = failed_action_frame("emu-1", "tap", "the device is offline")
    assert failed.pinned and failed.full == "tap failed: the device is offline"


def test_page_frames() -> None:
    action = Click(ref="e5")
    result = {"url": "http://x/b", "effects": {"navigation": {"url": "http://x/b"},
                                               "console": [{"level": "error", "text": "boom"}]}}  # fmt: skip
    frame = action_frame("p1", action, result, None)
    assert frame.pinned and frame.line == "click e5 → http://x/b (1 errors)" and '"boom"' in frame.full
    quiet = action_frame("p1", action, {"url": "http://x/a", "effects": {}}, None)
    assert not quiet.pinned and quiet.full == "click e5 at http://x/a: no visible effect"
    failed = action_frame("p1", Type(ref="e9", text="hi"), None, "ref e9 is stale")
    assert failed.pinned and failed.full == "type e9 'hi' failed: ref e9 is stale"
    snap = snapshot_frame("p1", {"obs_id": "o_3", "url": "http://x/b", "title": "B", "text": "# Page: B",
                                 "metadata": {"tokens": 5}}, "snapshot")  # fmt: skip
    assert snap.full == "# Page: B" and snap.data == {"url": "http://x/b"} and snap.subject == "snapshot"
