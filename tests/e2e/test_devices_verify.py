"""A tap never lands on a screen the agent has not seen (issue 30), end to end: the daemon as a subprocess, a real
adb server, and the fake device showing real dumps of real apps (tests/data/ui_dumps) drawn into its screen
(tests.support.screens), so that what the device shows and what its dump says agree, as on a phone.

Each case the issue reported tapped the wrong thing and answered ok; here each is a 409 that says what changed,
and the fake's input log shows that nothing was sent. A tap on an unchanged screen still takes one call."""
from __future__ import annotations

import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

import httpx
from PIL import ImageDraw

from tests.conftest import Daemon
from tests.support.adb_fake import FakeDevice, ui_dump, ui_node
from tests.support.http import error_message, ok_json
from tests.support.mcp_client import shim, tool_text
from tests.support.screens import render_dump

DUMPS = Path(__file__).resolve().parents[1] / "data" / "ui_dumps"
WHATSAPP = "com.whatsapp/com.whatsapp.HomeActivity"
CHAT = "com.whatsapp/com.whatsapp.Conversation"
LIST = (48, 1415)
"""WhatsApp's chat list (its RecyclerView) spans these rows of the 720x1483 screen."""
ROW = 109
"""The height of one chat row."""
FIRST_ROW, SECOND_ROW = 45, 57
"""Elements of whatsapp_chats: the rows "+55 92 9316-0919 (você)" at [0,309][720,418] and "Amor Pim" below it."""


def _dump(name: str) -> str:
    return (DUMPS / f"{name}.xml").read_text()


def scrolled(xml: str, dy: int) -> str:
    """The chat list of `xml` scrolled by `dy` device pixels (its content moved up), as uiautomator would dump it:
    nodes inside the list moved and cut to it, those scrolled out of it with empty bounds."""

    def move(match: re.Match[str]) -> str:
        left, top, right, bottom = (int(v) for v in match.groups())
        if top < LIST[0] or bottom > LIST[1] or (top, bottom) == LIST:
            return match.group(0)
        top, bottom = max(top - dy, LIST[0]), min(bottom - dy, LIST[1])
        return f"[{left},{top}][{right},{bottom}]" if bottom > top else "[0,0][0,0]"

    return re.sub(r"\[(-?\d+),(-?\d+)\]\[(-?\d+),(-?\d+)\]", move, xml)


def _phone(make_device: Callable[..., Any]) -> tuple[FakeDevice, str]:
    fake, serial = make_device(size=(720, 1483))
    fake.show(_dump("whatsapp_chats"), WHATSAPP)
    return fake, serial


def _listing(api: httpx.Client, serial: str) -> dict[str, Any]:
    return ok_json(api.post(f"/v1/devices/{serial}/screenshot", json={"ui": True}))


def _center(shot: dict[str, Any], index: int) -> list[int]:
    return next(e["center"] for e in shot["ui"]["elements"] if e["index"] == index)


def test_an_unchanged_screen_is_tapped_in_one_call_and_the_answer_names_what_was_hit(
    adb_api: httpx.Client, make_device: Callable[..., Any]
) -> None:
    fake, serial = _phone(make_device)
    shot = _listing(adb_api, serial)
    tapped = ok_json(adb_api.post(f"/v1/devices/{serial}/tap", json={"element": FIRST_ROW}))
    assert tapped["observation"] == "latest" and tapped["obs_id"] == shot["obs_id"]
    # the row has no text of its own: the answer names it by the texts inside it, and by its resource id
    assert tapped["element"]["id"] == "contact_row_container" and "text" not in tapped["element"]
    assert tapped["element"]["inner_text"].startswith("Foto de Você | +55 92 9316-0919 (você)")
    assert tapped["device_point"] == [360, 363] and tapped["point"] == _center(shot, FIRST_ROW)
    at_point = ok_json(adb_api.post(f"/v1/devices/{serial}/tap", json={"x": 243, "y": 318, "obs_id": shot["obs_id"]}))
    assert at_point["observation"] == "named" and at_point["element"]["index"] == SECOND_ROW
    held = ok_json(adb_api.post(f"/v1/devices/{serial}/tap", json={"element": SECOND_ROW, "hold_ms": 800}))
    assert held["held_ms"] == 800
    assert fake.inputs() == [["tap", "360", "363"], ["tap", "360", "472"], ["swipe", "360", "472", "360", "472", "800"]]


