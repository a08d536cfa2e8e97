"""The timeline tools: the agent's history rendered within a budget, and elided ranges fetched back."""
from __future__ import annotations

import json
from collections.abc import Awaitable, Callable
from typing import Annotated, Any, Literal

from mcp.server.mcpserver import Context
from mcp.types import ToolAnnotations
from pydantic import Field

from clients.mcp.daemon import agent_name, call

_READ = ToolAnnotations(read_only_hint=True, open_world_hint=False)


def history_text(answer: dict[str, Any]) -> str:
    """Rendered messages as one text: a header with the figures, then `[role] content` per message."""
    meta = answer["metadata"]
    elided = ", ".join(f"{e['from']}-{e['to']}" for e in meta["elided"])
    head = f"# History: {meta['total_tokens']} of {meta['budget']} tokens, up to frame {meta['last_seq']}"
    head += f"; elided: {elided} (context_extract fetches a range)" if elided else ""
    return "\n\n".join([head, *(f"[{m['role']}] {m['content']}" for m in answer["messages"])])


async def context_history(
    ctx: Context,
    budget: Annotated[int, Field(ge=1, le=2_000_000, description="tokens the whole history may take")] = 8000,
    resource: Annotated[
        str | None, Field(description="only one resource: terminal:<id>, device:<serial> or page:<id>")
    ] = None,
    everyone: Annotated[bool, Field(description="every agent's frames, not only yours")] = False,
) -> str:
    """What you did and saw on terminals, devices and pages, oldest first, within `budget` tokens: the
    newest screen of each resource in full, older ones as diffs or one line, failed commands and actions
    always kept, and older stretches as summaries or one line `frames A-B elided: ...` that
    context_extract(from_frame=A, to_frame=B) brings back. Every message starts with `[#frame resource]`."""
    params = {"budget": budget, "resource": resource, "agent": None if everyone else agent_name(ctx)}
    return history_text(json.loads(await call(ctx, "GET", "/v1/timeline/context", params=params)))


async def context_extract(
    ctx: Context,
    from_frame: Annotated[int, Field(ge=1, description="the first frame of the range")],
    to_frame: Annotated[int, Field(ge=1, description="the last frame of the range")],
    level: Annotated[Literal["full", "diff", "line"], Field(description="detail of each frame")] = "full",
    resource: Annotated[str | None, Field(description="only this resource's frames")] = None,
    limit: Annotated[int, Field(ge=1, le=5000, description="frames at most; the answer says where to go on")] = 200,
) -> str:
    """Frames of a range exactly as they were captured (not the current state), at one level of detail:
    their text, then `# tokens` and, when cut by `limit`, `# next: from_frame=N`."""
    params = {"from": from_frame, "to": to_frame, "level": level, "resource": resource, "limit": limit}
    answer = json.loads(await call(ctx, "GET", "/v1/timeline/extract", params=params))
    footer = f"# tokens: {answer['tokens']}, frames: {answer['frames']}"
    if answer["next_from"] is not None:
        footer += f"\n# next: from_frame={answer['next_from']}"
    return f"{answer['content']}\n\n{footer}"


TOOLS: list[tuple[Callable[..., Awaitable[Any]], ToolAnnotations]] = [
    (context_history, _READ),
    (context_extract, _READ),
]
