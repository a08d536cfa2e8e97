"""HTTP adapter for browser pages: the routes. Their contracts are in lookout.schemas.page, the logic in lookout.browser."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import TYPE_CHECKING

from fastapi import APIRouter, Request
from fastapi.responses import Response
from pydantic import ValidationError

from lookout.api.leases import add_lease_routes
from lookout.api.responses import JSONResponse
from lookout.core.errors import BadInput
from lookout.core.images import MEDIA_TYPES
from lookout.core.private_files import read_bytes
from lookout.schemas.page import (
    ActionRequest,
    CreatePage,
    FindRequest,
    PageScreenshot,
    ScriptRequest,
    SnapshotRequest,
)  # fmt: skip

if TYPE_CHECKING:  # a page's code is loaded with the first page (the daemon's start is every restart's floor)
    from lookout.browser.action_kinds import Action
    from lookout.browser.page import Page
    from lookout.browser.registry import PageRegistry
    from lookout.browser.snapshot_view import SnapshotOptions

# served under its prefix in lookout.server.INCLUDED_ON_FIRST_USE, included on first use
router = APIRouter(tags=["pages"])


def _options(body: SnapshotRequest) -> SnapshotOptions:
    from lookout.browser.snapshot_view import SnapshotOptions

    return SnapshotOptions(
        body.max_elements, body.max_tokens, body.viewport_only, body.interactive_only, body.full, body.include_history,
    )  # fmt: skip


def _steps(body: ScriptRequest, files: Callable[[list[str]], tuple[str, ...]]) -> list[Action | str]:
    """Every step checked before any runs: an Action, or "snapshot" / "screenshot"."""
    from lookout.browser.action_kinds import from_request

    out: list[Action | str] = []
    for index, step in enumerate(body.steps):
        if step.get("action") in ("snapshot", "screenshot") and len(step) == 1:
            out.append(step["action"])
            continue
        try:
            parsed = ActionRequest(**step)
        except ValidationError as exc:
            problem = exc.errors()[0]
            where = ".".join(str(p) for p in problem.get("loc", ()))
            raise BadInput(f"step {index}: {where or 'step'}: {problem.get('msg', 'invalid')}", field="steps") from exc
        paths = files(parsed.files) if parsed.files else ()
        try:
            out.append(from_request(parsed, paths))
        except BadInput as exc:
            raise BadInput(f"step {index}: {exc.message}", field="steps") from exc
    return out


def _registry(request: Request) -> PageRegistry:
    return request.app.state.pages


def _page(request: Request, page_id: str) -> Page:
    return _registry(request).get(page_id)


async def _found(request: Request, page_id: str) -> Page:
    return _page(request, page_id)


add_lease_routes(router, "page", _found)


@router.post("", status_code=201)
async def create_page(body: CreatePage, request: Request) -> JSONResponse:
    page = await _registry(request).create(body.url, (body.viewport.width, body.viewport.height), body.profile)
    return JSONResponse(page, status_code=201)


@router.get("")
async def list_pages(request: Request) -> JSONResponse:
    return JSONResponse({"pages": await _registry(request).describe_all()})


@router.get("/{page_id}")
async def get_page(page_id: str, request: Request) -> JSONResponse:
    return JSONResponse(await _page(request, page_id).describe())


@router.delete("/{page_id}")
async def close_page(page_id: str, request: Request) -> JSONResponse:
    return JSONResponse(await _registry(request).close(page_id))


@router.post("/{page_id}/snapshot")
async def snapshot(page_id: str, request: Request, body: SnapshotRequest | None = None) -> JSONResponse:
    body = body or SnapshotRequest()
    result = await _page(request, page_id).snapshot(_options(body), since=body.since, expand=body.expand)
    return JSONResponse(result)


@router.post("/{page_id}/find")
async def find(page_id: str, body: FindRequest, request: Request) -> JSONResponse:
    """Text or regex search over the page's last snapshot, folded parts included: each match's line (with
    its ref) and the lines of its ancestors."""
    return JSONResponse(await _page(request, page_id).find(body.text, body.regex))


@router.post("/{page_id}/action")
async def action(page_id: str, body: ActionRequest, request: Request) -> JSONResponse:
    """One action; then the page settles, and the answer says what it did (`effects`)."""
    options = _options(body.snapshot) if body.snapshot is not None else None
    files = _registry(request).upload_paths(body.files) if body.files else ()
    from lookout.browser.action_kinds import from_request

    return JSONResponse(await _page(request, page_id).act(from_request(body, files), options))


@router.post("/{page_id}/screenshot")
async def screenshot(page_id: str, request: Request, body: PageScreenshot | None = None) -> JSONResponse:
    """The page as an image, scaled like a device screenshot (the same contract: scale_factor, obs_id)."""
    body = body or PageScreenshot()
    limit = None if body.raw else (body.max_dimension or request.app.state.settings.device_max_dimension)
    result = await _page(request, page_id).screenshot(
        max_dimension=limit, fmt=body.format, inline=body.inline, full_page=body.full_page
    )
    return JSONResponse(result)


@router.get("/{page_id}/observations/{obs_id}")
async def observation(page_id: str, obs_id: str, request: Request) -> JSONResponse:
    """A stored observation as it was answered (a snapshot's text, or a screenshot's scale), without the raw
    accessibility tree it was made from."""
    stored = await asyncio.to_thread(_registry(request).observation, page_id, obs_id)
    return JSONResponse({key: value for key, value in stored.items() if key != "raw"})


@router.get("/{page_id}/observations/{obs_id}/image")
async def observation_image(page_id: str, obs_id: str, request: Request) -> Response:
    path, fmt = _registry(request).image(page_id, obs_id)
    return Response(await asyncio.to_thread(read_bytes, path), media_type=MEDIA_TYPES[fmt])  # links not followed


@router.get("/{page_id}/downloads/{name}")
async def download(page_id: str, name: str, request: Request) -> Response:
    """A file an action of the page downloaded (its answer's `effects.downloads` names it), also once the page
    is closed."""
    path = _registry(request).download(page_id, name)
    headers = {"Content-Disposition": f'attachment; filename="{name}"'}
    return Response(await asyncio.to_thread(read_bytes, path), media_type="application/octet-stream", headers=headers)


@router.post("/{page_id}/script")
async def script(page_id: str, body: ScriptRequest, request: Request) -> JSONResponse:
    """Several steps in one call; stops at the first failing step (or an unexpected navigation) and says
    which, then returns each step's result and one budgeted snapshot."""
    steps = _steps(body, _registry(request).upload_paths)
    result = await _page(request, page_id).script(steps, _options(body.snapshot))
    return JSONResponse(result)
