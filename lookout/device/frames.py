"""What a device records in the timeline: screenshots, UI trees, searches and actions (pure)."""

from __future__ import annotations

from typing import Any

import orjson

from lookout.timeline.recording import FrameInput

CATEGORIES = {"screenshot": "device screenshot", "ui": "device UI tree", "find": "device search"}


def _describe_action(what: str, entry: dict[str, Any]) -> str:
    if what in ("tap", "long_press"):
        element = entry.get("element")
        said = element and (element.get("text") or element.get("inner_text") or element.get("id"))
        target = f"element {element['index']} ({element['class']}{f' {said!r}' if said else ''}) at " if element else ""
        verb = "tapped" if what == "tap" else f"long-pressed ({entry.get('held_ms')} ms)"
        return f"{verb} {target or 'at '}image point {entry.get('point')} (device point {entry['device_point']})"
    if what == "swipe":
        way = entry.get("direction") or f"{entry['device_from']} to {entry['device_to']}"
        return f"swiped {way} in {entry['duration_ms']} ms"
    if what == "type":
        return f"typed {entry['text']!r}"
    if what == "key":
        return f"pressed key {entry['key']} (keycode {entry['keycode']})"
    return f"{entry['app_action']} app {entry['package']}"


def device_frame(
    entry: dict[str, Any], elements: list[dict[str, Any]] | None = None, app: str | None = None
) -> FrameInput:
    """The frame of one entry of the device's action log; a UI tree or search carries its elements as the
    full text (one compact JSON object per line) and the app they belong to."""
    serial, what, kind = entry["serial"], entry["what"], entry["kind"]
    resource = f"device:{serial}"
    refs = {"obs_id": entry["obs_id"]} if entry.get("obs_id") else {}
    data: dict[str, Any] = {"app": app} if app else {}
    if kind == "action":
        text = _describe_action(what, entry)
        data["action"] = text
        if what == "app":
            data["app"] = entry["package"]
        return FrameInput(resource, "action", "device action", text, text, refs=refs, data=data)
    obs = entry.get("obs_id")
    if what == "screenshot":
        line = f"screenshot {entry['image']['width']}x{entry['image']['height']} (obs {obs})"
        url = f"/v1/devices/{serial}/observations/{obs}/image"
        full = f"{line}: GET {url}" + (f"; warning: {entry['warning']}" if entry.get("warning") else "")
        if elements:  # a screenshot with its UI
            full += f"\n{len(elements)} elements:\n" + "\n".join(orjson.dumps(e).decode() for e in elements)
        return FrameInput(resource, "observation", CATEGORIES[what], full, line, subject=what,
                          refs={**refs, "image": url}, data=data)  # fmt: skip
    shown = elements or []
    texts: list[str] = [said for e in shown if (said := e.get("text") or e.get("desc"))]
    if texts:
        data["screen"] = " / ".join(texts[:3])[:80]
    label = f"UI of {app or 'the device'}" if what == "ui" else f"search {entry.get('criteria')}"
    line = f"{label} (obs {obs}): {len(shown)} elements" + (f": {', '.join(texts[:5])}"[:160] if texts else "")
    body = "\n".join(orjson.dumps(e).decode() for e in shown)
    return FrameInput(resource, "observation", CATEGORIES[what], f"{label} (obs {obs}):\n{body}", line,
                      subject=what, refs=refs, data=data)  # fmt: skip


def failed_action_frame(serial: str, what: str, message: str) -> FrameInput:
    """An action the device or lookout refused: pinned, with the reason."""
    text = f"{what} failed: {message}"
    return FrameInput(f"device:{serial}", "action", "device action", text, text[:160], pinned=True,
                      data={"action": f"{what} (failed)"})  # fmt: skip
