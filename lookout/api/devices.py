"""HTTP adapter for Android devices: the routes. Their contracts are in lookout.schemas.device, the logic in
lookout.device."""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING, Annotated, Any

from fastapi import APIRouter, Path, Query, Request
from fastapi.responses import Response

from lookout.api.responses import JSONResponse
from lookout.core.images import MEDIA_TYPES
from lookout.core.private_files import read_bytes
from lookout.schemas.device import (
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

if TYPE_CHECKING:
    from lookout.device.device import Device
    from lookout.device.registry import DeviceRegistry

# served under its prefix in lookout.server.INCLUDED_ON_FIRST_USE, included on first use
router = APIRouter(tags=["devices"])

SerialPath = Annotated[Serial, Path()]
ObsIdPath = Annotated[str, Path(min_length=1, max_length=64)]


def _step_arguments(action: str, body: Any) -> dict[str, Any]:
    """A validated request model (a single route's or a script step's) as the device's keyword arguments."""
    if action == "tap":
        return {"x": body.x, "y": body.y, "element": body.element, "obs_id": body.obs_id, "hold_ms": body.hold_ms}
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


def _registry(request: Request) -> DeviceRegistry:
    return request.app.state.devices


def _device(request: Request, serial: str) -> Device:
    return _registry(request).get(serial)


@router.get("")
async def list_devices(request: Request) -> JSONResponse:
    registry = _registry(request)
    return JSONResponse({"devices": await registry.describe_all(), "adb_server": registry.adb.address})


@router.post("/{serial}/screenshot")
async def screenshot(serial: SerialPath, request: Request, body: ScreenshotRequest | None = None) -> JSONResponse:
    body = body or ScreenshotRequest()
    result = await _device(request, serial).screenshot(
        max_dimension=body.max_dimension, raw=body.raw, fmt=body.format, inline=body.inline, marks=body.marks,
        ui=body.ui, all_nodes=body.all, bounds=body.bounds, max_tokens=body.max_tokens,
    )  # fmt: skip
    return JSONResponse(result)


@router.get("/{serial}/observations/{obs_id}/image")
async def observation_image(serial: SerialPath, obs_id: ObsIdPath, request: Request) -> Response:
    path, fmt = _device(request, serial).image(obs_id)
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
    result = await _device(request, serial).ui(obs_id=obs_id, all_nodes=all, max_tokens=max_tokens, bounds=bounds)
    return JSONResponse(result)


@router.post("/{serial}/find")
async def find(serial: SerialPath, body: FindRequest, request: Request) -> JSONResponse:
    criteria: dict[str, Any] = body.model_dump(exclude={"obs_id", "all", "bounds"}, exclude_none=True)
    result = await _device(request, serial).find(criteria, body.obs_id, all_nodes=body.all, bounds=body.bounds)
    return JSONResponse(result)


@router.post("/{serial}/tap")
async def tap(serial: SerialPath, body: TapRequest, request: Request) -> JSONResponse:
    result = await _device(request, serial).tap(**_step_arguments("tap", body))
    return JSONResponse(result)


@router.post("/{serial}/swipe")
async def swipe(serial: SerialPath, body: SwipeRequest, request: Request) -> JSONResponse:
    result = await _device(request, serial).swipe(**_step_arguments("swipe", body))
    return JSONResponse(result)


@router.post("/{serial}/type")
async def type_text(serial: SerialPath, body: TypeRequest, request: Request) -> JSONResponse:
    return JSONResponse(await _device(request, serial).type_text(body.text))


@router.post("/{serial}/key")
async def key(serial: SerialPath, body: KeyRequest, request: Request) -> JSONResponse:
    return JSONResponse(await _device(request, serial).key(body.key))


@router.post("/{serial}/app")
async def app_action(serial: SerialPath, body: AppRequest, request: Request) -> JSONResponse:
    return JSONResponse(await _device(request, serial).app(body.package, body.action))


@router.post("/{serial}/script")
async def script(serial: SerialPath, body: ScriptRequest, request: Request) -> JSONResponse:
    """Several steps in one call, each converted and checked as its single action is; the first failure
    stops the script and is its answer (that step's error, with `stopped_at` and the results so far)."""
    steps = [(action, _step_arguments(action, step)) for action, step in body.parsed_steps()]
    return JSONResponse(await _device(request, serial).script(steps))


@router.get("/{serial}/logcat")
async def logcat(
    serial: SerialPath,
    request: Request,
    lines: Annotated[LogLines, Query()] = 200,
    package: Annotated[str | None, Query(max_length=255)] = None,
    tag: Annotated[LogTag, Query()] = None,
    level: Annotated[LogLevel, Query()] = None,
) -> JSONResponse:
    result = await _device(request, serial).logcat(lines=lines, package=package, tag=tag, level=level)
    return JSONResponse(result)
