"""The terminal tools: each one request to /v1/terminals, with the daemon's own request models
(app.schemas.terminal) for input, until and screen. Their docstrings are what the model reads: what to call
and what it costs."""
from __future__ import annotations

import base64
import json
from collections.abc import Awaitable, Callable
from typing import Annotated, Any
from urllib.parse import quote

from mcp.server.mcpserver import Context
from mcp.types import ToolAnnotations
from pydantic import Field

from app.schemas.terminal import MAX_COLS, MAX_JSON_INT, MAX_ROWS, ScreenOptions, TerminalInput, Until, WaitRequest
from clients.mcp.daemon import call, without_none

RAW_READ_MAX = 262_144
MAX_WAIT_MS = 50_000
"""Below the 60 s after which MCP clients commonly give up on a tool call."""

TerminalId = Annotated[str, Field(description="from terminal_open")]
TimeoutMs = Annotated[int, Field(ge=0, le=MAX_WAIT_MS, description="a timeout is no error: ended=timeout")]


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
    command: Annotated[
        str | list[str] | None, Field(description="none: your shell; a command line; or argv")
    ] = None,
    cwd: str | None = None,
    env: dict[str, str] | None = None,
    cols: Annotated[int, Field(ge=2, le=MAX_COLS)] = 120,
    rows: Annotated[int, Field(ge=2, le=MAX_ROWS)] = 40,
    name: Annotated[str | None, Field(max_length=200)] = None,
    shell_integration: bool = True,
) -> str:
    """Start a program on a new real PTY (recorded); returns {id, state, ...} (~150 tokens). A shell (bash,
    zsh) gets command blocks with exit codes. Then use terminal_act."""
    body = {"command": command, "cwd": cwd, "env": env, "cols": cols, "rows": rows, "name": name,
            "shell_integration": shell_integration}  # fmt: skip
    return await call(ctx, "POST", "/v1/terminals", body=body)


async def terminal_list(ctx: Context) -> str:
    """Every terminal, running or ended, also of earlier daemon runs: {terminals: [{id, status, state, command,
    cwd, ...}]}, ~150 tokens each."""
    return await call(ctx, "GET", "/v1/terminals")


async def terminal_act(
    ctx: Context,
    terminal_id: TerminalId,
    input: Annotated[TerminalInput | None, Field(description="an object, or a list of steps sent in order")] = None,
    until: Annotated[Until | None, Field(description="default: no output for 300 ms")] = None,
    timeout_ms: TimeoutMs = 10_000,
    screen: Annotated[ScreenOptions | None, Field(description="default: compact text and cursor")] = None,
    detail: bool = False,
) -> str:
    """Send input, wait on the daemon, return the screen: {ended, state, cursor, exit_code?, note?, screen}.
    Run a command: input={"text":"make","keys":["Enter"]}, until={"block_end":true}. A regex never matches
    the echo of your input; a state counts once the terminal answered it. `cursor` is the `since` for
    terminal_wait. A full 120x40 screen costs 500-1,500 tokens; screen.around_cursor/region/max_tokens cut it."""
    body = {
        "input": _dump(input),
        "until": _dump(until),
        "timeout_ms": timeout_ms,
        "screen": _dump(screen) if screen is not None else {"compact": True},
        "detail": detail,
    }
    return await call(ctx, "POST", _path(terminal_id, "act"), body=without_none(body), wait_s=timeout_ms / 1000)


async def terminal_send(
    ctx: Context,
    terminal_id: TerminalId,
    input: Annotated[TerminalInput, Field(description="an object, or a list of steps sent in order")],
) -> str:
    """Send input without waiting or reading the screen: {bytes_written, raw_offset} (a few tokens). Prefer
    terminal_act to see what the input did."""
    return await call(ctx, "POST", _path(terminal_id, "input"), body=_dump(input))


async def terminal_wait(
    ctx: Context,
    terminal_id: TerminalId,
    until: Until,
    since: Annotated[int | None, WaitRequest.model_fields["since"]] = None,
    timeout_ms: TimeoutMs = 10_000,
) -> str:
    """Wait, without input or screen: {matched, reason, cursor, state, exit_code, elapsed_ms, match?, block?}
    (<100 tokens). For a long job call again with since=cursor."""
    body = {"until": _dump(until), "since": since, "timeout_ms": timeout_ms}
    return await call(ctx, "POST", _path(terminal_id, "wait"), body=body, wait_s=timeout_ms / 1000)


