"""The lease tool, in the terminal toolset (the page toolset's definitions are at their budget, bench/mcp_tools.py):
hold a terminal or a page for yourself (lookout.core.leases through /v1/{terminals,pages}/{id}/lease); and the one line an answer's `other_hands`
field (the inputs other hands sent while a call ran) becomes in the tool's text."""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable
from typing import Annotated, Any
from urllib.parse import quote

from mcp.server.mcpserver import Context
from mcp.types import ToolAnnotations
from pydantic import Field

from lookout.clients.mcp.daemon import call
from lookout.core.hands import WHILE_CALL, notice_line


async def hold(ctx: Context, id: str, seconds: Annotated[float, Field(ge=0, le=3600)] = 300) -> str:
    """Keep others' input off a terminal or page (id) for seconds (again: renew; 0: let go)."""
    kind = "pages" if id.startswith("p_") else "terminals"  # ids are made so (lookout.core.ids.new_id)
    path = f"/v1/{kind}/{quote(id, safe='')}/lease"
    if seconds == 0:
        return await call(ctx, "DELETE", path)
    return await call(ctx, "POST", path, body={"duration_s": seconds})


def with_notice(answer: str, when: str = WHILE_CALL) -> str:
    """The answer, after one line saying which other hands wrote to the terminal while the call ran (`when`:
    lookout.core.hands.WHILE_CALL, or SINCE_INPUT for a screen), when its `other_hands` field lists any."""
    if '"other_hands"' not in answer:
        return answer
    try:
        others: list[dict[str, Any]] = json.loads(answer).get("other_hands") or []
    except (ValueError, AttributeError):
        return answer
    if not others:
        return answer
    return f"NOTE: {notice_line(others, when)}\n{answer}"


TOOLS: list[tuple[Callable[..., Awaitable[str]], ToolAnnotations | None]] = [(hold, None)]
