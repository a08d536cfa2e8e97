"""HTTP adapter for browser pages: request models and routes. The logic is in app.browser."""
from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Any, Literal

from fastapi import APIRouter, Request
from fastapi.responses import Response
from pydantic import BaseModel, ConfigDict, Field, ValidationError

from app.api.responses import JSONResponse
from app.browser.actions import Action, ActionName
from app.browser.pages import PageManager
from app.browser.snapshot_view import SnapshotOptions
from app.core.errors import BadInput
from app.core.images import MEDIA_TYPES
from app.core.private_files import read_bytes

router = APIRouter(prefix="/v1/pages", tags=["pages"])


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid")


class Viewport(_Strict):
    width: int = Field(1280, ge=100, le=8000)
    height: int = Field(720, ge=100, le=8000)


class CreatePage(_Strict):
    url: str | None = Field(None, max_length=8000, description="opened at once (http, https, file, about, data)")
    viewport: Viewport = Field(default_factory=Viewport)


class SnapshotRequest(_Strict):
    max_elements: int = Field(150, ge=1, le=100_000)
    max_tokens: int = Field(4000, ge=100, le=1_000_000, description="the whole text, header included, fits")
    viewport_only: bool = False
    interactive_only: bool = Field(False, description="controls, and short text that carries meaning")
    full: bool = Field(False, description="no limits at all")
    include_history: bool = Field(True, description="the `# Navigation` breadcrumb of the pages visited before")
    since: str | None = Field(None, max_length=64, description="a diff against this earlier snapshot's obs_id")
    expand: str | None = Field(None, max_length=64, description="only the subtree of this ref (a folded one)")

    def options(self) -> SnapshotOptions:
        return SnapshotOptions(
            self.max_elements, self.max_tokens, self.viewport_only, self.interactive_only, self.full,
            self.include_history,
        )  # fmt: skip


class WaitSpec(_Strict):
    text: str | None = Field(None, description="until this text is visible")
    text_gone: str | None = Field(None, description="until this text is hidden or gone")
    url: str | None = Field(None, description="until the URL contains this")
    state: Literal["attached", "detached", "visible", "hidden"] | None = Field(
        None, description="with the action's ref: until that element is in this state (default visible)"
    )
    dom_quiet: bool = Field(False, description="until the DOM has not changed for 300 ms")


class ActionRequest(_Strict):
    action: ActionName
    ref: str | None = Field(None, max_length=64, description="an element's ref from the page's last snapshot")
    text: str | None = Field(None, max_length=100_000, description="type, fill")
    submit: bool = Field(False, description="type, fill: press Enter afterwards")
    url: str | None = Field(None, max_length=8000, description="navigate")
    key: str | None = Field(None, max_length=100, description="press: Enter, Tab, Escape, Control+A, ...")
    values: list[str] | None = Field(None, description="select: option labels or values")
    files: list[str] | None = Field(None, description="upload: files in the upload directory (names or paths)")
    accept: bool = Field(False, description="dialog: accept the next dialog (with text for a prompt), else dismiss")
    wait: WaitSpec | None = Field(None, description="wait: for text, its disappearance, or a URL; none: network quiet")
    x: float | None = Field(None, description="click: image x of the screenshot obs_id, instead of a ref")
    y: float | None = None
    obs_id: str | None = Field(None, description="click at x, y: the screenshot they belong to")
    timeout_ms: int = Field(10_000, ge=100, le=60_000)
    snapshot: SnapshotRequest | None = Field(None, description="also return a snapshot taken after the action")

    def to_action(self, files: tuple[str, ...] = ()) -> Action:
        wait = self.wait or WaitSpec()
        return Action(
            self.action, self.ref, self.text, self.url, self.key, tuple(self.values or ()), self.submit,
            wait.text, wait.text_gone, wait.url, wait.state, wait.dom_quiet, self.timeout_ms, files, self.accept,
            self.x, self.y, self.obs_id,
        )  # fmt: skip


class PageScreenshot(_Strict):
    max_dimension: int | None = Field(None, ge=100, le=8000, description="longest side; default 1000")
    raw: bool = Field(False, description="no scaling (adds a warning)")
    format: Literal["png", "jpeg", "webp"] = "png"
    inline: bool = False
    full_page: bool = Field(False, description="the whole page (clicks by coordinates need a viewport one)")


def _manager(request: Request) -> PageManager:
    return request.app.state.pages


@router.post("", status_code=201)
async def create_page(body: CreatePage, request: Request) -> JSONResponse:
    page = await _manager(request).create(body.url, (body.viewport.width, body.viewport.height))
    return JSONResponse(page, status_code=201)


