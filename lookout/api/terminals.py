"""HTTP adapter for terminals: routes and serialization; the request models are in lookout.schemas.terminal and
the logic in lookout.terminal."""

from __future__ import annotations

import asyncio
import base64
from datetime import UTC, datetime
from functools import partial
from typing import Annotated

from fastapi import APIRouter, Path, Query, Request
from fastapi.responses import PlainTextResponse, Response

from lookout.api.leases import add_lease_routes
from lookout.api.responses import JSONResponse
from lookout.core.errors import BadInput, NotFound
from lookout.core.hands import SINCE_INPUT, notice_line
from lookout.schemas import terminal as schema
from lookout.schemas.common import MAX_JSON_INT
from lookout.terminal import listing
from lookout.terminal.act import act as act_on
from lookout.terminal.act import check_until
from lookout.terminal.blocks.blocks import block_with_output
from lookout.terminal.input.steps import InputStep
from lookout.terminal.registry import TerminalRegistry
from lookout.terminal.screen.layers import ViewOptions, parse_layers, parse_region
from lookout.terminal.session import TerminalSession
from lookout.terminal.spec import TerminalSpec
from lookout.terminal.waits.waiting import Until, compile_until
from lookout.timeline.recording import current_agent

router = APIRouter(prefix="/v1/terminals", tags=["terminals"])

MAX_RAW_READ = 4 << 20
DEFAULT_BLOCK_TOKENS = 2000


def _manager(request: Request) -> TerminalRegistry:
    return request.app.state.terminals


def input_steps(body: schema.TerminalInput) -> list[InputStep]:
    """The input of a request (an object or a list of steps) as the terminal's steps."""
    steps = body if isinstance(body, list) else [body]
    return [InputStep(text=s.text, keys=tuple(s.keys or ()), paste=s.paste) for s in steps]


def _until(spec: schema.Until | None) -> Until:
    if spec is None:
        return compile_until(stable_ms=schema.DEFAULT_ACT_STABLE_MS)
    return compile_until(**spec.model_dump())


def _view(options: schema.ScreenOptions) -> ViewOptions:
    """The parsed screen options; a malformed layer list or region is a 400."""
    return ViewOptions(
        layers=parse_layers(options.layers),
        region=parse_region(options.region) if options.region is not None else None,
        around_cursor=options.around_cursor,
        compact=options.compact,
        encoding=options.encoding,
        max_tokens=options.max_tokens,
        format=options.format,
    )


async def _session(request: Request, terminal_id: str) -> TerminalSession:
    return await _manager(request).get(terminal_id)


add_lease_routes(router, "terminal", _session)


@router.post("", status_code=201)
async def create_terminal(body: schema.CreateTerminal, request: Request) -> JSONResponse:
    spec = TerminalSpec(body.command, body.cwd, body.env, body.cols, body.rows, body.name, body.shell_integration)
    session = await _manager(request).create(spec)
    return JSONResponse(session.describe(), status_code=201)


@router.get("")
async def list_terminals(
    request: Request,
    status: Annotated[list[schema.Status] | None, Query(description="only terminals of these statuses")] = None,
    max_tokens: Annotated[schema.ListingTokens, Query()] = None,
) -> JSONResponse:
    terminals = await _manager(request).describe_all(set(status) if status else None)
    listed = partial(listing.fitted, terminals, max_tokens)  # a budget counts tokens: in a worker
    return JSONResponse(listed() if max_tokens is None else await asyncio.to_thread(listed))


@router.post("/prune")
async def prune_terminals(request: Request, dry_run: bool = False) -> JSONResponse:
    """Remove the files of the exited terminals the retention does not keep (`?dry_run=true`: only say which)."""
    return JSONResponse(await _manager(request).prune(dry_run=dry_run))


@router.get("/{terminal_id}")
async def get_terminal(terminal_id: str, request: Request) -> JSONResponse:
    return JSONResponse((await _manager(request).get(terminal_id)).describe())


@router.delete("/{terminal_id}")
async def delete_terminal(terminal_id: str, request: Request, purge: bool = False) -> JSONResponse:
    return JSONResponse({**await _manager(request).close(terminal_id, purge=purge), "purged": purge})


@router.post("/{terminal_id}/input")
async def send_input(terminal_id: str, body: schema.TerminalInput, request: Request) -> JSONResponse:
    """An object (paste, then text, then keys) or a list of such steps, sent in order."""
    return JSONResponse((await _manager(request).get(terminal_id)).send(*input_steps(body)))


