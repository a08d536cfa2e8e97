"""Android devices end to end: the daemon as a subprocess, a real adb server, fake devices (tests.support)."""
from __future__ import annotations

import base64
import io
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import httpx
import pytest
from PIL import Image

from tests.conftest import DEVICE_TIMEOUT_S, Daemon, free_port
from tests.support.http import error_message, ok_json
from tests.support.polling import eventually
from tests.support.screens import bands

UI_XML = """<?xml version='1.0' encoding='UTF-8' standalone='yes' ?>
<hierarchy rotation="0">
<node index="0" text="" resource-id="" class="android.widget.FrameLayout" package="com.example" content-desc=""
 checkable="false" checked="false" clickable="false" enabled="true" focusable="false" focused="false"
 scrollable="false" long-clickable="false" password="false" selected="false" bounds="[0,0][1080,2400]">
<node index="0" text="Welcome" resource-id="com.example:id/title" class="android.widget.TextView"
 package="com.example" content-desc="" checkable="false" checked="false" clickable="false" enabled="true"
 focusable="false" focused="false" scrollable="false" long-clickable="false" password="false" selected="false"
 bounds="[100,200][980,300]" />
<node index="1" text="Log in" resource-id="com.example:id/login" class="android.widget.Button"
 package="com.example" content-desc="" checkable="false" checked="false" clickable="true" enabled="true"
 focusable="true" focused="false" scrollable="false" long-clickable="false" password="false" selected="false"
 bounds="[90,1500][990,1650]" />
</node>
</hierarchy>
"""


def test_lists_devices_with_model_size_and_rotation(adb_api: httpx.Client, make_device: Callable[..., Any]) -> None:
    _phone, phone_serial = make_device(model="Pixel 7", size=(1080, 2400))
    big, big_serial = make_device(model="Big One", size=(1440, 3120))
    big.set_rotation(1)
    listed = {d["serial"]: d for d in ok_json(adb_api.get("/v1/devices"))["devices"]}
    assert listed[phone_serial] == {"serial": phone_serial, "state": "device", "model": "Pixel 7",
                                    "width": 1080, "height": 2400, "rotation": 0}  # fmt: skip
    big_entry = listed[big_serial]
    assert (big_entry["width"], big_entry["height"], big_entry["rotation"]) == (3120, 1440, 1)


def test_screenshot_is_scaled_stored_and_fetchable(adb_api: httpx.Client, make_device: Callable[..., Any]) -> None:
    fake, serial = make_device(size=(1440, 3120))
    fake.set_screen(bands(1440, 3120))
    shot = ok_json(adb_api.post(f"/v1/devices/{serial}/screenshot", json={}))
    assert shot["device"] == {"width": 1440, "height": 3120, "rotation": 0}
    assert shot["image"] == {"width": 462, "height": 1000}
    assert shot["scale_factor"] == pytest.approx(3.12)
    assert shot["tokens"] == 616 and "warning" not in shot and shot["black"] is False
    assert Path(shot["path"]).is_file()
    fetched = adb_api.get(shot["url"])
    assert fetched.status_code == 200 and fetched.headers["content-type"] == "image/png"
    image = Image.open(io.BytesIO(fetched.content))
    assert image.size == (462, 1000)
    assert image.getpixel((231, 10))[2] > 150  # the blue band at the top survived scaling
    jpeg = ok_json(adb_api.post(f"/v1/devices/{serial}/screenshot", json={"format": "jpeg", "inline": True,
                                                                       "max_dimension": 500}))  # fmt: skip
    decoded = Image.open(io.BytesIO(base64.b64decode(jpeg["image_b64"])))
    assert decoded.format == "JPEG" and decoded.size == (231, 500) == (jpeg["image"]["width"], jpeg["image"]["height"])


def test_raw_mode_keeps_the_resolution_and_warns(adb_api: httpx.Client, make_device: Callable[..., Any]) -> None:
    _, serial = make_device(size=(1080, 2400))
    shot = ok_json(adb_api.post(f"/v1/devices/{serial}/screenshot", json={"raw": True}))
    assert shot["image"] == {"width": 1080, "height": 2400} and shot["scale_factor"] == 1.0
    assert "Raw mode: no scaling applied" in shot["warning"]
    assert shot["tokens"] == 3456


def test_tap_in_image_space_lands_in_device_pixels(adb_api: httpx.Client, make_device: Callable[..., Any]) -> None:
    fake, serial = make_device(size=(1080, 2400))
    shot = ok_json(adb_api.post(f"/v1/devices/{serial}/screenshot", json={}))
    tapped = ok_json(adb_api.post(f"/v1/devices/{serial}/tap", json={"x": 225, "y": 500, "obs_id": shot["obs_id"]}))
    assert tapped["device_point"] == [540, 1200]
    ok_json(adb_api.post(f"/v1/devices/{serial}/tap", json={"x": 100, "y": 100}))  # the latest observation
    assert fake.inputs()[-2:] == [["tap", "540", "1200"], ["tap", "240", "240"]]
    outside = error_message(adb_api.post(f"/v1/devices/{serial}/tap", json={"x": 451, "y": 10}), 400)
    assert "outside the image (450x1000)" in outside


