"""HTTP adapter for the timeline: frames, the history within a budget, and ranges fetched back."""

from __future__ import annotations

import asyncio
from typing import Annotated, Literal

from fastapi import APIRouter, Path, Query, Request
from fastapi.responses import FileResponse
from starlette.background import BackgroundTask

from lookout.api.responses import JSONResponse
from lookout.core.ids import new_id
from lookout.core.private_files import make_dir
from lookout.schemas.common import MAX_JSON_INT
from lookout.timeline.export import KINDS, export_run
from lookout.timeline.timeline import MAX_EXTRACT_FRAMES, MAX_FRAMES_PAGE, Timeline

router = APIRouter(prefix="/v1/timeline", tags=["timeline"])

Seq = Annotated[int | None, Query(ge=1, le=MAX_JSON_INT)]
Agent = Annotated[str | None, Query(max_length=100, description="only this agent's frames")]
Resource = Annotated[
    str | None,
    Query(max_length=200, description="only this resource's frames (terminal:<id>, device:<serial>, page:<id>)"),
]


def _timeline(request: Request) -> Timeline:
    return request.app.state.timeline


@router.get("/frames")
async def frames(
    request: Request,
    from_: Annotated[Seq, Query(alias="from")] = None,
    to: Seq = None,
    agent: Agent = None,
    resource: Resource = None,
    limit: Annotated[int, Query(ge=1, le=MAX_FRAMES_PAGE)] = 200,
    text: Annotated[bool, Query(description="include every level's text")] = False,
) -> JSONResponse:
    """Frames in order: from `from` on (`next_from` pages on), else the last `limit` up to `to`."""
    result = await asyncio.to_thread(_timeline(request).frames, from_, to, agent, resource, limit, text)
    return JSONResponse(result)


@router.get("/frames/{seq}")
async def frame(request: Request, seq: Annotated[int, Path(le=MAX_JSON_INT)]) -> JSONResponse:
    """One frame with what the agent was given in it: the terminal screen it read (rebuilt at that offset),
    the page snapshot's text, the device screenshot with its elements. 410 when that record is gone."""
    found = await asyncio.to_thread(_timeline(request).frame, seq)
    kind, _, name = str(found.get("resource", "")).partition(":")
    registry = request.app.state.registries.get(KINDS.get(kind, ""))
    refs = found.get("refs") or {}
    observation = await registry.observed(name, refs) if registry is not None and name else None
    return JSONResponse({"frame": found, "observation": observation})


@router.get(
    "/export",
    response_class=FileResponse,
    responses={200: {"content": {"application/gzip": {}}, "description": "the archive (tar.gz)"}},
)
async def export(
    request: Request,
    agent: Agent = None,
    from_: Annotated[Seq, Query(alias="from")] = None,
    to: Seq = None,
) -> FileResponse:
    """One archive (tar.gz) of a run: the agent's frames from `from` to `to` with the observations and
    terminal journal ranges they show; `lookout replay FILE` serves it read-only."""
    state = request.app.state
    folder = state.settings.data_dir / "exports"
    await asyncio.to_thread(make_dir, folder)
    dest = folder / f"{new_id('x')}.tar.gz"
    try:
        held = await asyncio.to_thread(export_run, _timeline(request), state.registries, agent, from_, to, dest)
    except BaseException:
        dest.unlink(missing_ok=True)
        raise
    headers = {"X-Lookout-Frames": str(held["frames"]), "X-Lookout-Files": str(held["files"])}
    return FileResponse(dest, media_type="application/gzip", filename=f"lookout-run-{held['from']}-{held['to']}.tar.gz",
                        headers=headers, background=BackgroundTask(dest.unlink, missing_ok=True))  # fmt: skip


@router.get("/context")
async def context(
    request: Request,
    budget: Annotated[int, Query(ge=1, le=2_000_000, description="tokens the messages may take in all")] = 8000,
    agent: Agent = None,
    resource: Resource = None,
) -> JSONResponse:
    """The history as messages within `budget` tokens (o200k_base, counted on the messages' contents)."""
    return JSONResponse(await asyncio.to_thread(_timeline(request).context, budget, agent, resource))


@router.get("/extract")
async def extract(
    request: Request,
    from_: Annotated[int, Query(alias="from", ge=1, le=MAX_JSON_INT)],
    to: Annotated[int, Query(ge=1, le=MAX_JSON_INT)],
    agent: Agent = None,
    resource: Resource = None,
    level: Literal["full", "diff", "line"] = "full",
    limit: Annotated[int, Query(ge=1, le=MAX_EXTRACT_FRAMES)] = 500,
) -> JSONResponse:
    """The frames of a range as they were captured, at one level of detail (`next_from` when cut)."""
    result = await asyncio.to_thread(_timeline(request).extract, from_, to, agent, resource, level, limit)
    return JSONResponse(result)
