"""HTTP adapter for Android devices: the routes. Their contracts are in app.schemas.device, the logic in
app.device."""

from __future__ import annotations

import asyncio
from typing import Annotated, Any

from fastapi import APIRouter, Path, Query, Request
from fastapi.responses import Response

from app.api.responses import JSONResponse
from app.core.images import MEDIA_TYPES
from app.core.private_files import read_bytes
from app.device.manager import DeviceManager
from app.schemas.device import (
    AllNodes,
    AppRequest,
    Bounds,
    FindRequest,
    KeyRequest,
    LogLevel,
    LogLines,
    LogTag,
    ScreenshotRequest,
    ScriptRequest,
    Serial,
    SwipeRequest,
    TapRequest,
    TypeRequest,
    UiMaxTokens,
)  # fmt: skip
from app.timeline.recording import current_agent

router = APIRouter(prefix="/v1/devices", tags=["devices"])

SerialPath = Annotated[Serial, Path()]
ObsIdPath = Annotated[str, Path(min_length=1, max_length=64)]


def _step_arguments(action: str, body: Any) -> dict[str, Any]:
    """A validated request model (a single route's or a script step's) as the manager's keyword arguments."""
    if action == "tap":
        return {"x": body.x, "y": body.y, "element": body.element, "obs_id": body.obs_id}
    if action == "swipe":
        return {"points": body.points(), "direction": body.direction, "distance": body.distance,
                "duration_ms": body.duration_ms, "obs_id": body.obs_id}  # fmt: skip
    if action == "type":
        return {"text": body.text}
    if action == "key":
        return {"key": body.key}
    if action == "app":
        return {"package": body.package, "action": body.action}
    if action == "wait":
        return {"ms": body.ms}
    return {"max_dimension": body.max_dimension, "raw": body.raw, "fmt": body.format, "marks": body.marks,
            "ui": body.ui, "all_nodes": body.all, "bounds": body.bounds, "max_tokens": body.max_tokens}  # fmt: skip


def _manager(request: Request) -> DeviceManager:
    return request.app.state.devices


@router.get("")
async def list_devices(request: Request) -> JSONResponse:
    manager = _manager(request)
    return JSONResponse({"devices": await manager.describe_all(), "adb_server": manager.adb.address})


@router.post("/{serial}/screenshot")
async def screenshot(serial: SerialPath, request: Request, body: ScreenshotRequest | None = None) -> JSONResponse:
    body = body or ScreenshotRequest()
    result = await _manager(request).screenshot(
        serial, max_dimension=body.max_dimension, raw=body.raw, fmt=body.format, inline=body.inline,
        marks=body.marks, agent=current_agent.get(), ui=body.ui, all_nodes=body.all, bounds=body.bounds,
        max_tokens=body.max_tokens,
    )  # fmt: skip
    return JSONResponse(result)


@router.get("/{serial}/observations/{obs_id}/image")
async def observation_image(serial: SerialPath, obs_id: ObsIdPath, request: Request) -> Response:
    path, fmt = _manager(request).image(serial, obs_id)
    return Response(await asyncio.to_thread(read_bytes, path), media_type=MEDIA_TYPES[fmt])  # links not followed


@router.get("/{serial}/ui")
async def ui(
    serial: SerialPath,
    request: Request,
    obs_id: Annotated[str | None, Query(max_length=64)] = None,
    max_tokens: Annotated[UiMaxTokens, Query()] = None,
    all: Annotated[AllNodes, Query()] = False,
    bounds: Annotated[Bounds, Query()] = False,
) -> JSONResponse:
    result = await _manager(request).ui(
        serial, obs_id=obs_id, all_nodes=all, max_tokens=max_tokens, agent=current_agent.get(), bounds=bounds
    )
    return JSONResponse(result)


@router.post("/{serial}/find")
async def find(serial: SerialPath, body: FindRequest, request: Request) -> JSONResponse:
    criteria: dict[str, Any] = body.model_dump(exclude={"obs_id", "all", "bounds"}, exclude_none=True)
    result = await _manager(request).find(serial, criteria, body.obs_id, current_agent.get(), all_nodes=body.all,
                                          bounds=body.bounds)  # fmt: skip
    return JSONResponse(result)


@router.post("/{serial}/tap")
async def tap(serial: SerialPath, body: TapRequest, request: Request) -> JSONResponse:
    result = await _manager(request).tap(serial, **_step_arguments("tap", body), agent=current_agent.get())
    return JSONResponse(result)


@router.post("/{serial}/swipe")
async def swipe(serial: SerialPath, body: SwipeRequest, request: Request) -> JSONResponse:
    result = await _manager(request).swipe(serial, **_step_arguments("swipe", body), agent=current_agent.get())
    return JSONResponse(result)


@router.post("/{serial}/type")
async def type_text(serial: SerialPath, body: TypeRequest, request: Request) -> JSONResponse:
    return JSONResponse(await _manager(request).type_text(serial, body.text, current_agent.get()))


@router.post("/{serial}/key")
async def key(serial: SerialPath, body: KeyRequest, request: Request) -> JSONResponse:
    return JSONResponse(await _manager(request).key(serial, body.key, current_agent.get()))


@router.post("/{serial}/app")
async def app_action(serial: SerialPath, body: AppRequest, request: Request) -> JSONResponse:
    return JSONResponse(await _manager(request).app(serial, body.package, body.action, current_agent.get()))


@router.post("/{serial}/script")
async def script(serial: SerialPath, body: ScriptRequest, request: Request) -> JSONResponse:
    """Several steps in one call, each converted as its single action is; stops at the first failure and
    says which step (`stopped_at`)."""
    steps = [(action, _step_arguments(action, step)) for action, step in body.parsed_steps()]
    return JSONResponse(await _manager(request).script(serial, steps, current_agent.get()))


@router.get("/{serial}/logcat")
async def logcat(
    serial: SerialPath,
    request: Request,
    lines: Annotated[LogLines, Query()] = 200,
    package: Annotated[str | None, Query(max_length=255)] = None,
    tag: Annotated[LogTag, Query()] = None,
    level: Annotated[LogLevel, Query()] = None,
) -> JSONResponse:
    result = await _manager(request).logcat(serial, lines=lines, package=package, tag=tag, level=level)
    return JSONResponse(result)