def test_tap_by_element_on_a_scaled_screenshot_hits_its_centre(
    adb_api: httpx.Client, make_device: Callable[..., Any]
) -> None:
    fake, serial = make_device(size=(1080, 2400))
    fake.set_ui(UI_XML)
    shot = ok_json(adb_api.post(f"/v1/devices/{serial}/screenshot", json={"marks": True}))
    ui = ok_json(adb_api.get(f"/v1/devices/{serial}/ui", params={"obs_id": shot["obs_id"], "bounds": "true"}))
    assert ui["obs_id"] == shot["obs_id"]
    button = next(e for e in ui["elements"] if e.get("text") == "Log in")
    assert button["bounds"] == [38, 625, 412, 688] or button["bounds"] == [38, 625, 413, 688]
    assert button["center"] == [225, 656]
    tapped = ok_json(adb_api.post(f"/v1/devices/{serial}/tap", json={"element": button["index"], "obs_id": shot["obs_id"]}))
    assert tapped["device_point"] == [540, 1575]
    assert fake.inputs()[-1] == ["tap", "540", "1575"]
    found = ok_json(adb_api.post(f"/v1/devices/{serial}/find", json={"text": "log IN", "obs_id": shot["obs_id"]}))
    assert [e["index"] for e in found["elements"]] == [button["index"]]


def test_marks_draw_on_the_image(adb_api: httpx.Client, make_device: Callable[..., Any]) -> None:
    fake, serial = make_device(size=(1080, 2400))
    fake.set_ui(UI_XML)
    plain = ok_json(adb_api.post(f"/v1/devices/{serial}/screenshot", json={"inline": True}))
    marked = ok_json(adb_api.post(f"/v1/devices/{serial}/screenshot", json={"inline": True, "marks": True}))
    a = Image.open(io.BytesIO(base64.b64decode(plain["image_b64"]))).convert("RGB")
    b = Image.open(io.BytesIO(base64.b64decode(marked["image_b64"]))).convert("RGB")
    assert a.size == b.size
    assert a.getpixel((38, 640)) != b.getpixel((38, 640))  # the button's left edge is outlined
    assert a.getpixel((440, 990)) == b.getpixel((440, 990))  # far from every element


def test_rotation_between_observation_and_tap_is_refused(
    adb_api: httpx.Client, make_device: Callable[..., Any]
) -> None:
    fake, serial = make_device(size=(1080, 2400))
    shot = ok_json(adb_api.post(f"/v1/devices/{serial}/screenshot", json={}))
    fake.set_rotation(1)
    fake.set_screen(bands(2400, 1080))
    message = error_message(adb_api.post(f"/v1/devices/{serial}/tap", json={"x": 10, "y": 10, "obs_id": shot["obs_id"]}), 409)
    assert "observe again" in message and "now 2400x1080" in message
    assert fake.inputs() == []
    again = ok_json(adb_api.post(f"/v1/devices/{serial}/screenshot", json={}))
    assert again["device"] == {"width": 2400, "height": 1080, "rotation": 1} and again["image"]["width"] == 1000
    assert ok_json(adb_api.post(f"/v1/devices/{serial}/tap", json={"x": 500, "y": 225}))["device_point"] == [1200, 540]


@pytest.mark.parametrize("mode", ["unauthorized", "offline"])
def test_unusable_devices_are_listed_and_refused(
    mode: str, adb_api: httpx.Client, make_device: Callable[..., Any]
) -> None:
    _, serial = make_device(mode=mode)
    listed = {d["serial"]: d for d in ok_json(adb_api.get("/v1/devices"))["devices"]}
    assert listed[serial]["state"] == mode and listed[serial]["model"] is None
    message = error_message(adb_api.post(f"/v1/devices/{serial}/screenshot", json={}), 409)
    assert f"is {mode}" in message


def test_unknown_serial_and_observation(adb_api: httpx.Client, make_device: Callable[..., Any]) -> None:
    _, serial = make_device()
    assert "no device 'nope'" in error_message(adb_api.post("/v1/devices/nope/screenshot", json={}), 404)
    message = error_message(adb_api.post(f"/v1/devices/{serial}/tap", json={"x": 1, "y": 1}), 409)
    assert "no observation" in message
    assert error_message(adb_api.post(f"/v1/devices/{serial}/tap", json={"x": 1, "y": 1, "obs_id": "o_0000000000"}), 404)
    error_message(adb_api.post(f"/v1/devices/{serial}/tap", json={"x": 1}), 422)
    error_message(adb_api.post(f"/v1/devices/{serial}/tap", json={"x": 1, "y": 2, "element": 3}), 422)