async def terminal_screen(
    ctx: Context, terminal_id: TerminalId, screen: Annotated[ScreenOptions | None, Field(description="default: compact")] = None
) -> str:
    """The screen now: text rows and cursor by default (120x40: 500-1,500 tokens; `tokens` says); colour and
    style layers on request; around_cursor, region, max_tokens cut it; format=text is plain."""
    params = _dump(screen) if screen is not None else {"compact": True}
    return await call(ctx, "GET", _path(terminal_id, "screen"), params=params)


async def terminal_raw(
    ctx: Context,
    terminal_id: TerminalId,
    offset: Annotated[int, Field(ge=0, le=MAX_JSON_INT)] = 0,
    limit: Annotated[int, Field(ge=1, le=RAW_READ_MAX)] = 16_384,
) -> str:
    """The exact bytes written, escapes included, from a byte offset: {offset, next_offset, size, text}
    (~1 token per 3 bytes). Prefer terminal_blocks for a command's output."""
    answer = json.loads(await call(ctx, "GET", _path(terminal_id, "raw"), params={"offset": offset, "limit": limit}))
    data = base64.b64decode(answer.pop("data_b64"))
    return json.dumps({**answer, "text": data.decode("utf-8", "backslashreplace")}, ensure_ascii=False)


async def terminal_deltas(
    ctx: Context,
    terminal_id: TerminalId,
    cursor: Annotated[int, Field(ge=0, le=MAX_JSON_INT, description="0 or resume_cursor")] = 0,
    limit: Annotated[int, Field(ge=1, le=1000)] = 20,
) -> str:
    """How the screen changed, oldest first (at most 2 changes/s): {resume_cursor, deltas: [{t, changed:
    [[row, text]], cursor, raw_offset}]}; the first holds every row. Costs the changed rows' text."""
    return await call(ctx, "GET", _path(terminal_id, "deltas"), params={"cursor": cursor, "limit": limit})


async def terminal_blocks(
    ctx: Context,
    terminal_id: TerminalId,
    n: Annotated[int | None, Field(ge=1, description="one block, with its output")] = None,
    since: Annotated[int | None, Field(ge=0, le=MAX_JSON_INT)] = None,
    last: Annotated[int | None, Field(ge=1, le=MAX_JSON_INT)] = 10,
    max_tokens: Annotated[int, Field(ge=50, le=100_000)] = 2000,
) -> str:
    """A shell's commands: {blocks: [{n, command, exit_code, duration_ms, ...}]} (~60 tokens each); with n,
    that block's output as shown (redraws collapsed, head and tail within max_tokens)."""
    if n is not None:
        return await call(ctx, "GET", _path(terminal_id, "blocks", str(n)), params={"max_tokens": max_tokens})
    return await call(ctx, "GET", _path(terminal_id, "blocks"), params={"since": since, "last": last})


async def terminal_close(ctx: Context, terminal_id: TerminalId, purge: bool = False) -> str:
    """Stop the program (SIGHUP, SIGTERM, SIGKILL); returns the terminal. Its recording stays unless
    purge=true."""
    return await call(ctx, "DELETE", _path(terminal_id), params={"purge": purge})


_READ = ToolAnnotations(read_only_hint=True, open_world_hint=False)
_WRITE = ToolAnnotations(read_only_hint=False, destructive_hint=False, open_world_hint=True)

TOOLS: list[tuple[Callable[..., Awaitable[str]], ToolAnnotations]] = [
    (terminal_open, _WRITE),
    (terminal_list, _READ),
    (terminal_act, _WRITE),
    (terminal_send, _WRITE),
    (terminal_wait, _READ),
    (terminal_screen, _READ),
    (terminal_raw, _READ),
    (terminal_deltas, _READ),
    (terminal_blocks, _READ),
    (terminal_close, ToolAnnotations(read_only_hint=False, destructive_hint=True, open_world_hint=False)),
]
"""Each tool with its hints for the client (read-only tools may be allowed without asking)."""

