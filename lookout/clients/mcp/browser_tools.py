"""The browser page tools: each one request to /v1/pages, its arguments typed as lookout.schemas.page declares
them. Snapshots come back as budgeted text with refs."""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable
from typing import Annotated, Any
from urllib.parse import quote

from mcp.server.mcpserver import Context
from mcp.types import ToolAnnotations
from pydantic import Field

from lookout.clients.mcp.daemon import call
from lookout.clients.mcp.images import image_result
from lookout.schemas.page import (
    ActionName,
    FindText,
    MaxDimension,
    ObsRef,
    Ref,
    Url,
    ViewportSide,
)  # fmt: skip

IMAGE_FORMAT = "jpeg"
"""What page screenshots are sent as: bench/mcp_tools.py measures it against PNG at the same size."""


def _path(page_id: str, *rest: str) -> str:
    return "/".join(("/v1/pages", quote(page_id, safe=""), *rest))


async def browser_open(
    ctx: Context,
    url: Url = None,
    width: ViewportSide = 1280,
    height: ViewportSide = 720,
    profile: str | None = None,
) -> str:
    """Open a page in headless Chromium (a profile keeps its logins): {id, url, title}; browser_close it after."""
    body = {"url": url, "viewport": {"width": width, "height": height}, "profile": profile}
    return await call(ctx, "POST", "/v1/pages", body=body)


async def browser_pages(ctx: Context) -> str:
    """Open pages: {pages: [{id, url, title}]}."""
    return await call(ctx, "GET", "/v1/pages")


async def browser_close(ctx: Context, page_id: str) -> str:
    """Close a page, freeing its memory."""
    return await call(ctx, "DELETE", _path(page_id))


async def browser_snapshot(
    ctx: Context,
    page_id: str,
    max_tokens: Annotated[int, Field(ge=100)] = 4000,
    interactive_only: bool = False,
    viewport_only: bool = False,
    since: Annotated[ObsRef, Field(description="an obs_id: only changes since")] = None,
    expand: Annotated[Ref, Field(description="a folded ref: its subtree")] = None,
    find: Annotated[FindText | None, Field(description="search the last snapshot instead")] = None,
) -> str:
    """The page as text within max_tokens: `- role "name" [ref=e12]` lines, on-screen first, the rest
    folded."""
    if find is not None:
        return await call(ctx, "POST", _path(page_id, "find"), body={"text": find})
    body = {"max_tokens": max_tokens, "interactive_only": interactive_only, "viewport_only": viewport_only,
            "since": since, "expand": expand}  # fmt: skip
    answer = json.loads(await call(ctx, "POST", _path(page_id, "snapshot"), body=body))
    return f"{answer['text']}\n# obs_id: {answer['obs_id']}"


async def browser_action(
    ctx: Context,
    page_id: str,
    action: ActionName,
    ref: str | None = None,
    text: str | None = None,
    submit: Annotated[bool, Field(description="Enter after typing")] = False,
    url: str | None = None,
    key: Annotated[str | None, Field(description="Enter, Control+A, ...")] = None,
    values: Annotated[list[str] | None, Field(description="select's options")] = None,
    files: Annotated[list[str] | None, Field(description="names in the upload dir")] = None,
    accept: Annotated[bool, Field(description="dialog: accept (text: prompt answer), else dismiss")] = False,
    wait_text: str | None = None,
    x: float | None = None,
    y: float | None = None,
    obs_id: Annotated[ObsRef, Field(description="x, y: the screenshot's")] = None,
    snapshot: Annotated[bool, Field(description="snapshot after")] = False,
) -> str:
    """Act on a ref or screenshot x, y; let the page settle: {ok, url, title, effects}, ~60 tokens. A stale
    ref is refused."""
    body = {"action": action, "ref": ref, "text": text, "submit": submit or None, "url": url, "key": key,
            "values": values, "files": files, "accept": accept or None,
            "wait": {"text": wait_text} if wait_text else None, "x": x, "y": y, "obs_id": obs_id,
            "snapshot": {} if snapshot else None}  # fmt: skip
    return await call(ctx, "POST", _path(page_id, "action"), body=body, wait_s=15)


async def browser_script(
    ctx: Context,
    page_id: str,
    steps: Annotated[
        list[dict[str, Any]],
        Field(min_length=1, max_length=100, description='browser_action arguments each, or {"action": "snapshot"}'),
    ],
    max_tokens: Annotated[int, Field(ge=100)] = 2000,
) -> str:
    """Several actions; stops at the first failure; ends with a snapshot."""
    body = {"steps": steps, "snapshot": {"max_tokens": max_tokens}}
    return await call(ctx, "POST", _path(page_id, "script"), body=body, wait_s=60)


async def browser_screenshot(
    ctx: Context, page_id: str, full_page: bool = False, max_dimension: MaxDimension = None
) -> list[Any]:
    """The page as an image (~750 tokens) and {obs_id, scale_factor}."""
    body = {"max_dimension": max_dimension, "full_page": full_page, "format": IMAGE_FORMAT, "inline": True}
    return image_result(await call(ctx, "POST", _path(page_id, "screenshot"), body=body))


_READ = ToolAnnotations(read_only_hint=True)
_WRITE = None

TOOLS: list[tuple[Callable[..., Awaitable[Any]], ToolAnnotations | None]] = [
    (browser_open, _WRITE),
    (browser_pages, _READ),
    (browser_snapshot, _READ),
    (browser_action, _WRITE),
    (browser_script, _WRITE),
    (browser_screenshot, _READ),
    (browser_close, ToolAnnotations(destructive_hint=True)),
]
