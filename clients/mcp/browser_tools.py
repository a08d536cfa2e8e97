"""The browser page tools: each one request to /v1/pages. Snapshots come back as budgeted text with refs."""
from __future__ import annotations

import base64
import json
from collections.abc import Awaitable, Callable
from typing import Annotated, Any, Literal
from urllib.parse import quote

from mcp.server.mcpserver import Context, Image
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
    `- role "name" [flags] [ref=e12]`, indented by nesting. What is in or near the viewport comes first, then
    by role (controls first); every control on screen is shown whenever max_tokens holds it (max_elements
    never cuts one); what was left out is folded into lines that say how many of what.
    The header says the page, `# Elements: shown of total (truncated: why)` and `# Tokens`. Refs name
    elements for later actions; a bare container (`- listitem`) has none: act on what is inside it."""
    body = {"max_tokens": max_tokens, "max_elements": max_elements, "viewport_only": viewport_only,
            "interactive_only": interactive_only, "full": full}  # fmt: skip
    answer = json.loads(await call(ctx, "POST", _path(page_id, "snapshot"), body=body))
    return f"{answer['text']}\n# obs_id: {answer['obs_id']}"


async def browser_action(
    ctx: Context,
    page_id: PageId,
    action: Annotated[
        Literal["navigate", "click", "type", "fill", "select", "press", "hover", "check", "uncheck", "back",
                "forward", "reload", "wait"],
        Field(description="what to do; element actions take a ref from the last browser_snapshot"),
    ],
    ref: Annotated[str | None, Field(description="the element, e.g. e12, from the last snapshot")] = None,
    text: Annotated[str | None, Field(description="type/fill: the text")] = None,
    submit: Annotated[bool, Field(description="type/fill: press Enter afterwards")] = False,
    url: Annotated[str | None, Field(description="navigate: the URL")] = None,
    key: Annotated[str | None, Field(description="press: Enter, Tab, Escape, Control+A, ...")] = None,
    values: Annotated[list[str] | None, Field(description="select: option labels or values")] = None,
    wait_text: Annotated[str | None, Field(description="wait: until this text is visible")] = None,
    x: Annotated[float | None, Field(description="click at x, y of the screenshot obs_id instead of a ref")] = None,
    y: float | None = None,
    obs_id: Annotated[str | None, Field(description="click at x, y: the browser_screenshot they come from")] = None,
    snapshot: Annotated[bool, Field(description="also return a snapshot after the action (costs tokens)")] = False,
) -> str:
    """Act on the page, let it settle (requests started by the action end, the DOM goes quiet), and report
    what happened: {ok, url, title, effects: {navigation?, new_tabs?, dialogs?, downloads?, console?,
    failed_requests?, text?: [{kind, text}] (messages, alerts, field errors, text that appeared or changed),
    focus?}}, about 60 tokens without a snapshot. A ref that is not in the last snapshot,
    or stale because the page changed, is refused: take a new snapshot."""
    body = {"action": action, "ref": ref, "text": text, "submit": submit or None, "url": url, "key": key,
            "values": values, "wait": {"text": wait_text} if wait_text else None, "x": x, "y": y,
            "obs_id": obs_id, "snapshot": {"max_tokens": 2000} if snapshot else None}  # fmt: skip
    return await call(ctx, "POST", _path(page_id, "action"), body=body, wait_s=15)


async def browser_script(
    ctx: Context,
    page_id: PageId,
    steps: Annotated[
        list[dict[str, Any]],
        Field(description='browser_action arguments per step, e.g. [{"action": "fill", "ref": "e4", "text": "ada"}, '
              '{"action": "click", "ref": "e9"}]; also {"action": "snapshot"} and {"action": "screenshot"}'),
    ],
    max_tokens: Annotated[int, Field(ge=100, le=100_000, description="the final snapshot fits this")] = 2000,
) -> str:
    """Run several actions in one call. It stops at the first failing step, or when a step navigates and
    later steps' refs would be stale, and says which (`stopped_at`); then returns each step's result and
    effects and one snapshot of where the page ended, within max_tokens."""
    body = {"steps": steps, "snapshot": {"max_tokens": max_tokens}}
    return await call(ctx, "POST", _path(page_id, "script"), body=body, wait_s=60)


async def browser_screenshot(
    ctx: Context,
    page_id: PageId,
    full_page: Annotated[bool, Field(description="the whole page instead of the viewport")] = False,
    max_dimension: Annotated[int, Field(ge=200, le=2000)] = 1000,
) -> list[Any]:
    """The page as an image (scaled so its longest side is max_dimension: 1280x720 becomes 1000x562, about
    750 tokens) and its description {obs_id, image, scale_factor, tokens}. Click at its pixels with
    browser_action(action="click", x, y, obs_id)."""
    body = {"max_dimension": max_dimension, "full_page": full_page, "inline": True}
    result = json.loads(await call(ctx, "POST", _path(page_id, "screenshot"), body=body))
    data = base64.b64decode(result.pop("image_b64"))
    return [Image(data=data, format="png"), json.dumps(result, separators=(",", ":"))]


_READ = ToolAnnotations(read_only_hint=True, open_world_hint=False)
_WRITE = ToolAnnotations(read_only_hint=False, destructive_hint=False, open_world_hint=True)

TOOLS: list[tuple[Callable[..., Awaitable[Any]], ToolAnnotations]] = [
    (browser_open, _WRITE),
    (browser_pages, _READ),
    (browser_snapshot, _READ),
    (browser_action, _WRITE),
    (browser_script, _WRITE),
    (browser_screenshot, _READ),
]
