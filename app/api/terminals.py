"""HTTP adapter for terminals: request models, routes, serialization. The logic is in app.terminal."""
from __future__ import annotations

import asyncio
import base64
from typing import Annotated, Any, Literal

from fastapi import APIRouter, Query, Request
from pydantic import BaseModel, ConfigDict, Field

from app.api.responses import JSONResponse
from app.core.errors import BadInput
from app.terminal.manager import TerminalManager, TerminalSpec
from app.terminal.session import TerminalSession
from app.terminal.waiting import Until, compile_until

router = APIRouter(prefix="/v1/terminals", tags=["terminals"])

MAX_RAW_READ = 4 << 20
MAX_TIMEOUT_MS = 300_000
DEFAULT_ACT_STABLE_MS = 300


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


class TerminalInput(_Strict):
    text: str | None = Field(None, description="sent as is")
    keys: list[str] | None = Field(None, description='tmux-style key names: "Enter", "C-c", "Up", "F5", "M-x"')
    paste: str | None = Field(None, description="bracketed paste when the program enabled it")


class Resize(_Strict):
    cols: int = Field(ge=2, le=1000)
    rows: int = Field(ge=2, le=500)


class UntilSpec(_Strict):
    regex: str | None = Field(None, max_length=10_000, description="Python regex, multiline mode")
    on: Literal["stream", "screen"] = "stream"
    stable_ms: int | None = Field(None, ge=0, le=MAX_TIMEOUT_MS)
    state_in: list[str] | None = None
    exit: bool = False

    def compile(self) -> Until:
        return compile_until(self.regex, self.on, self.stable_ms, self.state_in, self.exit)


class WaitRequest(_Strict):
    until: UntilSpec
    since: int | None = Field(None, ge=0, description="journal offset; default: the offset of the last input")
    timeout_ms: int = Field(10_000, ge=0, le=MAX_TIMEOUT_MS)


class ScreenOptions(_Strict):
    scrollback: int = Field(0, ge=0, le=100_000)


class ActRequest(_Strict):
    input: TerminalInput | None = None
    until: UntilSpec | None = Field(None, description=f"default: output stable for {DEFAULT_ACT_STABLE_MS} ms")
    timeout_ms: int = Field(10_000, ge=0, le=MAX_TIMEOUT_MS)
    screen: ScreenOptions = ScreenOptions()


def _manager(request: Request) -> TerminalManager:
    return request.app.state.terminals


def _send(session: TerminalSession, body: TerminalInput) -> dict[str, Any]:
    if body.text is None and not body.keys and body.paste is None:
        raise BadInput("input needs text, keys or paste")
    return session.send(text=body.text, keys=body.keys, paste=body.paste)


@router.post("", status_code=201)
async def create_terminal(body: CreateTerminal, request: Request) -> JSONResponse:
    spec = TerminalSpec(body.command, body.cwd, body.env, body.cols, body.rows, body.name)
    session = await _manager(request).create(spec)
    return JSONResponse(session.describe(), status_code=201)


@router.get("")
async def list_terminals(request: Request) -> JSONResponse:
    return JSONResponse({"terminals": [s.describe() for s in _manager(request).list()]})


@router.get("/{terminal_id}")
async def get_terminal(terminal_id: str, request: Request) -> JSONResponse:
    return JSONResponse(_manager(request).get(terminal_id).describe())


@router.delete("/{terminal_id}")
async def delete_terminal(terminal_id: str, request: Request, purge: bool = False) -> JSONResponse:
    session = await _manager(request).delete(terminal_id, purge=purge)
    return JSONResponse({**session.describe(), "purged": purge})


@router.post("/{terminal_id}/input")
async def send_input(terminal_id: str, body: TerminalInput, request: Request) -> JSONResponse:
    return JSONResponse(_send(_manager(request).get(terminal_id), body))


@router.post("/{terminal_id}/resize")
async def resize_terminal(terminal_id: str, body: Resize, request: Request) -> JSONResponse:
    session = _manager(request).get(terminal_id)
    session.resize(body.cols, body.rows)
    return JSONResponse(session.describe())


@router.get("/{terminal_id}/screen")
async def get_screen(
    terminal_id: str, request: Request, scrollback: Annotated[int, Query(ge=0, le=100_000)] = 0
) -> JSONResponse:
    return JSONResponse(await _manager(request).get(terminal_id).screen(scrollback=scrollback))


@router.post("/{terminal_id}/wait")
async def wait_terminal(terminal_id: str, body: WaitRequest, request: Request) -> JSONResponse:
    session = _manager(request).get(terminal_id)
    until = body.until.compile()
    if until.empty:
        raise BadInput("until needs regex, stable_ms, state_in or exit", field="until")
    return JSONResponse(await session.wait(until, body.since, body.timeout_ms))


@router.post("/{terminal_id}/act")
async def act(terminal_id: str, body: ActRequest, request: Request) -> JSONResponse:
    """Input, then wait, then the screen: one round trip for the usual agent step."""
    session = _manager(request).get(terminal_id)
    until = body.until.compile() if body.until else compile_until(stable_ms=DEFAULT_ACT_STABLE_MS)
    if until.empty:
        until = compile_until(stable_ms=DEFAULT_ACT_STABLE_MS)
    since = session.raw_offset
    sent = _send(session, body.input) if body.input else None
    waited = await session.wait(until, since, body.timeout_ms)
    screen = await session.screen(scrollback=body.screen.scrollback)
    return JSONResponse({"input": sent, "wait": waited, "screen": screen})


@router.get("/{terminal_id}/raw")
async def read_raw(
    terminal_id: str,
    request: Request,
    offset: Annotated[int, Query(ge=0)] = 0,
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
