"""The browser page tools: each one request to /v1/pages. Snapshots come back as budgeted text with refs."""
from __future__ import annotations

import json
from collections.abc import Awaitable, Callable
from typing import Annotated, Any
from urllib.parse import quote

from mcp.server.mcpserver import Context
from mcp.types import ToolAnnotations
from pydantic import Field

from clients.mcp.daemon import call

PageId = Annotated[str, Field(min_length=1, description="the page's id, from browser_open or browser_pages")]


def _path(page_id: str, *rest: str) -> str:
    return "/".join(("/v1/pages", quote(page_id, safe=""), *rest))


async def browser_open(
    ctx: Context,
    url: Annotated[str | None, Field(description="http(s), file, about or data URL; none: a blank page")] = None,
    width: Annotated[int, Field(ge=100, le=8000)] = 1280,
    height: Annotated[int, Field(ge=100, le=8000)] = 720,
) -> str:
    """Open a page in lookout's headless Chromium and load the URL: {id, url, title, viewport}, about 60
    tokens. Then read it with browser_snapshot."""
    body = {"url": url, "viewport": {"width": width, "height": height}}
    return await call(ctx, "POST", "/v1/pages", body=body)


async def browser_pages(ctx: Context) -> str:
    """Every open page: {pages: [{id, url, title, last_obs, ...}]}, about 60 tokens each."""
    return await call(ctx, "GET", "/v1/pages")


async def browser_snapshot(
    ctx: Context,
    page_id: PageId,
    max_tokens: Annotated[int, Field(ge=100, le=100_000, description="the whole answer fits this")] = 4000,
    max_elements: Annotated[int, Field(ge=1, le=100_000)] = 150,
    viewport_only: Annotated[bool, Field(description="only what is on screen")] = False,
    interactive_only: Annotated[bool, Field(description="controls, and short text that carries meaning")] = False,
    full: Annotated[bool, Field(description="no limits (can be tens of thousands of tokens)")] = False,
) -> str:
    """The page's accessibility tree as text within max_tokens (header included): one element a line,
    `- role "name" [flags] [ref=e12]`, indented by nesting. The most useful elements come first (controls,
    what is in or near the viewport); what was left out is folded into lines that say how many of what.
    The header says the page, `# Elements: shown of total (truncated: why)` and `# Tokens`. Refs name
    elements for later actions."""
    body = {"max_tokens": max_tokens, "max_elements": max_elements, "viewport_only": viewport_only,
            "interactive_only": interactive_only, "full": full}  # fmt: skip
    answer = json.loads(await call(ctx, "POST", _path(page_id, "snapshot"), body=body))
    return f"{answer['text']}\n# obs_id: {answer['obs_id']}"


_READ = ToolAnnotations(read_only_hint=True, open_world_hint=False)
_WRITE = ToolAnnotations(read_only_hint=False, destructive_hint=False, open_world_hint=True)

TOOLS: list[tuple[Callable[..., Awaitable[Any]], ToolAnnotations]] = [
    (browser_open, _WRITE),
    (browser_pages, _READ),
    (browser_snapshot, _READ),
]
