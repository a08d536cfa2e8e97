"""The terminal tools: each one request to /v1/terminals. Their docstrings are the descriptions the model
reads: what the tool does, what it returns and what that costs in tokens."""
from __future__ import annotations

import base64
import json
from collections.abc import Awaitable, Callable
from typing import Annotated, Literal
from urllib.parse import quote

from mcp.server.mcpserver import Context
from mcp.types import ToolAnnotations
from pydantic import Field

from clients.mcp.daemon import call
from clients.mcp.terminal_params import (
    AroundCursor,
    Compact,
    Keys,
    Layers,
    MaxTokens,
    Paste,
    Region,
    Scrollback,
    TerminalId,
    Text,
    TimeoutMs,
    Until,
    screen_options,
    terminal_input,
)

RAW_READ_MAX = 262_144


def _path(terminal_id: str, *rest: str) -> str:
    """/v1/terminals/{id}/...: the id quoted as one path segment."""
    return "/".join(("/v1/terminals", quote(terminal_id, safe=""), *rest))


async def terminal_open(
    ctx: Context,
    command: Annotated[
        str | list[str] | None,
        Field(
            description="none: the user's shell; a string: a command line run by the shell; a list: an argv run "
            "directly"
        ),
    ] = None,
    cwd: Annotated[str | None, Field(description="working directory (default: the daemon's)")] = None,
    env: Annotated[dict[str, str] | None, Field(description="extra environment variables")] = None,
    cols: Annotated[int, Field(ge=2, le=1000)] = 120,
    rows: Annotated[int, Field(ge=2, le=500)] = 40,
    name: Annotated[str | None, Field(max_length=200, description="a label for people watching")] = None,
    shell_integration: Annotated[
        bool,
        Field(description="mark each shell command as a block (exit code, output): terminal_blocks, until.block_end"),
    ] = True,
) -> str:
    """Start a program in a new terminal (a real PTY that lookout keeps running and records) and return it:
    {id, status, state, pid, cols, rows, cwd, ...}, about 150 tokens. Then drive it with terminal_act.
    The program starts at once; its first prompt may take a moment (terminal_act waits for output to settle)."""
    body = {
        "command": command, "cwd": cwd, "env": env, "cols": cols, "rows": rows, "name": name,
        "shell_integration": shell_integration,
    }
    return await call(ctx, "POST", "/v1/terminals", body=body)


async def terminal_list(ctx: Context) -> str:
    """List every terminal, running or ended (also those of the daemon's earlier runs): {terminals: [{id, name,
    command, status: running|exited|lost, exit_code, state, cwd, title, ...}]}, about 150 tokens each."""
    return await call(ctx, "GET", "/v1/terminals")


async def terminal_act(
    ctx: Context,
    terminal_id: TerminalId,
    text: Text = None,
    keys: Keys = None,
    paste: Paste = None,
    until: Annotated[
        Until | None, Field(description="what to wait for after the input (default: no output for 300 ms)")
    ] = None,
    timeout_ms: TimeoutMs = 10_000,
    layers: Layers = None,
    region: Region = None,
    around_cursor: AroundCursor = None,
    compact: Compact = True,
    max_tokens: MaxTokens = None,
    scrollback: Scrollback = 0,
) -> str:
    """The usual step, in one call: send input, wait on the daemon until a condition holds, then return the
    screen. To run a command: text="make test", keys=["Enter"], until={"block_end": true} (shells) or
    {"regex": "..."}. Without input it only waits and reads the screen.

    Returns {input: {bytes_written, raw_offset}, wait: {matched, reason: regex|screen|stable|state|exit|
    block_end|timeout|exited, cursor, state, elapsed_ms, match?, block?}, screen: {terminal, cursor, state,
    tokens, rows?, text: [rows]}}. The screen is what a person would see, not the whole output: a full
    120x40 screen costs about 500 to 1,500 tokens (3,000 for dense random text; `screen.tokens` says how
    many); around_cursor, region or max_tokens cut it down, and terminal_blocks gives the whole output of
    a long command."""
    body = {
        "input": terminal_input(text, keys, paste) or None,
        "until": until.model_dump(exclude_defaults=True) if until else None,
        "timeout_ms": timeout_ms,
        "screen": screen_options(layers, region, around_cursor, compact, max_tokens, scrollback),
    }
    return await call(ctx, "POST", _path(terminal_id, "act"), body=body, wait_s=timeout_ms / 1000)


async def terminal_send(
    ctx: Context, terminal_id: TerminalId, text: Text = None, keys: Keys = None, paste: Paste = None
) -> str:
    """Send input without waiting (paste, then text, then keys): returns {bytes_written, raw_offset} (a few
    tokens). Use terminal_act instead when you want to see what the input did."""
    return await call(ctx, "POST", _path(terminal_id, "input"), body=terminal_input(text, keys, paste))