@router.post("/{terminal_id}/resize")
async def resize_terminal(terminal_id: str, body: schema.Resize, request: Request) -> JSONResponse:
    session = await _manager(request).get(terminal_id)
    session.resize(body.cols, body.rows)
    await session.catch_up()  # the screen has taken the size where the holder resized the PTY
    return JSONResponse(session.describe())


@router.get("/{terminal_id}/screen")
async def get_screen(terminal_id: str, request: Request, options: Annotated[schema.ScreenQuery, Query()]) -> Response:
    """The layered screenshot: JSON, or text/plain for format=text; with `at` or `at_time`, the screen as it
    was then (rebuilt from the journal). A live JSON screen names the inputs other hands sent since the caller's
    own last input (`other_hands` and a `note`)."""
    session = await _manager(request).get(terminal_id)
    if options.at is None and options.at_time is None:
        screen = await session.screen(
            _view(options), scrollback=options.scrollback, changed_since=options.changed_since
        )
        others = session.hands.since_own(current_agent.get())
        if others and isinstance(screen, dict):
            screen = {**screen, "other_hands": others, "note": notice_line(others, SINCE_INPUT)}
    else:
        _check_past(options)
        when = _instant(options.at_time) if options.at_time is not None else None
        screen = await session.screen_model.view_at(_view(options), options.at, when)
    return PlainTextResponse(screen) if isinstance(screen, str) else JSONResponse(screen)


def _check_past(options: schema.ScreenQuery) -> None:
    if options.at is not None and options.at_time is not None:
        raise BadInput("give at (a raw offset) or at_time, not both", field="at")
    if options.at is not None and options.at < 0:
        raise BadInput(f"at={options.at} is negative: it is a raw offset, from 0", field="at")
    if options.scrollback or options.changed_since is not None:
        raise BadInput(
            "a past screen has no scrollback or changed_since: checkpoints keep the view", field="scrollback"
        )


def _instant(text: str) -> float:
    """Unix seconds of `at_time`: Unix milliseconds (digits), or an ISO 8601 time (UTC when it names no zone)."""
    if text.isdigit():
        return int(text) / 1000
    try:
        moment = datetime.fromisoformat(text.replace("Z", "+00:00"))
    except ValueError:
        raise BadInput(f"at_time {text!r} is neither Unix milliseconds nor an ISO 8601 time", field="at_time") from None
    return (moment if moment.tzinfo else moment.replace(tzinfo=UTC)).timestamp()


@router.post("/{terminal_id}/wait")
async def wait_terminal(terminal_id: str, body: schema.WaitRequest, request: Request) -> JSONResponse:
    session = await _manager(request).get(terminal_id)
    until = _until(body.until)
    check_until(session, until)
    return JSONResponse((await session.wait(until, body.since, body.timeout_ms)).to_json())


@router.post("/{terminal_id}/act")
async def act(terminal_id: str, body: schema.ActRequest, request: Request) -> JSONResponse:
    """Input, then wait, then the screen: one round trip for the usual agent step."""
    session = await _manager(request).get(terminal_id)
    view = _view(body.screen)
    steps = input_steps(body.input) if body.input is not None else None
    options = body.screen
    result = await act_on(session, steps, _until(body.until), body.timeout_ms, view, options.scrollback,
                          options.changed_since, body.since)  # fmt: skip
    return JSONResponse(result.to_json(body.detail))


@router.get("/{terminal_id}/raw")
async def read_raw(
    terminal_id: str,
    request: Request,
    offset: Annotated[int, Query(ge=0, le=MAX_JSON_INT)] = 0,
    limit: Annotated[int, Query(ge=1, le=MAX_RAW_READ)] = 65536,
) -> JSONResponse:
    session = await _manager(request).get(terminal_id)
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
    """Finished command blocks (without their output) and the running one, each with its `hand`."""
    session = await _manager(request).get(terminal_id)
    current, hands = session.blocks.current, session.hands
    return JSONResponse({
        "blocks": [hands.with_hand(block.to_json()) for block in session.blocks.finished(since, last)],
        "current": hands.with_hand(current.to_json()) if current is not None else None,
    })  # fmt: skip


@router.get("/{terminal_id}/blocks/{n}")
async def get_block(
    terminal_id: str,
    n: Annotated[int, Path(ge=1, le=MAX_JSON_INT)],
    request: Request,
    max_tokens: Annotated[int, Query(ge=50, le=100_000)] = DEFAULT_BLOCK_TOKENS,
) -> JSONResponse:
    """One block with its output rendered as text: redraws collapsed, repeats folded, head and tail kept."""
    session = await _manager(request).get(terminal_id)
    block = await block_with_output(session, n, max_tokens)
    if block is None:
        raise NotFound(f"terminal {terminal_id} has no block {n}")
    return JSONResponse(session.hands.with_hand(block))
