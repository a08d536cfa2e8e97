"""What a dialog covers is never tapped, and a listing is the screen it names (issue 48), end to end: the daemon
as a subprocess, a real adb server and the fake device showing real-shaped dumps (tests.support.overlays) drawn
into its screen, so that what the device shows and what its dump says agree, as on a phone.

The issue's case: a tap by element on "Invoice #10004" under a dialog answered ok and sent a tap inside the
dialog. Here it is a 409 naming the dialog, and the fake's input log shows that nothing was sent."""
from __future__ import annotations

from collections.abc import Callable
from typing import Any

import httpx
import pytest

from tests.support import overlays
from tests.support.adb_fake import FakeDevice
from tests.support.http import error_message, ok_json
from tests.support.screens import render_dump

ACTIVITY = f"{overlays.APP}/{overlays.APP}.InvoicesActivity"


def _phone(make_device: Callable[..., Any], xml: str) -> tuple[FakeDevice, str]:
    fake, serial = make_device(size=overlays.SCREEN)
    fake.show(xml, ACTIVITY)
    return fake, serial


def _listing(api: httpx.Client, serial: str, **options: Any) -> dict[str, Any]:
    return ok_json(api.post(f"/v1/devices/{serial}/screenshot", json={"ui": True, **options}))


@pytest.mark.parametrize("dialog", ["window", "child"])
def test_a_tap_on_a_row_under_a_dialog_is_refused_and_nothing_is_sent(
    adb_api: httpx.Client, make_device: Callable[..., Any], dialog: str
) -> None:
    xml = overlays.dialog_window("list") if dialog == "window" else overlays.dialog_child("list", scrim=True)
    fake, serial = _phone(make_device, xml)
    shot = _listing(adb_api, serial, max_tokens=500)
    texts = [e.get("text") for e in shot["ui"]["elements"]]
    assert texts[:4] == ["Delete invoice?", "It cannot be undone.", "Cancel", "Delete"]
    assert "Invoice #10004 | 148.00 €" not in texts and shot["ui"]["covered"]["elements"] == 20
    every = ok_json(adb_api.get(f"/v1/devices/{serial}/ui",
                                params={"obs_id": shot["obs_id"], "all": "true", "max_tokens": 100_000}))  # fmt: skip
    number = next(e for e in every["elements"] if e.get("text") == "Invoice #10004")
    row = next(e for e in every["elements"] if e["index"] == number["index"] - 1)  # the row around it
    assert row["id"] == "invoice_row" and "covered_by" in row
    found = ok_json(adb_api.post(f"/v1/devices/{serial}/find", json={"text": "Invoice #10004", "obs_id": shot["obs_id"]}))
    assert [(e["index"], e["covered_by"]) for e in found["elements"]] == [(number["index"], row["covered_by"])]
    message = error_message(adb_api.post(f"/v1/devices/{serial}/tap", json={"element": row["index"]}), 409)
    assert f"element {row['index']} of observation {shot['obs_id']}" in message and "is covered by element" in message
    assert "Nothing was sent" in message
    held = adb_api.post(f"/v1/devices/{serial}/tap", json={"element": row["index"], "hold_ms": 800})
    assert "is covered by" in error_message(held, 409)
    assert fake.inputs() == []
    delete = next(e for e in shot["ui"]["elements"] if e.get("text") == "Delete")
    tapped = ok_json(adb_api.post(f"/v1/devices/{serial}/tap", json={"element": delete["index"]}))
    assert tapped["element"]["text"] == "Delete" and len(fake.inputs()) == 1


def test_a_tap_at_a_point_of_a_covered_row_names_the_dialog(
    adb_api: httpx.Client, make_device: Callable[..., Any]
) -> None:
    fake, serial = _phone(make_device, overlays.dialog_window("list"))
    shot = _listing(adb_api, serial)
    scale = shot["scale_factor"]
    cancel = ok_json(adb_api.post(f"/v1/devices/{serial}/tap", json={"x": round(580 / scale), "y": round(1410 / scale)}))
    assert cancel["element"]["text"] == "Cancel"  # the dialog's button, not the row drawn below it
    assert fake.inputs() == [["tap", *map(str, cancel["device_point"])]]


def test_a_bottom_sheet_over_half_a_row_leaves_it_tappable_at_its_upper_half(
    adb_api: httpx.Client, make_device: Callable[..., Any]
) -> None:
    fake, serial = _phone(make_device, overlays.bottom_sheet())
    shot = _listing(adb_api, serial)
    row = next(e for e in shot["ui"]["elements"] if e.get("text", "").startswith("Invoice #10013"))
    assert "flags" not in row and row["center"][1] < round(overlays.SHEET_TOP / shot["scale_factor"])
    tapped = ok_json(adb_api.post(f"/v1/devices/{serial}/tap", json={"element": row["index"]}))
    x, y = tapped["device_point"]
    assert 1760 <= y < overlays.SHEET_TOP and 0 <= x < 1080  # in the row, above the sheet
    assert fake.inputs() == [["tap", str(x), str(y)]]


def test_a_listing_of_an_older_screenshot_after_a_change_in_the_same_window_is_refused(
    adb_api: httpx.Client, make_device: Callable[..., Any]
) -> None:
    fake, serial = _phone(make_device, overlays.dump(overlays.content("list")))
    dialog = overlays.dialog_window("list")
    drawn = render_dump(dialog, overlays.SCREEN)  # ready before the screenshot: the change lands at once after it
    shot = ok_json(adb_api.post(f"/v1/devices/{serial}/screenshot", json={}))
    fake.set_ui(dialog)  # a dialog opened: same focused window, other pixels and elements
    fake.set_screen(drawn)
    response = adb_api.get(f"/v1/devices/{serial}/ui", params={"obs_id": shot["obs_id"]})
    # the pixel check's reason; on a machine so loaded that 5 s passed, the age's (both refuse the new elements)
    message = error_message(response, 409)
    assert ("the screen changed since it was taken" in message or "s old (at most 5 s" in message), message
    assert "Observe again" in message
    fresh = ok_json(adb_api.get(f"/v1/devices/{serial}/ui"))  # without obs_id: the screen as it is
    assert fresh["elements"][0]["text"] == "Delete invoice?"


def test_the_default_listing_of_600_cells_is_within_its_budget(
    adb_api: httpx.Client, make_device: Callable[..., Any]
) -> None:
    _fake, serial = _phone(make_device, overlays.dump(overlays.content("grid")))
    listing = ok_json(adb_api.get(f"/v1/devices/{serial}/ui"))
    assert listing["tokens"] <= 4000 and listing["cut"]["max_tokens"] == 4000
    assert listing["cut"]["omitted"] == listing["matched"] - listing["shown"] > 100
    assert "find" in listing["cut"]["get_more"]