def test_no_adb_server_is_a_quick_503(tmp_path: Path) -> None:
    port = free_port()
    adb_before = _adb_processes()
    daemon = Daemon(tmp_path / "data", LOOKOUT_ADB_PORT=str(port)).start()
    try:
        with daemon.client() as api:
            response = api.get("/v1/devices")
            message = error_message(response, 503)  # a refused connection, never a wait for adb's timeout (504)
            assert f"no adb server at 127.0.0.1:{port}" in message
            error_message(api.post("/v1/devices/emulator-5554/tap", json={"x": 1, "y": 1}), 503)
    finally:
        daemon.stop()
    assert not _listening(port), "lookout must never start an adb server itself"
    assert _adb_processes() <= adb_before, "not on 5037 either"


def _adb_processes() -> set[int]:
    """The pids of the adb servers running on this machine."""
    found = set()
    for cmdline in Path("/proc").glob("[0-9]*/cmdline"):
        try:
            argv = cmdline.read_bytes().split(b"\0")
        except OSError:
            continue
        if argv[0].endswith(b"adb") and b"server" in argv:
            found.add(int(cmdline.parent.name))
    return found


def _listening(port: int) -> bool:
    import socket

    with socket.socket() as s:
        return s.connect_ex(("127.0.0.1", port)) == 0


def test_black_and_multi_display_captures(adb_api: httpx.Client, make_device: Callable[..., Any]) -> None:
    fake, serial = make_device(size=(1080, 2400))
    fake.fault("multi_display_warning", True)
    shot = ok_json(adb_api.post(f"/v1/devices/{serial}/screenshot", json={"inline": True}))
    image = Image.open(io.BytesIO(base64.b64decode(shot["image_b64"])))
    assert image.size == (450, 1000) and shot["black"] is False
    assert "several displays" in shot["warning"]
    fake.fault("multi_display_warning", None)
    fake.set_screen(Image.new("RGB", (1080, 2400)))
    black = ok_json(adb_api.post(f"/v1/devices/{serial}/screenshot", json={}))
    assert black["black"] is True and "FLAG_SECURE" in black["warning"]


def test_png_fallback_and_capture_timeout(adb_api: httpx.Client, make_device: Callable[..., Any]) -> None:
    fake, serial = make_device(size=(1080, 2400))
    fake.set_screen(bands(1080, 2400))
    fake.fault("screencap_raw_unsupported", True)
    shot = ok_json(adb_api.post(f"/v1/devices/{serial}/screenshot", json={"inline": True}))
    image = Image.open(io.BytesIO(base64.b64decode(shot["image_b64"])))
    assert image.size == (450, 1000) and image.getpixel((225, 10))[2] > 150
    fake.fault("screencap_delay", DEVICE_TIMEOUT_S + 3)
    message = error_message(adb_api.post(f"/v1/devices/{serial}/screenshot", json={}), 504)
    assert f"did not answer within {DEVICE_TIMEOUT_S} s" in message


def test_ui_dump_failures_are_retried_then_reported(adb_api: httpx.Client, make_device: Callable[..., Any]) -> None:
    fake, serial = make_device(size=(1080, 2400))
    fake.set_ui(UI_XML)
    fake.fault("ui_null_root", 1)
    ui = ok_json(adb_api.get(f"/v1/devices/{serial}/ui"))
    assert [e.get("text") for e in ui["elements"]] == ["Welcome", "Log in"]
    assert ui["image"] == {"width": 450, "height": 1000}  # no screenshot yet: the default scale
    fake.fault("ui_idle", 2)
    message = error_message(adb_api.get(f"/v1/devices/{serial}/ui"), 502)
    assert "could not get idle state" in message and "busy" in message


