"""The timeline tools: the agent's history rendered within a budget, and elided ranges fetched back."""

from __future__ import annotations

import json
import re
from collections.abc import Awaitable, Callable
from typing import Annotated, Any, Literal
from urllib.parse import parse_qs

from mcp.server.mcpserver import Context
from mcp.types import ToolAnnotations
from pydantic import Field

from lookout.clients.mcp.daemon import agent_name, call

_READ = ToolAnnotations(read_only_hint=True)
EXTRACT_LIMIT = 200
"""Frames one context_extract returns: a model's context is not a file."""
_REST_HANDLE = re.compile(r"GET /v1/timeline/extract\?([^\s]+)")


def _tool_handle(match: re.Match[str]) -> str:
    """The REST handle `GET /v1/timeline/extract?from=A&to=B[&agent=..][&resource=..]` as the tool call that
    fetches the same frames (the daemon's text stays true for curl users; an MCP agent sees its own tool)."""
    query = {key: values[-1] for key, values in parse_qs(match.group(1)).items()}
    args = [f"from_frame={query.get('from')}", f"to_frame={query.get('to')}"]
    if "resource" in query:
        args.append(f'resource="{query["resource"]}"')
    if "agent" not in query:
        args.append("everyone=true")
    return f"context_extract({', '.join(args)})"


def history_text(answer: dict[str, Any]) -> str:
    """Rendered messages as one text: a header with the figures, then `[role] content` per message."""
    meta = answer["metadata"]
    elided = ", ".join(f"{e['from']}-{e['to']}" for e in meta["elided"])
    head = f"# History: {meta['total_tokens']} of {meta['budget']} tokens, up to frame {meta['last_seq']}"
    head += f"; elided: {elided} (context_extract fetches a range)" if elided else ""
    body = [f"[{m['role']}] {_REST_HANDLE.sub(_tool_handle, m['content'])}" for m in answer["messages"]]
    return "\n\n".join([head, *body])


Resource = Annotated[str | None, Field(max_length=200, description="only terminal:<id>, page:<id>, ...")]
Everyone = Annotated[bool, Field(description="all agents' frames")]


async def context_history(
    ctx: Context,
    budget: Annotated[int, Field(ge=1, le=2_000_000)] = 8000,
    resource: Resource = None,
    everyone: Everyone = False,
) -> str:
    """Your history of terminals, devices and pages in `budget` tokens, older parts reduced or elided (as
    context_extract calls)."""
    params = {"budget": budget, "resource": resource, "agent": None if everyone else agent_name(ctx)}
    return history_text(json.loads(await call(ctx, "GET", "/v1/timeline/context", params=params)))


async def context_extract(
    ctx: Context,
    from_frame: Annotated[int, Field(ge=1)],
    to_frame: Annotated[int, Field(ge=1)],
    level: Literal["full", "diff", "line"] = "full",
    resource: Resource = None,
    everyone: Everyone = False,
) -> str:
    """Frames of a range as captured, 200 at most (then `# next: from_frame=N`)."""
    params = {"from": from_frame, "to": to_frame, "level": level, "resource": resource, "limit": EXTRACT_LIMIT,
              "agent": None if everyone else agent_name(ctx)}  # fmt: skip
    answer = json.loads(await call(ctx, "GET", "/v1/timeline/extract", params=params))
    footer = f"# tokens: {answer['tokens']}, frames: {answer['frames']}"
    if answer["next_from"] is not None:
        footer += f"\n# next: from_frame={answer['next_from']}"
    return f"{answer['content']}\n\n{footer}"


async def context_frame(ctx: Context, seq: int) -> str:
    """Frame `seq` with the screen, snapshot or screenshot it had."""
    return await call(ctx, "GET", f"/v1/timeline/frames/{seq}")


TOOLS: list[tuple[Callable[..., Awaitable[Any]], ToolAnnotations]] = [
    (context_history, _READ),
    (context_extract, _READ),
    (context_frame, _READ),
]
