"""HTTP adapter for terminals: request models, routes, serialization. The logic is in app.terminal."""
from __future__ import annotations

import asyncio
import base64
from typing import Annotated, Any, Literal

from fastapi import APIRouter, Path, Query, Request
from fastapi.responses import PlainTextResponse, Response
from pydantic import BaseModel, ConfigDict, Field, field_validator

from app.api.responses import MAX_JSON_INT, JSONResponse
from app.core.errors import BadInput, NotFound
from app.terminal.blocks import block_with_output
from app.terminal.layers import DEFAULT_LAYERS, LAYERS, ViewOptions, parse_layers, parse_region
from app.terminal.manager import TerminalManager, TerminalSpec
from app.terminal.session import TerminalSession
from app.terminal.waiting import Until, compile_until

router = APIRouter(prefix="/v1/terminals", tags=["terminals"])

MAX_RAW_READ = 4 << 20
MAX_TIMEOUT_MS = 300_000
DEFAULT_ACT_STABLE_MS = 300
DEFAULT_BLOCK_TOKENS = 2000


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid")


class CreateTerminal(_Strict):
    command: str | list[str] | None = Field(
        None, description="None: the user's shell; a string: run by the shell; a list: argv"
    )
    cwd: str | None = None
    env: dict[str, str] | None = None
    cols: int = Field(120, ge=2, le=1000)
    rows: int = Field(40, ge=2, le=500)
    name: str | None = Field(None, max_length=200)
    shell_integration: bool = Field(
        True, description="command blocks from lookout's hooks in the user's shell or a bare bash or zsh"
    )


class TerminalInput(_Strict):
    text: str | None = Field(None, description="sent as is")
    keys: list[str] | None = Field(None, description='tmux-style key names: "Enter", "C-c", "Up", "F5", "M-x"')
    paste: str | None = Field(None, description="bracketed paste when the program enabled it")


class Resize(_Strict):
    cols: int = Field(ge=2, le=1000)
    rows: int = Field(ge=2, le=500)


class UntilSpec(_Strict):
    regex: str | None = Field(None, max_length=10_000, description="RE2 regex (Python syntax without backreferences and lookaround), multiline mode")
    on: Literal["stream", "screen"] = "stream"
    stable_ms: int | None = Field(None, ge=0, le=MAX_TIMEOUT_MS)
    state_in: list[str] | None = None
    exit: bool = False
    block_end: bool = Field(False, description="a command block ends (needs shell integration)")

    def compile(self) -> Until:
        return compile_until(self.regex, self.on, self.stable_ms, self.state_in, self.exit, self.block_end)


class WaitRequest(_Strict):
    until: UntilSpec
    since: int | None = Field(None, ge=0, le=MAX_JSON_INT, description="journal offset; default: the offset of the last input")
    timeout_ms: int = Field(10_000, ge=0, le=MAX_TIMEOUT_MS)


class ScreenOptions(_Strict):
    """The options of GET /screen (as query parameters) and of act's `screen`; see app.terminal.layers."""

    layers: str = Field(",".join(DEFAULT_LAYERS), description=f"comma-separated, from {','.join(LAYERS)}")
    region: str | None = Field(None, description="left,top,width,height; clipped to the screen")
    around_cursor: int | None = Field(None, ge=0, le=10_000, description="N rows above and below the cursor row")
    compact: bool = Field(False, description="leave out rows empty in every layer (`rows` keeps the indices)")
    encoding: Literal["auto", "runs", "cells"] = Field("auto", description="of the colour and style layers")
    max_tokens: int | None = Field(None, ge=1, le=1_000_000, description="keep the head and tail rows within it")
    format: Literal["json", "text"] = "json"
    scrollback: int = Field(0, ge=0, le=100_000, description="the newest N lines that scrolled off the top")
    changed_since: int | None = Field(None, ge=0, le=MAX_JSON_INT, description="a delta cursor: only the rows changed after it")

    @field_validator("layers", "region", mode="before")
    @classmethod
    def _join_list(cls, value: Any) -> Any:
        """JSON bodies may give layers and region as lists."""
        return ",".join(str(item) for item in value) if isinstance(value, list) else value

    def view_options(self) -> ViewOptions:
        """The parsed options; a malformed layer list or region is a 400."""
        return ViewOptions(
            layers=parse_layers(self.layers),
            region=parse_region(self.region) if self.region is not None else None,
            around_cursor=self.around_cursor,
            compact=self.compact,
            encoding=self.encoding,
            max_tokens=self.max_tokens,
            format=self.format,
        )


class ActRequest(_Strict):
    input: TerminalInput | None = None
    until: UntilSpec | None = Field(None, description=f"default: output stable for {DEFAULT_ACT_STABLE_MS} ms")
    timeout_ms: int = Field(10_000, ge=0, le=MAX_TIMEOUT_MS)
    screen: ScreenOptions = ScreenOptions()


def _manager(request: Request) -> TerminalManager:
    return request.app.state.terminals


def _check_until(session: TerminalSession, until: Until) -> None:
    if until.block_end and not session.meta.shell_integration:
        raise BadInput(
            f"terminal {session.id} has no shell integration, so no blocks end", field="until.block_end"
        )


def send(session: TerminalSession, body: TerminalInput) -> dict[str, Any]:
    """Type `body` (of an HTTP request or a stream's input message) into `session`."""
    if body.text is None and not body.keys and body.paste is None:
        raise BadInput("input needs text, keys or paste")
    return session.send(text=body.text, keys=body.keys, paste=body.paste)