def test_type_key_swipe_app_and_logcat(adb_api: httpx.Client, make_device: Callable[..., Any]) -> None:
    fake, serial = make_device(size=(1080, 2400))
    ok_json(adb_api.post(f"/v1/devices/{serial}/screenshot", json={}))
    ok_json(adb_api.post(f"/v1/devices/{serial}/type", json={"text": "it's a $test & more"}))
    assert fake.inputs()[-1] == ["text", "it's%sa%s$test%s&%smore"]
    message = error_message(adb_api.post(f"/v1/devices/{serial}/type", json={"text": "héllo"}), 400)
    assert "printable ASCII only" in message
    assert ok_json(adb_api.post(f"/v1/devices/{serial}/key", json={"key": "home"}))["keycode"] == 3
    assert fake.inputs()[-1] == ["keyevent", "3"]
    assert "unknown key" in error_message(adb_api.post(f"/v1/devices/{serial}/key", json={"key": "JUMP"}), 400)
    swiped = ok_json(adb_api.post(f"/v1/devices/{serial}/swipe", json={"direction": "up"}))
    # no system bar known: the swipe keeps 5% of the height clear at the top and 8% at the bottom, and 2% of the
    # rest at its ends; half of what is left, through its middle
    assert (swiped["device_from"], swiped["device_to"]) == ([539, 1664], [539, 662])
    assert fake.inputs()[-1] == ["swipe", "539", "1664", "539", "662", "300"]
    ok_json(adb_api.post(f"/v1/devices/{serial}/swipe", json={"x1": 10, "y1": 20, "x2": 30, "y2": 40, "duration_ms": 50}))
    assert fake.inputs()[-1] == ["swipe", "24", "48", "72", "96", "50"]
    ok_json(adb_api.post(f"/v1/devices/{serial}/app", json={"package": "com.example.app"}))
    ok_json(adb_api.post(f"/v1/devices/{serial}/app", json={"package": "com.example.app", "action": "stop"}))
    assert fake.apps()[-2:] == [["monkey", "-p", "com.example.app", "-c", "android.intent.category.LAUNCHER", "1"],
                                ["am", "force-stop", "com.example.app"]]  # fmt: skip
    error_message(adb_api.post(f"/v1/devices/{serial}/app", json={"package": "rm -rf /"}), 400)
    fake.set_logcat([
        "11-22 10:00:00.100  4242  4243 D App     : debug",
        "11-22 10:00:00.200  4242  4243 E App     : boom",
        "11-22 10:00:00.300  4242  4243 I Other   : info",
    ])  # fmt: skip
    fake.set_pids({"com.example.app": 4242})
    logs = ok_json(adb_api.get(f"/v1/devices/{serial}/logcat", params={"level": "E", "package": "com.example.app"}))
    assert logs["lines"] == ["11-22 10:00:00.200  4242  4243 E App     : boom"]
    assert "--pid=4242" in json.dumps(fake.logcat_args()[-1])
    assert "not running" in error_message(adb_api.get(f"/v1/devices/{serial}/logcat", params={"package": "com.other"}), 409)


def test_actions_are_recorded_and_published(
    adb_daemon: Daemon, adb_api: httpx.Client, make_device: Callable[..., Any]
) -> None:
    _, serial = make_device(size=(1080, 2400))
    headers = {"X-Lookout-Agent": "tester"}
    shot = ok_json(adb_api.post(f"/v1/devices/{serial}/screenshot", json={}, headers=headers))
    ok_json(adb_api.post(f"/v1/devices/{serial}/tap", json={"x": 5, "y": 5}, headers=headers))
    logs = list((adb_daemon.data_dir / "devices").glob("*/actions.jsonl"))
    assert len(logs) == 1
    entries = [json.loads(line) for line in logs[0].read_text().splitlines()]
    assert [(e["kind"], e["what"], e["agent"]) for e in entries] == [
        ("observation", "screenshot", "tester"), ("action", "tap", "tester")]  # fmt: skip
    assert entries[1]["obs_id"] == shot["obs_id"] and entries[1]["device_point"] == [12, 12]


def test_the_timeline_names_the_agent_of_each_device_call_from_its_header(
    adb_api: httpx.Client, make_device: Callable[..., Any]
) -> None:
    _, serial = make_device(size=(1080, 2400))
    ok_json(adb_api.post(f"/v1/devices/{serial}/screenshot", json={}, headers={"X-Lookout-Agent": "alice"}))
    ok_json(adb_api.post(f"/v1/devices/{serial}/tap", json={"x": 5, "y": 5}, headers={"X-Lookout-Agent": "bob"}))
    error_message(adb_api.post(f"/v1/devices/{serial}/tap", json={"x": 5, "y": 5, "obs_id": "o_missing"},
                        headers={"X-Lookout-Agent": "carol"}), 404)  # fmt: skip
    ok_json(adb_api.post(f"/v1/devices/{serial}/script", json={"steps": [{"action": "key", "key": "BACK"}]},
                     headers={"X-Lookout-Agent": "dave"}))  # fmt: skip

    def frames() -> list[dict[str, Any]]:
        listed = ok_json(adb_api.get("/v1/timeline/frames", params={"resource": f"device:{serial}"}))["frames"]
        return listed if len(listed) == 4 else []

    listed = eventually(frames, what="the four device frames")
    assert [(f["kind"], f["agent"]) for f in listed] == [
        ("observation", "alice"), ("action", "bob"), ("action", "carol"), ("action", "dave")]  # fmt: skip