async def terminal_wait(
    ctx: Context,
    terminal_id: TerminalId,
    until: Annotated[Until, Field(description="what to wait for; give at least one condition")],
    since: Annotated[
        int | None, Field(ge=0, description="journal offset after which regex is searched (default: your last input)")
    ] = None,
    timeout_ms: TimeoutMs = 10_000,
) -> str:
    """Wait on the daemon, without sending anything, until output matches a regex, the screen is quiet, the
    state is one of a set, a shell command ends or the program exits. Returns {matched, reason, cursor,
    state, exit_code, elapsed_ms, match?: {text, groups}, block?} (under 100 tokens) and no screen. A long
    job: call again with since=<cursor> until matched."""
    body = {"until": until.model_dump(exclude_defaults=True), "since": since, "timeout_ms": timeout_ms}
    return await call(ctx, "POST", _path(terminal_id, "wait"), body=body, wait_s=timeout_ms / 1000)


async def terminal_screen(
    ctx: Context,
    terminal_id: TerminalId,
    layers: Layers = None,
    region: Region = None,
    around_cursor: AroundCursor = None,
    compact: Compact = True,
    max_tokens: MaxTokens = None,
    scrollback: Scrollback = 0,
    format: Annotated[
        Literal["json", "text"],
        Field(description="json: {terminal, viewport, cursor, state, tokens, rows?, text: [rows], ...}; "
              "text: one header line, then the rows as plain text"),
    ] = "json",
) -> str:
    """The terminal's screen now, as layers you choose: by default the text rows and the cursor. A full
    120x40 screen costs about 500 to 1,500 tokens (3,000 for dense random text; `tokens` in the answer
    counts them); colour and style layers cost more where the screen has colours and styles; around_cursor,
    region and max_tokens cut it down."""
    params = {**screen_options(layers, region, around_cursor, compact, max_tokens, scrollback), "format": format}
    return await call(ctx, "GET", _path(terminal_id, "screen"), params=params)


async def terminal_raw(
    ctx: Context,
    terminal_id: TerminalId,
    offset: Annotated[int, Field(ge=0, description="byte offset in the output to start at")] = 0,
    limit: Annotated[int, Field(ge=1, le=RAW_READ_MAX, description="bytes to read")] = 16_384,
) -> str:
    """The exact bytes the program wrote, escape sequences included, from a byte offset: {offset, next_offset,
    size, text} where text is the bytes as UTF-8 (bytes that are not UTF-8 as \\xNN). Costs about a token per
    3 bytes and more with escape sequences: for what a command printed prefer terminal_blocks, for what is
    shown terminal_screen. Read on from next_offset while it is below size."""
    answer = json.loads(await call(ctx, "GET", _path(terminal_id, "raw"), params={"offset": offset, "limit": limit}))
    data = base64.b64decode(answer.pop("data_b64"))
    return json.dumps({**answer, "text": data.decode("utf-8", "backslashreplace")}, ensure_ascii=False)


async def terminal_deltas(
    ctx: Context,
    terminal_id: TerminalId,
    cursor: Annotated[int, Field(ge=0, description="0, or the resume_cursor of the previous call")] = 0,
    limit: Annotated[int, Field(ge=1, le=1000, description="at most this many deltas")] = 20,
) -> str:
    """How the screen changed over time, oldest first (up to 2 changes a second are recorded, 10 while a
    client streams them; the latest change is always included): {cursor,
    resume_cursor, file_size, deltas: [{t, changed: [[row, text], ...], cursor, title, alt_screen,
    raw_offset}]}. The first delta holds every row; later ones only the rows that changed. Costs about as
    many tokens as the changed rows' text. To follow a terminal, call again with cursor=resume_cursor."""
    params = {"cursor": cursor, "limit": limit}
    return await call(ctx, "GET", _path(terminal_id, "deltas"), params=params)


async def terminal_blocks(
    ctx: Context,
    terminal_id: TerminalId,
    n: Annotated[int | None, Field(ge=1, description="one block, with its output")] = None,
    since: Annotated[int | None, Field(ge=0, description="without n: only blocks numbered above this")] = None,
    last: Annotated[int | None, Field(ge=1, description="without n: only the last N blocks")] = 10,
    max_tokens: Annotated[
        int, Field(ge=50, le=100_000, description="with n: the output's budget; the head and tail are kept")
    ] = 2000,
) -> str:
    """The shell commands run in the terminal (needs shell integration). Without n: {blocks: [{n, command,
    cwd, exit_code, duration_ms, ...}], current} (about 60 tokens a block, no output). With n: that block
    with output.text, the output as it was shown (progress redraws collapsed, repeated lines folded), cut to
    max_tokens, keeping the head and the tail; `truncated` and `omitted_lines` say what was cut."""
    if n is not None:
        return await call(ctx, "GET", _path(terminal_id, "blocks", str(n)), params={"max_tokens": max_tokens})
    return await call(ctx, "GET", _path(terminal_id, "blocks"), params={"since": since, "last": last})


async def terminal_close(
    ctx: Context,
    terminal_id: TerminalId,
    purge: Annotated[bool, Field(description="also delete its recorded output and screens")] = False,
) -> str:
    """Stop the terminal's program (SIGHUP, then SIGTERM, then SIGKILL) and return the terminal's final
    description. Its recording stays readable unless purge=true."""
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