@router.post("", status_code=201)
async def create_terminal(body: CreateTerminal, request: Request) -> JSONResponse:
    spec = TerminalSpec(body.command, body.cwd, body.env, body.cols, body.rows, body.name, body.shell_integration)
    session = await _manager(request).create(spec)
    return JSONResponse(session.describe(), status_code=201)


@router.get("")
async def list_terminals(request: Request) -> JSONResponse:
    return JSONResponse({"terminals": await _manager(request).describe_all()})


@router.get("/{terminal_id}")
async def get_terminal(terminal_id: str, request: Request) -> JSONResponse:
    return JSONResponse(_manager(request).get(terminal_id).describe())


@router.delete("/{terminal_id}")
async def delete_terminal(terminal_id: str, request: Request, purge: bool = False) -> JSONResponse:
    session = await _manager(request).delete(terminal_id, purge=purge)
    return JSONResponse({**session.describe(), "purged": purge})


@router.post("/{terminal_id}/input")
async def send_input(terminal_id: str, body: TerminalInput, request: Request) -> JSONResponse:
    return JSONResponse(send(_manager(request).get(terminal_id), body))


@router.post("/{terminal_id}/resize")
async def resize_terminal(terminal_id: str, body: Resize, request: Request) -> JSONResponse:
    session = _manager(request).get(terminal_id)
    session.resize(body.cols, body.rows)
    return JSONResponse(session.describe())


async def _screen(session: TerminalSession, options: ScreenOptions, view: ViewOptions) -> dict[str, Any] | str:
    return await session.screen(view, scrollback=options.scrollback, changed_since=options.changed_since)


@router.get("/{terminal_id}/screen")
async def get_screen(terminal_id: str, request: Request, options: Annotated[ScreenOptions, Query()]) -> Response:
    """The layered screenshot: JSON, or text/plain for format=text."""
    screen = await _screen(_manager(request).get(terminal_id), options, options.view_options())
    return PlainTextResponse(screen) if isinstance(screen, str) else JSONResponse(screen)


@router.post("/{terminal_id}/wait")
async def wait_terminal(terminal_id: str, body: WaitRequest, request: Request) -> JSONResponse:
    session = _manager(request).get(terminal_id)
    until = body.until.compile()
    if until.empty:
        raise BadInput("until needs regex, stable_ms, state_in, exit or block_end", field="until")
    _check_until(session, until)
    return JSONResponse(await session.wait(until, body.since, body.timeout_ms))


@router.post("/{terminal_id}/act")
async def act(terminal_id: str, body: ActRequest, request: Request) -> JSONResponse:
    """Input, then wait, then the screen: one round trip for the usual agent step."""
    session = _manager(request).get(terminal_id)
    view = body.screen.view_options()
    until = body.until.compile() if body.until else compile_until(stable_ms=DEFAULT_ACT_STABLE_MS)
    if until.empty:
        until = compile_until(stable_ms=DEFAULT_ACT_STABLE_MS)
    _check_until(session, until)
    since = session.raw_offset
    sent = send(session, body.input) if body.input else None
    waited = await session.wait(until, since, body.timeout_ms)
    screen = await _screen(session, body.screen, view)
    return JSONResponse({"input": sent, "wait": waited, "screen": screen})


@router.get("/{terminal_id}/raw")
async def read_raw(
    terminal_id: str,
    request: Request,
    offset: Annotated[int, Query(ge=0, le=MAX_JSON_INT)] = 0,
    limit: Annotated[int, Query(ge=1, le=MAX_RAW_READ)] = 65536,
) -> JSONResponse:
    session = _manager(request).get(terminal_id)
    size = session.raw_offset
    if offset > size:
        raise BadInput(f"offset {offset} is beyond the end of the output ({size} bytes)", field="offset")
    data = await asyncio.to_thread(session.read_raw, offset, min(limit, size - offset))
    return JSONResponse(
        {
            "offset": offset,
            "next_offset": offset + len(data),
            "size": size,
            "data_b64": base64.b64encode(data).decode("ascii"),
        }
    )


@router.get("/{terminal_id}/blocks")
async def list_blocks(
    terminal_id: str,
    request: Request,
    since: Annotated[int | None, Query(ge=0, le=MAX_JSON_INT, description="only blocks numbered above this")] = None,
    last: Annotated[int | None, Query(ge=1, le=MAX_JSON_INT, description="only the last N of them")] = None,
) -> JSONResponse:
    """Finished command blocks (without their output) and the running one."""
    tracker = _manager(request).get(terminal_id).blocks
    current = tracker.current
    return JSONResponse({
        "blocks": [block.to_json() for block in tracker.finished(since, last)],
        "current": current.to_json() if current is not None else None,
    })  # fmt: skip


@router.get("/{terminal_id}/blocks/{n}")
async def get_block(
    terminal_id: str,
    n: Annotated[int, Path(ge=1, le=MAX_JSON_INT)],
    request: Request,
    max_tokens: Annotated[int, Query(ge=50, le=100_000)] = DEFAULT_BLOCK_TOKENS,
) -> JSONResponse:
    """One block with its output rendered as text: redraws collapsed, repeats folded, head and tail kept."""
    block = await block_with_output(_manager(request).get(terminal_id), n, max_tokens)
    if block is None:
        raise NotFound(f"terminal {terminal_id} has no block {n}")
    return JSONResponse(block)