def test_an_index_of_an_older_listing_after_a_newer_screenshot_is_refused(
    adb_api: httpx.Client, make_device: Callable[..., Any]
) -> None:
    """The listing was read, the list moved, the agent took a new screenshot of the same app and tapped an index of
    the old listing: by index alone, by index with the listing's obs_id, and by that listing's x,y."""
    fake, serial = _phone(make_device)
    listing = _listing(adb_api, serial)
    fake.show(scrolled(_dump("whatsapp_chats"), ROW))
    newer = ok_json(adb_api.post(f"/v1/devices/{serial}/screenshot", json={}))
    message = error_message(adb_api.post(f"/v1/devices/{serial}/tap", json={"element": SECOND_ROW}), 409)
    assert f"observation {newer['obs_id']} has no UI listing" in message
    message = error_message(adb_api.post(f"/v1/devices/{serial}/tap",
                                  json={"element": SECOND_ROW, "obs_id": listing["obs_id"]}), 409)  # fmt: skip
    assert "the list scrolled" in message and "up by" in message and "observe again" in message
    x, y = _center(listing, SECOND_ROW)
    message = error_message(adb_api.post(f"/v1/devices/{serial}/tap", json={"x": x, "y": y, "obs_id": listing["obs_id"]}),
                     409)  # fmt: skip
    assert "the list scrolled" in message
    assert fake.inputs() == []


def test_a_list_that_scrolled_by_itself_is_seen_before_the_tap(
    adb_api: httpx.Client, make_device: Callable[..., Any]
) -> None:
    fake, serial = _phone(make_device)
    _listing(adb_api, serial)
    fake.show(scrolled(_dump("whatsapp_chats"), ROW))  # new messages pushed the list up by one row
    message = error_message(adb_api.post(f"/v1/devices/{serial}/tap", json={"element": SECOND_ROW}), 409)
    assert re.search(r"the list scrolled: what was there is now up by 7[34] px", message), message
    assert fake.inputs() == []


def test_another_window_is_named(adb_api: httpx.Client, make_device: Callable[..., Any]) -> None:
    fake, serial = _phone(make_device)
    _listing(adb_api, serial)
    fake.show(_dump("wecom_chat"), CHAT)
    message = error_message(adb_api.post(f"/v1/devices/{serial}/tap", json={"element": FIRST_ROW}), 409)
    assert f"another window is in front: {CHAT} (observation" in message and f"showed {WHATSAPP}" in message
    assert fake.inputs() == []


def test_a_blinking_cursor_and_a_ticking_clock_do_not_stop_a_tap(
    adb_api: httpx.Client, make_device: Callable[..., Any]
) -> None:
    fake, serial = _phone(make_device)
    shot = _listing(adb_api, serial)
    image = render_dump(_dump("whatsapp_chats"), (720, 1483))
    draw = ImageDraw.Draw(image)
    draw.rectangle((160, 150, 162, 195), fill=(0, 0, 0))  # a text cursor in the search bar [0,129][720,216]
    draw.rectangle((560, 10, 600, 38), fill=(255, 255, 255))  # the clock in the status bar shows another minute
    fake.set_screen(image)
    search = next(e["index"] for e in shot["ui"]["elements"] if e.get("text", "").startswith("Pesquisar"))
    ok_json(adb_api.post(f"/v1/devices/{serial}/tap", json={"element": search}))
    ok_json(adb_api.post(f"/v1/devices/{serial}/tap", json={"element": SECOND_ROW}))
    assert len(fake.inputs()) == 2


def test_a_script_whose_first_tap_changes_the_window_stops_at_the_second(
    adb_api: httpx.Client, make_device: Callable[..., Any]
) -> None:
    fake, serial = _phone(make_device)
    _listing(adb_api, serial)
    fake.react((0, 309, 720, 418), _dump("wecom_chat"), CHAT)  # the first row opens a chat
    steps = [{"action": "tap", "element": FIRST_ROW}, {"action": "tap", "element": SECOND_ROW}]
    failed = adb_api.post(f"/v1/devices/{serial}/script", json={"steps": steps})
    assert failed.status_code == 409, failed.text
    error = failed.json()["error"]
    assert error["details"]["stopped_at"]["step"] == 1 and "another window is in front" in error["message"]
    assert [r["ok"] for r in error["details"]["results"]] == [True, False]
    assert fake.inputs() == [["tap", "360", "363"]]


