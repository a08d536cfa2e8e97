"""The Android device tools: each one request to /v1/devices, its arguments typed as lookout.schemas.device
declares them. Coordinates are a screenshot's pixels; the daemon converts them with that observation."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Annotated, Any, Literal
from urllib.parse import quote

from mcp.server.mcpserver import Context
from mcp.types import ToolAnnotations
from pydantic import Field

from lookout.clients.mcp.daemon import call
from lookout.clients.mcp.images import image_result
from lookout.schemas.device import (
    AllNodes,
    Coordinate,
    Direction,
    HoldMs,
    Key,
    LogLevel,
    LogLines,
    LogTag,
    MaxDimension,
    ObsId,
    Package,
    Steps,
    UiMaxTokens,
)  # fmt: skip

IMAGE_FORMAT = "jpeg"
"""What device screenshots are sent as: bench/mcp_tools.py measures it against PNG at the same size."""


def _path(serial: str, *rest: str) -> str:
    return "/".join(("/v1/devices", quote(serial, safe=""), *rest))


async def device_list(ctx: Context) -> str:
    """Android devices: {devices: [{serial, state, model, width, height}]}."""
    return await call(ctx, "GET", "/v1/devices")


async def device_screenshot(
    ctx: Context,
    serial: str,
    ui: Annotated[bool, Field(description="also its elements")] = True,
    marks: Annotated[bool, Field(description="number the elements on it")] = False,
    max_dimension: MaxDimension = None,
) -> list[Any]:
    """The screen as an image (phone: ~600 tokens) and {obs_id, scale_factor, ui?}. Tap or swipe its
    pixels, or an element index, with its obs_id."""
    body = {"max_dimension": max_dimension, "format": IMAGE_FORMAT, "marks": marks, "ui": ui, "inline": True}
    return image_result(await call(ctx, "POST", _path(serial, "screenshot"), body=body))


async def device_ui(
    ctx: Context, serial: str, obs_id: ObsId = None, all: AllNodes = False, max_tokens: UiMaxTokens = None
) -> str:
    """Elements on screen, ~20 tokens each, a dialog first (what it covers left out): {obs_id, covered?, cut?,
    elements: [{index, text?, center}]}."""
    params = {"obs_id": obs_id, "all": all or None, "max_tokens": max_tokens}
    return await call(ctx, "GET", _path(serial, "ui"), params=params)


async def device_find(
    ctx: Context,
    serial: str,
    text: str | None = None,
    resource_id: str | None = None,
    desc: str | None = None,
    class_name: str | None = None,
    regex: bool = False,
) -> str:
    """Elements matching all criteria given (substrings or regexes)."""
    body = {"text": text, "resource_id": resource_id, "desc": desc, "class_name": class_name, "regex": regex}
    return await call(ctx, "POST", _path(serial, "find"), body=body)


async def device_tap(
    ctx: Context,
    serial: str,
    x: Coordinate = None,
    y: Coordinate = None,
    element: Annotated[int | None, Field(ge=0)] = None,
    obs_id: ObsId = None,
    hold_ms: HoldMs = None,
) -> str:
    """Tap (x, y) or an element."""
    body = {"x": x, "y": y, "element": element, "obs_id": obs_id, "hold_ms": hold_ms}
    return await call(ctx, "POST", _path(serial, "tap"), body=body)


async def device_swipe(
    ctx: Context,
    serial: str,
    direction: Direction | None = None,
    x1: Coordinate = None,
    y1: Coordinate = None,
    x2: Coordinate = None,
    y2: Coordinate = None,
    obs_id: ObsId = None,
) -> str:
    """Swipe by direction (up scrolls down), or (x1, y1) to (x2, y2)."""
    body = {"direction": direction, "x1": x1, "y1": y1, "x2": x2, "y2": y2, "obs_id": obs_id}
    return await call(ctx, "POST", _path(serial, "swipe"), body=body)


async def device_type(ctx: Context, serial: str, text: Annotated[str, Field(min_length=1)]) -> str:
    """Type ASCII into the focused field; newline = ENTER."""
    return await call(ctx, "POST", _path(serial, "type"), body={"text": text})


async def device_key(ctx: Context, serial: str, key: Key) -> str:
    """Press a key."""
    return await call(ctx, "POST", _path(serial, "key"), body={"key": key})


async def device_app(ctx: Context, serial: str, package: Package, action: Literal["launch", "stop"] = "launch") -> str:
    """Launch or force-stop an app."""
    return await call(ctx, "POST", _path(serial, "app"), body={"package": package, "action": action})


async def device_logcat(
    ctx: Context,
    serial: str,
    lines: LogLines = 200,
    package: str | None = None,
    tag: LogTag = None,
    level: LogLevel = None,
) -> str:
    """The log's last lines, ~30 tokens each."""
    params = {"lines": lines, "package": package, "tag": tag, "level": level}
    return await call(ctx, "GET", _path(serial, "logcat"), params=params)


async def device_script(ctx: Context, serial: str, steps: Steps) -> str:
    """Several actions; stops at the first failure."""
    return await call(ctx, "POST", _path(serial, "script"), body={"steps": steps})


_READ = ToolAnnotations(read_only_hint=True)
_WRITE = None

TOOLS: list[tuple[Callable[..., Awaitable[Any]], ToolAnnotations | None]] = [
    (device_list, _READ),
    (device_screenshot, _READ),
    (device_ui, _READ),
    (device_find, _READ),
    (device_tap, _WRITE),
    (device_swipe, _WRITE),
    (device_type, _WRITE),
    (device_key, _WRITE),
    (device_app, _WRITE),
    (device_logcat, _READ),
    (device_script, _WRITE),
]
