"""A screen that is no longer there (issue 19), end to end: the daemon as a subprocess, a real adb server and
the fake device serving real dumps of real apps (tests/data/ui_dumps). A UI dump joins a screenshot only
while the device still shows what it showed; hidden nodes are neither listed nor tapped; a rotation is
compared, not only the size; a frame that disagrees with the device is scaled by its own size, with a
warning; and a request naming a serial adb does not list creates nothing on disk."""
from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import httpx
from PIL import Image

from tests.conftest import Daemon
from tests.support.http import error_message, ok_json
from tests.support.screens import bands

DUMPS = Path(__file__).resolve().parents[1] / "data" / "ui_dumps"
SETTINGS = "com.android.settings/com.android.settings.Settings"
WHATSAPP = "com.whatsapp/com.whatsapp.HomeActivity"


def _phone(make_device: Callable[..., Any], dump: str, window: str) -> tuple[Any, str]:
    """A 720x1483 phone showing a real dump with `window` focused."""
    fake, serial = make_device(size=(720, 1483))
    fake.set_ui((DUMPS / f"{dump}.xml").read_text())
    fake.set_focus(window)
    return fake, serial


def test_a_dump_after_a_rotation_is_refused_not_stored_under_the_old_screenshot(
    adb_api: httpx.Client, make_device: Callable[..., Any]
) -> None:
    fake, serial = _phone(make_device, "whatsapp_chats", WHATSAPP)
    shot = ok_json(adb_api.post(f"/v1/devices/{serial}/screenshot", json={}))
    fake.set_rotation(1)
    fake.set_screen(bands(1483, 720))
    message = error_message(adb_api.get(f"/v1/devices/{serial}/ui", params={"obs_id": shot["obs_id"]}), 409)
    assert "now 1483x720 at rotation 1" in message and "Observe again" in message
    message = error_message(adb_api.post(f"/v1/devices/{serial}/tap", json={"element": 204, "obs_id": shot["obs_id"]}), 409)
    assert "has no UI listing" in message
    assert fake.inputs() == []


def test_a_dump_of_another_app_is_refused(adb_api: httpx.Client, make_device: Callable[..., Any]) -> None:
    fake, serial = _phone(make_device, "whatsapp_chats", SETTINGS)
    shot = ok_json(adb_api.post(f"/v1/devices/{serial}/screenshot", json={}))
    fake.set_focus(WHATSAPP)  # the app changed after the screenshot
    message = error_message(adb_api.post(f"/v1/devices/{serial}/find", json={"text": "Comunidades", "obs_id": shot["obs_id"]}),
                     409)  # fmt: skip
    assert f"was {SETTINGS} and is now {WHATSAPP}" in message
    fresh = ok_json(adb_api.get(f"/v1/devices/{serial}/ui"))  # without obs_id: a new observation of its own
    assert fresh["obs_id"] != shot["obs_id"] and fresh["shown"] > 20


def test_screenshot_with_ui_is_one_observation_and_taps_its_elements(
    adb_api: httpx.Client, make_device: Callable[..., Any]
) -> None:
    _fake, serial = _phone(make_device, "whatsapp_chats", WHATSAPP)
    shot = ok_json(adb_api.post(f"/v1/devices/{serial}/screenshot", json={"ui": True}))
    assert shot["image"] == {"width": 486, "height": 1000}
    tab = next(e for e in shot["ui"]["elements"] if e.get("text") == "Comunidades")
    assert "hidden" not in tab and "flags" not in tab  # the visible, tappable tab
    tapped = ok_json(adb_api.post(f"/v1/devices/{serial}/tap", json={"element": tab["index"], "obs_id": shot["obs_id"]}))
    assert tapped["device_point"] == [450, 1449]  # the centre of [360,1416][540,1483]
    again = ok_json(adb_api.get(f"/v1/devices/{serial}/ui", params={"obs_id": shot["obs_id"]}))
    assert again["elements"] == shot["ui"]["elements"]  # the stored dump, not a new one


def test_hidden_nodes_are_not_listed_found_or_tapped(adb_api: httpx.Client, make_device: Callable[..., Any]) -> None:
    fake, serial = _phone(make_device, "whatsapp_chats", WHATSAPP)
    shot = ok_json(adb_api.post(f"/v1/devices/{serial}/screenshot", json={"ui": True}))
    obs = shot["obs_id"]
    found = ok_json(adb_api.post(f"/v1/devices/{serial}/find", json={"text": "Comunidades", "obs_id": obs}))
    assert [(e["index"], e.get("desc")) for e in found["elements"]] == [(204, "Comunidades")]
    hidden = ok_json(adb_api.post(f"/v1/devices/{serial}/find", json={"text": "Comunidades", "obs_id": obs, "all": True}))
    assert [(e["index"], e.get("hidden")) for e in hidden["elements"]] == [(208, True)]
    everything = ok_json(adb_api.get(f"/v1/devices/{serial}/ui", params={"obs_id": obs, "all": "true", "max_tokens": 100_000}))
    assert next(e for e in everything["elements"] if e["index"] == 208)["hidden"] is True
    message = error_message(adb_api.post(f"/v1/devices/{serial}/tap", json={"element": 208, "obs_id": obs}), 409)
    assert "not on the screen" in message and "[0,0][0,0]" in message
    assert fake.inputs() == []