@router.get("")
async def list_pages(request: Request) -> JSONResponse:
    return JSONResponse({"pages": await _manager(request).describe_all()})


@router.get("/{page_id}")
async def get_page(page_id: str, request: Request) -> JSONResponse:
    manager = _manager(request)
    return JSONResponse(await manager.describe(manager.get(page_id)))


@router.delete("/{page_id}")
async def close_page(page_id: str, request: Request) -> JSONResponse:
    return JSONResponse(await _manager(request).close(page_id))


@router.post("/{page_id}/snapshot")
async def snapshot(page_id: str, request: Request, body: SnapshotRequest | None = None) -> JSONResponse:
    body = body or SnapshotRequest()
    result = await _manager(request).snapshot(page_id, body.options(), since=body.since, expand=body.expand)
    return JSONResponse(result)


class FindRequest(_Strict):
    text: str = Field(min_length=1, max_length=1000, description="searched in every line of the last snapshot")
    regex: bool = False


@router.post("/{page_id}/find")
async def find(page_id: str, body: FindRequest, request: Request) -> JSONResponse:
    """Text or regex search over the page's last snapshot, folded parts included: each match's line (with
    its ref) and the lines of its ancestors."""
    return JSONResponse(await _manager(request).find(page_id, body.text, body.regex))


@router.post("/{page_id}/action")
async def action(page_id: str, body: ActionRequest, request: Request) -> JSONResponse:
    """One action; then the page settles, and the answer says what it did (`effects`)."""
    options = body.snapshot.options() if body.snapshot is not None else None
    manager = _manager(request)
    files = manager.upload_paths(body.files) if body.files else ()
    return JSONResponse(await manager.act(page_id, body.to_action(files), options))


@router.post("/{page_id}/screenshot")
async def screenshot(page_id: str, request: Request, body: PageScreenshot | None = None) -> JSONResponse:
    """The page as an image, scaled like a device screenshot (the same contract: scale_factor, obs_id)."""
    body = body or PageScreenshot()
    limit = None if body.raw else (body.max_dimension or request.app.state.settings.device_max_dimension)
    result = await _manager(request).screenshot(
        page_id, max_dimension=limit, fmt=body.format, inline=body.inline, full_page=body.full_page
    )
    return JSONResponse(result)


@router.get("/{page_id}/observations/{obs_id}")
async def observation(page_id: str, obs_id: str, request: Request) -> JSONResponse:
    """A stored observation as it was answered (a snapshot's text, or a screenshot's scale), without the raw
    accessibility tree it was made from."""
    stored = await asyncio.to_thread(_manager(request).observation, page_id, obs_id)
    return JSONResponse({key: value for key, value in stored.items() if key != "raw"})


@router.get("/{page_id}/observations/{obs_id}/image")
async def observation_image(page_id: str, obs_id: str, request: Request) -> Response:
    path, fmt = _manager(request).image(page_id, obs_id)
    return Response(await asyncio.to_thread(read_bytes, path), media_type=MEDIA_TYPES[fmt])  # links not followed


class ScriptRequest(_Strict):
    steps: list[dict[str, Any]] = Field(
        min_length=1, max_length=100,
        description='each an action object (as for /action, without snapshot), or {"action": "snapshot"} or '
        '{"action": "screenshot"}',
    )  # fmt: skip
    snapshot: SnapshotRequest = Field(default_factory=SnapshotRequest, description="the snapshot at the end")

    def parsed_steps(self, files: Callable[[list[str]], tuple[str, ...]]) -> list[Action | str]:
        out: list[Action | str] = []
        for index, step in enumerate(self.steps):
            if step.get("action") in ("snapshot", "screenshot") and len(step) == 1:
                out.append(step["action"])
                continue
            try:
                parsed = ActionRequest(**step)
            except ValidationError as exc:
                problem = exc.errors()[0]
                where = ".".join(str(p) for p in problem.get("loc", ()))
                raise BadInput(f"step {index}: {where or 'step'}: {problem.get('msg', 'invalid')}", field="steps") from exc
            out.append(parsed.to_action(files(parsed.files) if parsed.files else ()))
        return out


@router.post("/{page_id}/script")
async def script(page_id: str, body: ScriptRequest, request: Request) -> JSONResponse:
    """Several steps in one call; stops at the first failing step (or an unexpected navigation) and says
    which, then returns each step's result and one budgeted snapshot."""
    manager = _manager(request)
    result = await manager.script(page_id, body.parsed_steps(manager.upload_paths), body.snapshot.options())
    return JSONResponse(result)
