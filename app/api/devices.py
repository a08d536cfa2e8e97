"""HTTP adapter for Android devices: request models and routes. The logic is in app.device."""
from __future__ import annotations

import asyncio
from typing import Annotated, Any, Literal

from fastapi import APIRouter, Path, Query, Request
from fastapi.responses import Response
from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

from app.api.responses import MAX_JSON_INT, JSONResponse
from app.core.errors import BadInput
from app.core.images import MEDIA_TYPES
from app.core.private_files import read_bytes
from app.device.logcat import LEVELS
from app.device.manager import LOGCAT_MAX_LINES, DeviceManager
from app.timeline.recording import current_agent

router = APIRouter(prefix="/v1/devices", tags=["devices"])

Serial = Annotated[str, Path(min_length=1, max_length=128, pattern=r"^[\x21-\x7e]+$", description="adb serial")]
ObsId = Annotated[str, Path(min_length=1, max_length=64)]
MAX_STEPS = 50
MAX_WAIT_MS = 30_000


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid")


class ScreenshotRequest(_Strict):
    max_dimension: int | None = Field(None, ge=100, le=8000, description="longest side of the image; default 1000")
    raw: bool = Field(False, description="no scaling: the device's full resolution (costly; adds a warning)")
    format: Literal["png", "jpeg", "webp"] = "png"
    inline: bool = Field(False, description="include the image as base64 in `image_b64`")
    marks: bool = Field(False, description="draw the indices of the UI elements on the image (set-of-marks)")
    ui: bool = Field(False, description="dump the UI right after the frame and return its elements in `ui`, "
                     "in this image's space (one observation: the way to see a screen and act on it)")
    all: bool = Field(False, description="with ui: every node, hidden ones flagged")
    bounds: bool = Field(False, description="with ui: each element's bounds besides its centre")
    max_tokens: int | None = Field(None, ge=50, le=1_000_000, description="with ui: cut the element list to this")


class FindRequest(_Strict):
    text: str | None = None
    resource_id: str | None = None
    desc: str | None = None
    class_name: str | None = None
    regex: bool = Field(False, description="criteria are regular expressions (case-insensitive)")
    obs_id: str | None = Field(None, description="search this observation's UI dump; default: a fresh dump")
    all: bool = Field(False, description="every match as it is, hidden ones flagged; by default a hidden match "
                      "gives way to the visible node carrying the same text or description")
    bounds: bool = Field(False, description="each element's bounds besides its centre")


class TapRequest(_Strict):
    x: float | None = Field(None, description="image pixels of the observation")
    y: float | None = None
    element: int | None = Field(None, ge=0, le=MAX_JSON_INT, description="an element index of the observation's UI dump")
    obs_id: str | None = Field(None, description="default: the device's latest observation")

    @model_validator(mode="after")
    def _one_target(self) -> TapRequest:
        has_point = self.x is not None and self.y is not None
        if has_point == (self.element is not None) or (self.x is None) != (self.y is None):
            raise ValueError("give either x and y, or element")
        return self


class SwipeRequest(_Strict):
    x1: float | None = None
    y1: float | None = None
    x2: float | None = None
    y2: float | None = None
    direction: Literal["up", "down", "left", "right"] | None = Field(
        None, description="the way the finger moves, through the screen's centre (up scrolls content down)"
    )
    distance: float = Field(0.5, gt=0, le=0.95, description="with direction: the fraction of the screen")
    duration_ms: int = Field(300, ge=0, le=60_000)
    obs_id: str | None = None

    @model_validator(mode="after")
    def _one_form(self) -> SwipeRequest:
        coords = [self.x1, self.y1, self.x2, self.y2]
        given = sum(c is not None for c in coords)
        if (given == 4) == (self.direction is not None) or given not in (0, 4):
            raise ValueError("give either x1, y1, x2 and y2, or direction")
        return self

    def points(self) -> tuple[float, float, float, float] | None:
        if self.x1 is None or self.y1 is None or self.x2 is None or self.y2 is None:
            return None  # a swipe by direction (`_one_form`: all four coordinates or none)
        return (self.x1, self.y1, self.x2, self.y2)


class TypeRequest(_Strict):
    text: str = Field(min_length=1, description="printable ASCII; newline and tab are sent as ENTER and TAB")


class KeyRequest(_Strict):
    key: str | int = Field(description="HOME, BACK, ENTER, DEL, APP_SWITCH, VOLUME_UP, ... or a keycode")


class AppRequest(_Strict):
    package: str = Field(min_length=1, max_length=255)
    action: Literal["launch", "stop"] = "launch"


class WaitStep(_Strict):
    ms: int = Field(ge=0, le=MAX_WAIT_MS, description="milliseconds to wait")


class ScreenshotStep(ScreenshotRequest):
    inline: Literal[False] = Field(False, description="a script returns no image data: fetch it from `url`")


_STEP_MODELS: dict[str, type[BaseModel]] = {"tap": TapRequest, "swipe": SwipeRequest, "type": TypeRequest,
                                            "key": KeyRequest, "app": AppRequest, "wait": WaitStep,
                                            "screenshot": ScreenshotStep}  # fmt: skip