def test_a_script_with_text_that_cannot_be_typed_in_its_third_step_sends_nothing(
    adb_api: httpx.Client, make_device: Callable[..., Any]
) -> None:
    fake, serial = _phone(make_device)
    _listing(adb_api, serial)
    steps = [{"action": "tap", "element": FIRST_ROW}, {"action": "key", "key": "BACK"},
             {"action": "type", "text": "olá"}]  # fmt: skip
    message = error_message(adb_api.post(f"/v1/devices/{serial}/script", json={"steps": steps}), 400)
    assert message.startswith("step 2 (type): character 'á'") and "no step was run" in message
    steps[2] = {"action": "tap", "x": 900, "y": 10}  # outside the 486x1000 image
    message = error_message(adb_api.post(f"/v1/devices/{serial}/script", json={"steps": steps}), 400)
    assert message.startswith("step 2 (tap): (900, 10) is outside the image (486x1000)")
    steps[2] = {"action": "key", "key": "JUMP"}
    assert "unknown key" in error_message(adb_api.post(f"/v1/devices/{serial}/script", json={"steps": steps}), 400)
    steps[2] = {"action": "tap", "element": 9999}
    assert "element 9999 is not in the listing" in error_message(
        adb_api.post(f"/v1/devices/{serial}/script", json={"steps": steps}), 400)
    assert fake.inputs() == []


def test_a_partly_visible_element_is_tapped_where_a_finger_reaches_it(
    adb_api: httpx.Client, make_device: Callable[..., Any]
) -> None:
    fake, serial = make_device(size=(1080, 2400))
    fake.show(ui_dump(ui_node("Button", "Below", "below", (100, 2300, 500, 2700), clickable=True),
                      ui_node("Button", "Above", "above", (100, -300, 500, 90), clickable=True)))  # fmt: skip
    shot = _listing(adb_api, serial)
    below, above = (e["index"] for e in shot["ui"]["elements"])
    tapped = ok_json(adb_api.post(f"/v1/devices/{serial}/tap", json={"element": below}))
    assert tapped["device_point"] == [300, 2350]  # the middle of the part on the screen, not of [2300, 2700]
    fake.set_bars(status=100, navigation=126)  # now the device lists its bars: the rest lies under them
    shot = _listing(adb_api, serial)
    for index in (below, above):
        message = error_message(adb_api.post(f"/v1/devices/{serial}/tap", json={"element": index}), 409)
        assert "too little of it on the screen outside the system bars" in message and "[0,100][1080,2274]" in message
    assert fake.inputs() == [["tap", "300", "2350"]]


def test_a_swipe_by_direction_stays_out_of_the_system_bars(
    adb_api: httpx.Client, make_device: Callable[..., Any]
) -> None:
    fake, serial = make_device(size=(1080, 2400))
    fake.set_bars(status=63, navigation=126)
    ok_json(adb_api.post(f"/v1/devices/{serial}/screenshot", json={}))
    for direction in ("up", "down"):
        ok_json(adb_api.post(f"/v1/devices/{serial}/swipe", json={"direction": direction, "distance": 0.95}))
    for argv in fake.inputs():
        ys = (int(argv[2]), int(argv[4]))
        assert all(63 <= y < 2400 - 126 for y in ys), argv  # never in the navigation bar: that is the Home gesture
        assert max(ys) - min(ys) > 1800


def test_a_swipe_by_coordinates_is_checked_where_it_starts(
    adb_api: httpx.Client, make_device: Callable[..., Any]
) -> None:
    fake, serial = _phone(make_device)
    shot = _listing(adb_api, serial)
    fake.show(scrolled(_dump("whatsapp_chats"), ROW))
    x, y = _center(shot, SECOND_ROW)
    body = {"x1": x, "y1": y, "x2": x, "y2": 100, "obs_id": shot["obs_id"]}
    assert "the list scrolled" in error_message(adb_api.post(f"/v1/devices/{serial}/swipe", json=body), 409)
    assert fake.inputs() == []


async def test_a_failed_script_is_an_error_over_mcp(tmp_path: Any, adb_server: Any, make_device: Any) -> None:
    fake, serial = _phone(make_device)
    fake.react((0, 309, 720, 418), _dump("wecom_chat"), CHAT)
    daemon = Daemon(tmp_path / "data", LOOKOUT_ADB_PORT=str(adb_server.port)).start()
    try:
        async with shim(LOOKOUT_URL=daemon.url, LOOKOUT_TOKEN=daemon.token) as session:
            shot = await session.call_tool("device_screenshot", {"serial": serial})
            assert not shot.is_error
            result = await session.call_tool("device_script", {"serial": serial, "steps": [
                {"action": "tap", "element": FIRST_ROW}, {"action": "tap", "element": SECOND_ROW}]})  # fmt: skip
            assert result.is_error and "step 1 (tap) failed" in tool_text(result)
            assert "another window is in front" in tool_text(result)
    finally:
        daemon.stop()
    assert fake.inputs() == [["tap", "360", "363"]]
