"""The Android device tools: each one request to /v1/devices. Coordinates are always the pixels of a
screenshot lookout returned; the daemon converts them to the device's pixels with that observation."""
from __future__ import annotations

import base64
import json
from collections.abc import Awaitable, Callable
from typing import Annotated, Any, Literal
from urllib.parse import quote

from mcp.server.mcpserver import Context, Image
from mcp.types import ToolAnnotations
from pydantic import Field

from clients.mcp.daemon import call

Serial = Annotated[str, Field(min_length=1, description="the device's adb serial, from device_list")]
ObsId = Annotated[
    str | None, Field(description="the observation (screenshot or UI read) whose pixels you use; default: the latest")
]


def _path(serial: str, *rest: str) -> str:
    return "/".join(("/v1/devices", quote(serial, safe=""), *rest))


async def device_list(ctx: Context) -> str:
    """Every Android device the adb server knows: {devices: [{serial, state: device|offline|unauthorized, model,
    width, height, rotation}]}, about 40 tokens each. Only devices in state `device` can be used."""
    return await call(ctx, "GET", "/v1/devices")


async def device_screenshot(
    ctx: Context,
    serial: Serial,
    ui: Annotated[
        bool, Field(description="also read the UI (uiautomator) right after the frame: its elements, in this "
                    "image's pixels, in `ui` (one observation; the way to see a screen and act on it)")
    ] = True,
    marks: Annotated[
        bool, Field(description="draw each listed element's index on the image")
    ] = False,
    max_dimension: Annotated[int, Field(ge=200, le=2000, description="longest side in pixels")] = 1000,
    format: Annotated[Literal["png", "jpeg", "webp"], Field(description="jpeg/webp: smaller transfers")] = "png",
    max_tokens: Annotated[int | None, Field(ge=50, description="cut the element list to this many tokens")] = None,
) -> list[Any]:
    """A screenshot of the device, scaled so its longest side is max_dimension (a 1080x2400 phone becomes
    450x1000, about 600 tokens of image), its description {obs_id, device{width,height,rotation},
    image{width,height}, scale_factor, tokens, warning?} and, with ui (the default), the screen's elements
    in `ui` as device_ui gives them. Tap and swipe in this image's pixels, or tap an element by index, with
    its obs_id; lookout converts them to the device. A `warning` says when the image is black (screen off,
    secure app) or did not match the device's orientation."""
    body = {"max_dimension": max_dimension, "format": format, "marks": marks, "ui": ui, "max_tokens": max_tokens,
            "inline": True}  # fmt: skip
    result = json.loads(await call(ctx, "POST", _path(serial, "screenshot"), body=body))
    data = base64.b64decode(result.pop("image_b64"))
    return [Image(data=data, format=format), json.dumps(result, separators=(",", ":"), ensure_ascii=False)]


async def device_ui(
    ctx: Context,
    serial: Serial,
    obs_id: ObsId = None,
    all: Annotated[bool, Field(description="every node as it is, hidden ones flagged `hidden`")] = False,
    max_tokens: Annotated[int | None, Field(ge=50, description="cut the list to this many tokens")] = None,
) -> str:
    """The visible UI elements on the device's screen (uiautomator): {obs_id, elements: [{index, class?, text?,
    id?, flags?, center: [x,y]}], total, shown, cut?}. An element can be tapped unless its flags say `static`
    (text) or `scroll` (a list); a clickable row carries the texts inside it. About 20 tokens an element.
    With obs_id: that screenshot's elements, refused (conflict) if the screen changed since or it is more
    than a few seconds old (prefer device_screenshot, which reads both at once). Tap one with
    device_tap(element=index, obs_id=...)."""
    params = {"obs_id": obs_id, "all": all or None, "max_tokens": max_tokens}
    return await call(ctx, "GET", _path(serial, "ui"), params=params)