def test_landscape_left_to_right_is_a_rotation(adb_api: httpx.Client, make_device: Callable[..., Any]) -> None:
    fake, serial = make_device(size=(1080, 2400))
    fake.set_rotation(1)
    fake.set_screen(bands(2400, 1080))
    shot = ok_json(adb_api.post(f"/v1/devices/{serial}/screenshot", json={}))
    fake.set_rotation(3)  # the same size, turned the other way: insets change sides
    message = error_message(adb_api.post(f"/v1/devices/{serial}/tap", json={"x": 10, "y": 10, "obs_id": shot["obs_id"]}), 409)
    assert "rotation 1" in message and "rotation 3" in message
    assert fake.inputs() == []


def test_a_portrait_frame_while_the_device_reports_landscape_is_not_squashed(
    adb_api: httpx.Client, make_device: Callable[..., Any]
) -> None:
    fake, serial = make_device(size=(1080, 2400))
    fake.set_screen(bands(1080, 2400))
    fake.set_rotation(1)  # the device says landscape; the frame stays portrait (a rotation under way)
    shot = ok_json(adb_api.post(f"/v1/devices/{serial}/screenshot", json={}))
    assert shot["image"] == {"width": 450, "height": 1000}  # the frame's own shape, not 1000x450
    assert "frame is 1080x2400 but the device reports 2400x1080" in shot["warning"]
    message = error_message(adb_api.post(f"/v1/devices/{serial}/tap", json={"x": 10, "y": 10, "obs_id": shot["obs_id"]}), 409)
    assert "observe again" in message and fake.inputs() == []
    fake.set_screen(Image.new("RGB", (2400, 1080), (90, 90, 90)))  # the frame catches up
    settled = ok_json(adb_api.post(f"/v1/devices/{serial}/screenshot", json={}))
    assert settled["image"] == {"width": 1000, "height": 450} and "warning" not in settled


def test_unknown_serials_create_no_directories(
    adb_daemon: Daemon, adb_api: httpx.Client, make_device: Callable[..., Any]
) -> None:
    make_device()
    devices = adb_daemon.data_dir / "devices"
    before = sorted(p.name for p in devices.iterdir()) if devices.exists() else []
    error_message(adb_api.get("/v1/devices/ghost-1/observations/o_0123456789/image"), 404)
    error_message(adb_api.post("/v1/devices/ghost-2/screenshot", json={}), 404)
    error_message(adb_api.get("/v1/devices/ghost-3/ui", params={"obs_id": "o_0123456789"}), 404)
    error_message(adb_api.post("/v1/devices/ghost-4/tap", json={"x": 1, "y": 1}), 404)
    error_message(adb_api.post("/v1/devices/ghost-5/find", json={"text": "x"}), 404)
    after = sorted(p.name for p in devices.iterdir()) if devices.exists() else []
    assert after == before


def test_a_script_runs_steps_converting_coordinates_and_stops_at_the_first_failure(
    adb_api: httpx.Client, make_device: Callable[..., Any]
) -> None:
    fake, serial = _phone(make_device, "whatsapp_chats", WHATSAPP)
    steps = [
        {"action": "screenshot", "ui": True},
        {"action": "tap", "element": 204},  # the latest observation: the screenshot of step 0
        {"action": "wait", "ms": 10},
        {"action": "tap", "x": 243, "y": 500},
        {"action": "swipe", "direction": "up"},
        {"action": "type", "text": "oi"},
        {"action": "key", "key": "BACK"},
        {"action": "app", "package": "com.whatsapp", "action_": "launch"},
    ]
    error_message(adb_api.post(f"/v1/devices/{serial}/script", json={"steps": steps}), 400)  # checked before any runs
    assert fake.inputs() == []
    steps[-1] = {"action": "tap", "element": 208}  # the hidden tab label: refused
    steps.append({"action": "key", "key": "HOME"})  # never runs
    failed = adb_api.post(f"/v1/devices/{serial}/script", json={"steps": steps})
    assert failed.status_code == 409, failed.text  # a failed script is an error: the failing step's
    error = failed.json()["error"]
    assert error["message"].startswith("step 7 (tap) failed and the script stopped there (7 steps before it ran)")
    done = error["details"]
    assert done["stopped_at"]["step"] == 7 and "not on the screen" in done["stopped_at"]["reason"]
    assert [r["ok"] for r in done["results"]] == [True] * 7 + [False]
    assert done["results"][0]["image"] == {"width": 486, "height": 1000} and done["results"][0]["ui"]["shown"] > 20
    assert done["results"][1]["device_point"] == [450, 1449]
    assert fake.inputs() == [["tap", "450", "1449"], ["tap", "360", "742"], ["swipe", "359", "1021", "359", "389", "300"],
                             ["text", "oi"], ["keyevent", "4"]]  # fmt: skip
    assert done["results"][7]["error"]["code"] == "conflict"
    message = error_message(adb_api.post(f"/v1/devices/{serial}/script", json={"steps": [{"action": "fly"}]}), 400)
    assert "step 0: action must be one of tap, swipe" in message