class ScriptRequest(_Strict):
    steps: list[dict[str, Any]] = Field(
        min_length=1, max_length=MAX_STEPS,
        description='each {"action": "tap"|"swipe"|"type"|"key"|"app"|"wait"|"screenshot", ...the fields of that '
        'single action (wait: ms; screenshot: without inline)}',
    )  # fmt: skip

    def parsed_steps(self) -> list[tuple[str, dict[str, Any]]]:
        """Every step checked before any runs: (action, the manager's arguments for it)."""
        out = []
        for index, step in enumerate(self.steps):
            action = step.get("action")
            if not isinstance(action, str) or action not in _STEP_MODELS:
                raise BadInput(f"step {index}: action must be one of {', '.join(_STEP_MODELS)}", field="steps")
            fields = {k: v for k, v in step.items() if k != "action"}
            try:
                parsed = _STEP_MODELS[action](**fields)
            except ValidationError as exc:
                problem = exc.errors()[0]
                where = ".".join(str(p) for p in problem.get("loc", ()))
                raise BadInput(f"step {index} ({action}): {where or 'step'}: {problem.get('msg', 'invalid')}",
                               field="steps") from exc  # fmt: skip
            out.append((action, _step_arguments(action, parsed)))
        return out


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
async def screenshot(serial: Serial, request: Request, body: ScreenshotRequest | None = None) -> JSONResponse:
    body = body or ScreenshotRequest()
    result = await _manager(request).screenshot(
        serial, max_dimension=body.max_dimension, raw=body.raw, fmt=body.format, inline=body.inline,
        marks=body.marks, agent=current_agent.get(), ui=body.ui, all_nodes=body.all, bounds=body.bounds,
        max_tokens=body.max_tokens,
    )  # fmt: skip
    return JSONResponse(result)


@router.get("/{serial}/observations/{obs_id}/image")
async def observation_image(serial: Serial, obs_id: ObsId, request: Request) -> Response:
    path, fmt = _manager(request).image(serial, obs_id)
    return Response(await asyncio.to_thread(read_bytes, path), media_type=MEDIA_TYPES[fmt])  # links not followed


@router.get("/{serial}/ui")
async def ui(
    serial: Serial,
    request: Request,
    obs_id: str | None = None,
    max_tokens: Annotated[int | None, Query(ge=50, le=1_000_000)] = None,
    all: Annotated[bool, Query(description="every node as it is, hidden ones flagged")] = False,
    bounds: Annotated[bool, Query(description="each element's bounds besides its centre")] = False,
) -> JSONResponse:
    result = await _manager(request).ui(
        serial, obs_id=obs_id, all_nodes=all, max_tokens=max_tokens, agent=current_agent.get(), bounds=bounds
    )
    return JSONResponse(result)


@router.post("/{serial}/find")
async def find(serial: Serial, body: FindRequest, request: Request) -> JSONResponse:
    criteria: dict[str, Any] = body.model_dump(exclude={"obs_id", "all", "bounds"}, exclude_none=True)
    result = await _manager(request).find(serial, criteria, body.obs_id, current_agent.get(), all_nodes=body.all,
                                          bounds=body.bounds)  # fmt: skip
    return JSONResponse(result)


@router.post("/{serial}/tap")
async def tap(serial: Serial, body: TapRequest, request: Request) -> JSONResponse:
    result = await _manager(request).tap(serial, **_step_arguments("tap", body), agent=current_agent.get())
    return JSONResponse(result)


@router.post("/{serial}/swipe")
async def swipe(serial: Serial, body: SwipeRequest, request: Request) -> JSONResponse:
    result = await _manager(request).swipe(serial, **_step_arguments("swipe", body), agent=current_agent.get())
    return JSONResponse(result)


@router.post("/{serial}/type")
async def type_text(serial: Serial, body: TypeRequest, request: Request) -> JSONResponse:
    return JSONResponse(await _manager(request).type_text(serial, body.text, current_agent.get()))


@router.post("/{serial}/key")
async def key(serial: Serial, body: KeyRequest, request: Request) -> JSONResponse:
    return JSONResponse(await _manager(request).key(serial, body.key, current_agent.get()))


@router.post("/{serial}/app")
async def app_action(serial: Serial, body: AppRequest, request: Request) -> JSONResponse:
    return JSONResponse(await _manager(request).app(serial, body.package, body.action, current_agent.get()))


@router.post("/{serial}/script")
async def script(serial: Serial, body: ScriptRequest, request: Request) -> JSONResponse:
    """Several steps in one call, each converted as its single action is; stops at the first failure and
    says which step (`stopped_at`)."""
    return JSONResponse(await _manager(request).script(serial, body.parsed_steps(), current_agent.get()))


@router.get("/{serial}/logcat")
async def logcat(
    serial: Serial,
    request: Request,
    lines: Annotated[int, Query(ge=1, le=LOGCAT_MAX_LINES)] = 200,
    package: str | None = None,
    tag: str | None = Query(None, max_length=200),
    level: Annotated[str | None, Query(pattern=f"^[{LEVELS}]$", description="minimum level: V D I W E F")] = None,
) -> JSONResponse:
    result = await _manager(request).logcat(serial, lines=lines, package=package, tag=tag, level=level)
    return JSONResponse(result)
