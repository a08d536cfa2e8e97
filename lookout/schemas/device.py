"""The device operations' request contracts: the routes of lookout.api.devices and the MCP device tools declare
their fields with these models and types, so the two cannot drift (tests/e2e/test_mcp_contracts.py)."""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import BaseModel, Field, ValidationError, model_validator

from lookout.core.errors import BadInput
from lookout.device.logcat import LEVELS, LOGCAT_MAX_LINES
from lookout.schemas.common import MAX_JSON_INT, Strict

MAX_STEPS = 50
MAX_WAIT_MS = 30_000

SERIAL = {"min_length": 1, "max_length": 128, "pattern": r"^[\x21-\x7e]+$"}
"""The constraints of an adb serial (a path parameter of every device route)."""
Serial = Annotated[str, Field(**SERIAL, description="adb serial, from device_list")]
ObsId = Annotated[str | None, Field(max_length=64)]
MaxDimension = Annotated[int | None, Field(ge=100, le=8000, description="longest side; default 1000")]
ImageFormat = Literal["png", "jpeg", "webp"]
UiMaxTokens = Annotated[int | None, Field(ge=50, le=1_000_000, description="cut the elements to this; default 4000")]
AllNodes = Annotated[bool, Field(description="every node, hidden ones flagged")]
Bounds = Annotated[bool, Field(description="each element's bounds besides its centre")]
Coordinate = float | None
Direction = Literal["up", "down", "left", "right"]
HoldMs = Annotated[int | None, Field(ge=1, le=10_000, description="hold this long: a long press")]
Key = Annotated[str | int, Field(description="HOME, BACK, ENTER, DEL, ... or a keycode")]
Package = Annotated[str, Field(min_length=1, max_length=255)]
LogLines = Annotated[int, Field(ge=1, le=LOGCAT_MAX_LINES)]
LogTag = Annotated[str | None, Field(max_length=200)]
LogLevel = Annotated[str | None, Field(pattern=f"^[{LEVELS}]$", description="the lowest level shown")]


class ScreenshotRequest(Strict):
    max_dimension: MaxDimension = None
    raw: bool = Field(False, description="no scaling: the device's full resolution (costly; adds a warning)")
    format: ImageFormat = "png"
    inline: bool = Field(False, description="include the image as base64 in `image_b64`")
    marks: bool = Field(False, description="draw each UI element's index on the image")
    ui: bool = Field(False, description="also the UI's elements, in this image's pixels")
    all: AllNodes = False
    bounds: Bounds = False
    max_tokens: UiMaxTokens = None


class FindRequest(Strict):
    text: str | None = None
    resource_id: str | None = None
    desc: str | None = None
    class_name: str | None = None
    regex: bool = Field(False, description="criteria are regular expressions (case-insensitive)")
    obs_id: ObsId = None
    all: bool = Field(
        False,
        description="every match as it is, hidden ones flagged; by default a hidden match "
        "gives way to the visible node carrying the same text or description",
    )
    bounds: Bounds = False


class TapRequest(Strict):
    x: Coordinate = Field(None, description="image pixels of the observation")
    y: Coordinate = None
    element: int | None = Field(None, ge=0, le=MAX_JSON_INT, description="an element index of the observation")
    obs_id: ObsId = Field(None, description="default: the device's latest observation")
    hold_ms: HoldMs = None

    @model_validator(mode="after")
    def _one_target(self) -> TapRequest:
        has_point = self.x is not None and self.y is not None
        if has_point == (self.element is not None) or (self.x is None) != (self.y is None):
            raise ValueError("give either x and y, or element")
        return self


class SwipeRequest(Strict):
    x1: Coordinate = None
    y1: Coordinate = None
    x2: Coordinate = None
    y2: Coordinate = None
    direction: Direction | None = Field(None, description="the finger's way through the centre (up scrolls down)")
    distance: float = Field(0.5, gt=0, le=0.95, description="with direction: the fraction of the screen")
    duration_ms: int = Field(300, ge=0, le=60_000)
    obs_id: ObsId = None

    @model_validator(mode="after")
    def _one_form(self) -> SwipeRequest:
        coords = [self.x1, self.y1, self.x2, self.y2]
        given = sum(c is not None for c in coords)
        if (given == 4) == (self.direction is not None) or given not in (0, 4):
            raise ValueError("give either x1, y1, x2 and y2, or direction")
        return self

    def points(self) -> tuple[float, float, float, float] | None:
        if self.direction is not None:
            return None
        return (self.x1, self.y1, self.x2, self.y2)  # type: ignore[return-value]


class TypeRequest(Strict):
    text: str = Field(min_length=1, description="printable ASCII; newline = ENTER, tab = TAB")


class KeyRequest(Strict):
    key: Key


class AppRequest(Strict):
    package: Package
    action: Literal["launch", "stop"] = "launch"


class WaitStep(Strict):
    ms: int = Field(ge=0, le=MAX_WAIT_MS, description="milliseconds to wait")


class ScreenshotStep(ScreenshotRequest):
    inline: Literal[False] = Field(False, description="a script returns no image data: fetch it from `url`")


STEP_MODELS: dict[str, type[BaseModel]] = {"tap": TapRequest, "swipe": SwipeRequest, "type": TypeRequest,
                                           "key": KeyRequest, "app": AppRequest, "wait": WaitStep,
                                           "screenshot": ScreenshotStep}  # fmt: skip

Steps = Annotated[
    list[dict[str, Any]],
    Field(min_length=1, max_length=MAX_STEPS,
          description='{"action": tap|swipe|type|key|app|wait|screenshot, ...its fields}; wait: ms'),
]  # fmt: skip


class ScriptRequest(Strict):
    steps: Steps

    def parsed_steps(self) -> list[tuple[str, BaseModel]]:
        """Every step checked before any runs: (action, its validated model)."""
        out = []
        for index, step in enumerate(self.steps):
            action = step.get("action")
            model = STEP_MODELS.get(action) if isinstance(action, str) else None
            if model is None or not isinstance(action, str):
                raise BadInput(f"step {index}: action must be one of {', '.join(STEP_MODELS)}", field="steps")
            fields = {k: v for k, v in step.items() if k != "action"}
            try:
                parsed = model(**fields)
            except ValidationError as exc:
                problem = exc.errors()[0]
                where = ".".join(str(p) for p in problem.get("loc", ()))
                raise BadInput(f"step {index} ({action}): {where or 'step'}: {problem.get('msg', 'invalid')}",
                               field="steps") from exc  # fmt: skip
            out.append((action, parsed))
        return out