async def device_find(
    ctx: Context,
    serial: Serial,
    text: Annotated[str | None, Field(description="in the element's text")] = None,
    resource_id: Annotated[str | None, Field(description="short (login_button) or full resource id")] = None,
    desc: Annotated[str | None, Field(description="in the content description")] = None,
    class_name: Annotated[str | None, Field(description="short (Button) or full class name")] = None,
    regex: Annotated[bool, Field(description="the criteria are regular expressions")] = False,
    obs_id: ObsId = None,
) -> str:
    """Find UI elements by text, resource id, description or class (case-insensitive substrings, or regexes;
    all given criteria must match): {elements: [{index, class, text?, id?, desc?, flags?, center}]}. Only
    elements on the screen: a hidden match gives way to the visible element carrying the same text."""
    body = {"text": text, "resource_id": resource_id, "desc": desc, "class_name": class_name, "regex": regex,
            "obs_id": obs_id}  # fmt: skip
    return await call(ctx, "POST", _path(serial, "find"), body=body)


async def device_tap(
    ctx: Context,
    serial: Serial,
    x: Annotated[float | None, Field(description="image pixels of the screenshot")] = None,
    y: Annotated[float | None, Field(description="image pixels of the screenshot")] = None,
    element: Annotated[int | None, Field(ge=0, description="an element index from device_ui / marks")] = None,
    obs_id: ObsId = None,
) -> str:
    """Tap at (x, y) of a screenshot, or at the centre of a UI element: {ok, obs_id, device_point}. Refused
    (conflict) when the device rotated since that observation (take a new screenshot then), or when the
    element is not on the screen."""
    body = {"x": x, "y": y, "element": element, "obs_id": obs_id}
    return await call(ctx, "POST", _path(serial, "tap"), body=body)


async def device_swipe(
    ctx: Context,
    serial: Serial,
    direction: Annotated[
        Literal["up", "down", "left", "right"] | None,
        Field(description="the way the finger moves through the centre: up scrolls a list towards its end"),
    ] = None,
    x1: float | None = None,
    y1: float | None = None,
    x2: float | None = None,
    y2: float | None = None,
    duration_ms: Annotated[int, Field(ge=0, le=60_000)] = 300,
    obs_id: ObsId = None,
) -> str:
    """Swipe by direction, or from (x1, y1) to (x2, y2) in a screenshot's pixels: {ok, device_from,
    device_to}."""
    body = {"direction": direction, "x1": x1, "y1": y1, "x2": x2, "y2": y2, "duration_ms": duration_ms,
            "obs_id": obs_id}  # fmt: skip
    return await call(ctx, "POST", _path(serial, "swipe"), body=body)


async def device_type(
    ctx: Context,
    serial: Serial,
    text: Annotated[str, Field(min_length=1, description="printable ASCII; newline = ENTER, tab = TAB")],
) -> str:
    """Type text into the focused field (tap the field first). Android's `input text` carries ASCII only:
    other characters are refused with an error."""
    return await call(ctx, "POST", _path(serial, "type"), body={"text": text})


async def device_key(
    ctx: Context,
    serial: Serial,
    key: Annotated[str, Field(description="HOME, BACK, ENTER, DEL, APP_SWITCH, VOLUME_UP, WAKEUP, ... or a keycode")],
) -> str:
    """Press a key on the device (BACK leaves a screen, HOME goes to the launcher, ENTER submits a field,
    DEL deletes the character before the cursor): {ok, keycode}, about 15 tokens."""
    return await call(ctx, "POST", _path(serial, "key"), body={"key": key})


async def device_script(
    ctx: Context,
    serial: Serial,
    steps: Annotated[
        list[dict[str, Any]],
        Field(min_length=1, max_length=50, description='in order, each {"action": "tap"|"swipe"|"type"|"key"|"app"|'
              '"wait"|"screenshot", ...that tool\'s fields}; wait takes ms; a tap or swipe without obs_id uses the '
              "latest observation (a screenshot step's once it ran)"),
    ],
) -> str:
    """Several device actions in one call: {ok, results: [{step, action, ok, ...}], stopped_at?: {step,
    action, reason}}. Stops at the first step that fails."""
    return await call(ctx, "POST", _path(serial, "script"), body={"steps": steps})


_READ = ToolAnnotations(read_only_hint=True, open_world_hint=False)
_WRITE = ToolAnnotations(read_only_hint=False, destructive_hint=False, open_world_hint=True)

TOOLS: list[tuple[Callable[..., Awaitable[Any]], ToolAnnotations]] = [
    (device_list, _READ),
    (device_screenshot, _READ),
    (device_ui, _READ),
    (device_find, _READ),
    (device_tap, _WRITE),
    (device_swipe, _WRITE),
    (device_type, _WRITE),
    (device_key, _WRITE),
    (device_script, _WRITE),
]
