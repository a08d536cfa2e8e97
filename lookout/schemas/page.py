"""The page operations' request contracts: the routes of lookout.api.pages and the MCP page tools declare their
fields with these models and types, so the two cannot drift (tests/e2e/test_mcp_contracts.py)."""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import Field

from lookout.schemas.common import Strict

ActionName = Literal["navigate", "click", "type", "fill", "select", "press", "hover", "check", "uncheck", "back",
                     "forward", "reload", "wait", "upload", "dialog"]  # fmt: skip
ImageFormat = Literal["png", "jpeg", "webp"]

Url = Annotated[str | None, Field(max_length=8000)]
ViewportSide = Annotated[int, Field(ge=100, le=8000)]
SnapshotTokens = Annotated[int, Field(ge=100, le=1_000_000, description="the whole text, header included, fits")]
MaxElements = Annotated[int, Field(ge=1, le=100_000)]
InteractiveOnly = Annotated[bool, Field(description="controls, and short text that carries meaning")]
ObsRef = Annotated[str | None, Field(max_length=64)]
Ref = Annotated[str | None, Field(max_length=64, description="an element's ref from the last snapshot")]
MaxDimension = Annotated[int | None, Field(ge=100, le=8000, description="longest side; default 1000")]
FindText = Annotated[
    str, Field(min_length=1, max_length=1000, description="searched in every line of the last snapshot")
]


class Viewport(Strict):
    width: ViewportSide = 1280
    height: ViewportSide = 720


class CreatePage(Strict):
    url: Url = Field(None, description="opened at once (http, https, file, about, data)")
    viewport: Viewport = Field(default_factory=Viewport)
    profile: str | None = Field(
        None, description="a persistent profile (its logins survive the page and the daemon); default: isolated"
    )


class SnapshotRequest(Strict):
    max_elements: MaxElements = 150
    max_tokens: SnapshotTokens = 4000
    viewport_only: bool = False
    interactive_only: InteractiveOnly = False
    full: bool = Field(False, description="no limits at all")
    include_history: bool = Field(True, description="the `# Navigation` breadcrumb of the pages visited before")
    since: ObsRef = Field(None, description="a diff against this earlier snapshot's obs_id")
    expand: Ref = Field(None, description="only the subtree of this ref (a folded one)")


class WaitSpec(Strict):
    text: str | None = Field(None, description="until this text is visible")
    text_gone: str | None = Field(None, description="until this text is hidden or gone")
    url: str | None = Field(None, description="until the URL contains this")
    state: Literal["attached", "detached", "visible", "hidden"] | None = Field(
        None, description="with the action's ref: until that element is in this state (default visible)"
    )
    dom_quiet: bool = Field(False, description="until the DOM has not changed for 300 ms")


class ActionRequest(Strict):
    action: ActionName
    ref: Ref = None
    text: str | None = Field(None, max_length=100_000, description="type, fill; dialog: a prompt's answer")
    submit: bool = Field(False, description="type, fill: press Enter afterwards")
    url: str | None = Field(None, max_length=8000, description="navigate")
    key: str | None = Field(None, max_length=100, description="press: Enter, Tab, Escape, Control+A, ...")
    values: list[str] | None = Field(None, description="select: option labels or values")
    files: list[str] | None = Field(None, description="upload: files in the upload directory (names or paths)")
    accept: bool = Field(False, description="dialog: accept the next dialog, else dismiss it")
    wait: WaitSpec | None = Field(None, description="wait: for text, its disappearance, or a URL; none: network quiet")
    x: float | None = Field(None, description="click: image x of the screenshot obs_id, instead of a ref")
    y: float | None = None
    obs_id: ObsRef = Field(None, description="click at x, y: the screenshot they belong to")
    timeout_ms: int = Field(10_000, ge=100, le=60_000)
    snapshot: SnapshotRequest | None = Field(None, description="also return a snapshot taken after the action")


class PageScreenshot(Strict):
    max_dimension: MaxDimension = None
    raw: bool = Field(False, description="no scaling (adds a warning)")
    format: ImageFormat = "png"
    inline: bool = False
    full_page: bool = Field(False, description="the whole page (clicks by coordinates need a viewport one)")


class FindRequest(Strict):
    text: FindText
    regex: bool = False


class ScriptRequest(Strict):
    steps: list[dict[str, Any]] = Field(
        min_length=1, max_length=100,
        description='each an action object (as for /action, without snapshot), or {"action": "snapshot"} or '
        '{"action": "screenshot"}',
    )  # fmt: skip
    snapshot: SnapshotRequest = Field(default_factory=SnapshotRequest, description="the snapshot at the end")
