"""The terminal tools: each call one request to /v1/terminals, with the daemon's own request models
(lookout.schemas.terminal) for input, until and screen. Their docstrings are what the model reads: what to call
and what it costs."""

from __future__ import annotations

import base64
import json
from collections.abc import Awaitable, Callable
from typing import Annotated, Any, Literal
from urllib.parse import quote

from mcp.server.mcpserver import Context
from mcp.server.mcpserver.exceptions import ToolError
from mcp.types import ToolAnnotations
from pydantic import Field

from lookout.clients.mcp.daemon import call
from lookout.clients.mcp.lease_tools import with_notice
from lookout.core.hands import SINCE_INPUT
from lookout.schemas.terminal import ActRequest, ListingTokens, ScreenOptions, Status, TerminalInput, Until
from lookout.terminal.holder.sizes import MAX_COLS, MAX_ROWS, MIN_SIZE

RAW_READ_DEFAULT = 16_384
MAX_WAIT_MS = 50_000
"""Below the 60 s after which MCP clients commonly give up on a tool call."""

TerminalId = Annotated[str, Field(description="from terminal_open")]
TimeoutMs = Annotated[int, Field(ge=0, le=MAX_WAIT_MS, description="at most 50000")]


def _path(terminal_id: str, *rest: str) -> str:
    """/v1/terminals/{id}/...: the id quoted as one path segment."""
    return "/".join(("/v1/terminals", quote(terminal_id, safe=""), *rest))


def _dump(model: object) -> Any:
    """A request model (or a list of them) as JSON, without what was left at its default."""
    if isinstance(model, list):
        return [_dump(item) for item in model]
    return model.model_dump(exclude_defaults=True) if hasattr(model, "model_dump") else model


async def terminal_open(
    ctx: Context,
    command: Annotated[str | list[str] | None, Field(description="none: your shell; a command line; or argv")] = None,
    cwd: str | None = None,
    env: dict[str, str] | None = None,
    cols: Annotated[int, Field(ge=MIN_SIZE, le=MAX_COLS)] = 120,
    rows: Annotated[int, Field(ge=MIN_SIZE, le=MAX_ROWS)] = 40,
    name: Annotated[str | None, Field(max_length=200)] = None,
    shell_integration: bool = True,
) -> str:
    """Start a program on a new PTY: {id, state, ...} (~150 tokens); then terminal_act."""
    body = {"command": command, "cwd": cwd, "env": env, "cols": cols, "rows": rows, "name": name,
            "shell_integration": shell_integration}  # fmt: skip
    return await call(ctx, "POST", "/v1/terminals", body=body)


async def terminal_list(ctx: Context, status: list[Status] | None = None, max_tokens: ListingTokens = 4000) -> str:
    """The terminals (of these statuses), ~150 tokens each, within max_tokens: running ones first, then the newest:
    {terminals: [{id, status, state, command, ...}], more?: {count, statuses, note}}."""
    return await call(ctx, "GET", "/v1/terminals", params={"status": status, "max_tokens": max_tokens})


async def terminal_act(
    ctx: Context,
    terminal_id: TerminalId,
    input: TerminalInput | None = None,
    until: Annotated[Until | None, Field(description="default: no output for 300 ms")] = None,
    since: Annotated[int | None, ActRequest.model_fields["since"]] = None,
    timeout_ms: TimeoutMs = 10_000,
    screen: Annotated[ScreenOptions | None, Field(description="default: compact")] = None,
    detail: bool = False,
) -> str:
    """Send input (a step or a list), wait, return {ended, state, cursor, exit_code?, screen}; with no
    input, until or since: just the screen. A command: input={"text":"make","keys":["Enter"]},
    until={"block_end":true}; on ended=timeout, again with since=cursor. timeout_ms=0: no wait. A 120x40
    screen costs 500-1,500 tokens; screen.around_cursor/region/max_tokens cut it."""
    options = _dump(screen) if screen is not None else {"compact": True}
    if input is None and until is None and since is None:
        return with_notice(await call(ctx, "GET", _path(terminal_id, "screen"), params=options), SINCE_INPUT)
    body = {"input": _dump(input), "until": _dump(until), "since": since, "timeout_ms": timeout_ms,
            "screen": options, "detail": detail}  # fmt: skip
    return with_notice(await call(ctx, "POST", _path(terminal_id, "act"), body=body, wait_s=timeout_ms / 1000))


async def terminal_read(
    ctx: Context,
    terminal_id: TerminalId,
    what: Literal["blocks", "raw", "deltas"] = "blocks",
    n: Annotated[int | None, Field(ge=1, description="one block with its output")] = None,
    since: Annotated[int | None, Field(ge=0, description="blocks: after n; raw: byte offset; deltas: cursor")] = None,
    limit: Annotated[int | None, Field(ge=1, description="blocks: last 10; raw: 16384 bytes; deltas: 20")] = None,
    max_tokens: Annotated[int | None, Field(ge=50, le=100_000, description="block output, 2000")] = None,
) -> str:
    """blocks: a shell's commands with exit codes, ~60 tokens each; n: its output, head and tail. raw: the
    bytes written {next_offset, text}, ~1 token per 3 bytes. deltas: changed rows {resume_cursor, deltas}."""
    if what != "blocks" and (n, max_tokens) != (None, None):
        raise ToolError(f"n and max_tokens read a block: leave them out for what={what}")
    if what == "raw":
        params = {"offset": since, "limit": limit or RAW_READ_DEFAULT}
        answer = json.loads(await call(ctx, "GET", _path(terminal_id, "raw"), params=params))
        data = base64.b64decode(answer.pop("data_b64"))
        return json.dumps({**answer, "text": data.decode("utf-8", "backslashreplace")}, ensure_ascii=False)
    if what == "deltas":
        return await call(ctx, "GET", _path(terminal_id, "deltas"), params={"cursor": since, "limit": limit or 20})
    if n is not None:
        if (since, limit) != (None, None):
            raise ToolError("since and limit list blocks: leave them out with n")
        return await call(ctx, "GET", _path(terminal_id, "blocks", str(n)), params={"max_tokens": max_tokens})
    return await call(ctx, "GET", _path(terminal_id, "blocks"), params={"since": since, "last": limit or 10})


async def terminal_close(ctx: Context, terminal_id: TerminalId, purge: bool = False) -> str:
    """Stop the program; its recording stays unless purge=true."""
    return await call(ctx, "DELETE", _path(terminal_id), params={"purge": purge})


_READ = ToolAnnotations(read_only_hint=True, open_world_hint=False)
_WRITE = ToolAnnotations(destructive_hint=False)  # not read-only and open-world: MCP's defaults

TOOLS: list[tuple[Callable[..., Awaitable[str]], ToolAnnotations]] = [
    (terminal_open, _WRITE),
    (terminal_list, _READ),
    (terminal_act, _WRITE),
    (terminal_read, _READ),
    (terminal_close, ToolAnnotations(destructive_hint=True, open_world_hint=False)),
]
"""Each tool with its hints for the client (read-only tools may be allowed without asking)."""
