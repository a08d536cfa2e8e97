"""HTTP and WebSocket adapters for what streams out of a terminal: deltas, recordings, live streams, and
the lifecycle events of every resource.

A live stream starts with a hydration message, then follows the session. Each client has a bounded feed:
a client that does not keep up is resynced (a fresh hydration) and one that stops reading is dropped; the
session and the other clients never wait for it.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Mapping
from typing import Annotated, Any, Literal, TypeVar

import orjson
from fastapi import APIRouter, Query, Request, WebSocket, WebSocketDisconnect
from fastapi.responses import StreamingResponse
from pydantic import BaseModel, ValidationError

from lookout.api.responses import JSONResponse
from lookout.api.terminals import input_steps
from lookout.core.errors import BadInput, LookoutError
from lookout.core.feed import BoundedFeed
from lookout.schemas.common import MAX_JSON_INT
from lookout.schemas.terminal import InputStep, Resize
from lookout.terminal.journal.recording import asciicast
from lookout.terminal.registry import TerminalRegistry
from lookout.terminal.session import TerminalSession

router = APIRouter(tags=["streams"])
_Model = TypeVar("_Model", bound=BaseModel)

FEED_BYTES = 4 << 20
"""What one client may have pending before it is resynced."""
MAX_MESSAGE = 256 << 10
MAX_DELTAS_BYTES = 1 << 20
"""A deltas page stops before the delta that would take it past this many bytes of the file."""
SEND_TIMEOUT_S = 10.0
"""A client that takes longer than this to accept one message is dropped."""


def _manager(app_state: Any) -> TerminalRegistry:
    return app_state.terminals


@router.get("/v1/terminals/{terminal_id}/deltas")
async def read_deltas(
    terminal_id: str,
    request: Request,
    cursor: Annotated[int, Query(ge=0, le=MAX_JSON_INT)] = 0,
    limit: Annotated[int, Query(ge=1, le=1000)] = 100,
) -> JSONResponse:
    """Up to `limit` deltas and about MAX_DELTAS_BYTES of them (at least one): page on from resume_cursor."""
    session = await _manager(request.app.state).get(terminal_id)
    page = await session.screen_model.read_deltas(cursor, limit, MAX_DELTAS_BYTES)
    return JSONResponse(
        {"cursor": page.cursor, "resume_cursor": page.resume_cursor, "file_size": page.file_size, "deltas": page.deltas}
    )


@router.get("/v1/terminals/{terminal_id}/recording")
async def recording(
    terminal_id: str, request: Request, version: Annotated[int, Query(ge=2, le=3)] = 3
) -> StreamingResponse:
    """The session as asciicast (v3 by default; v2 for players that only read v2)."""
    session = await _manager(request.app.state).get(terminal_id)
    cast = await asyncio.to_thread(asciicast, session.directory, session.meta, version)  # reads the index
    lines = (line.encode() for line in cast)
    headers = {"Content-Disposition": f'inline; filename="{terminal_id}.cast"'}
    return StreamingResponse(lines, media_type="application/x-asciicast", headers=headers)


@router.websocket("/v1/terminals/{terminal_id}/stream")
async def stream(
    websocket: WebSocket, terminal_id: str, mode: Literal["raw", "deltas"] = "raw", styles: bool = False,
    take_over: bool = False,
) -> None:  # fmt: skip
    """`mode=raw`: a `hydrate` message (JSON: offset, cols, rows, the terminal's name, its lease or null, data:
    escape string that repaints the screen), then the output as binary messages, with `{"type": "resize", "cols", "rows"}` where the PTY was
    resized (a viewer shows the PTY at that size; it resizes it only when a person takes it over).
    `mode=deltas`: a full delta, then each delta (JSON; with `styles=true` each also carries the colour and
    style runs of its rows).
    Either way the client may send `{"type": "input", "text"|"keys"|"paste": ..., "take_over"?: true}`
    (`take_over`: type into a terminal another hand holds, knowingly; recorded),
    `{"type": "resize", "cols", "rows"}` (checked as the bodies of POST /input and /resize are; a bad one
    gets an `error` message) or binary input; an `exit` message ends the stream. `take_over=true`: all this
    connection's input is typed knowingly despite another hand's lease (`lookout attach --take-over`)."""
    try:
        session = await _manager(websocket.app.state).get(terminal_id)
    except LookoutError as exc:
        await websocket.close(code=4404, reason=exc.message)
        return
    await websocket.accept()
    try:
        await session.screen_model.load()
    except LookoutError as exc:  # its screen cannot be rebuilt (a damaged journal): 4000 + the HTTP status
        await websocket.close(code=4000 + exc.status, reason=exc.message.encode()[:120].decode(errors="ignore"))
        return
    feed: BoundedFeed[Any] = BoundedFeed(FEED_BYTES)
    if mode == "raw":
        stop_output = session.subscribe_output(lambda data: feed.push(data, len(data)))
        stop_resizes = session.subscribe_resizes(lambda cols, rows: feed.push({"cols": cols, "rows": rows}, 64))

        def unsubscribe() -> None:
            stop_output()
            stop_resizes()

    else:
        unsubscribe = session.screen_model.subscribe(
            lambda delta: feed.push(delta, len(delta["changed"]) * 80 + 200), styles=styles
        )
    tasks = [
        asyncio.create_task(_send(websocket, session, feed, mode, styles)),
        asyncio.create_task(_receive(websocket, session, take_over)),
    ]
    try:
        await asyncio.wait(tasks, return_when=asyncio.FIRST_COMPLETED)
    finally:
        unsubscribe()
        for task in tasks:
            task.cancel()
        with contextlib.suppress(Exception):
            await websocket.close()


async def _send(
    websocket: WebSocket, session: TerminalSession, feed: BoundedFeed[Any], mode: str, styles: bool
) -> None:
    items: list[Any] | None = None  # None: send the full state first
    finished = asyncio.ensure_future(session.finished())
    try:
        while True:
            if items is None:
                await _send_timed(websocket, _hydration(session, mode, styles))
            elif mode == "raw":
                for run in _raw_runs(items):
                    if isinstance(run, dict):
                        await _send_timed(websocket, {"type": "resize", **run})
                        continue
                    for start in range(0, len(run), MAX_MESSAGE):  # clients limit message sizes (1 MiB is usual)
                        await _send_timed(websocket, run[start : start + MAX_MESSAGE])
            else:
                for delta in items:
                    await _send_timed(websocket, {"type": "delta", **delta})
            if finished.done() and not feed.pending:
                await _send_timed(websocket, {"type": "exit", "exit_code": session.exit_code})
                return
            take = asyncio.ensure_future(feed.take())
            done, _ = await asyncio.wait([take, finished], return_when=asyncio.FIRST_COMPLETED)
            if take in done:
                items = take.result()
            else:
                take.cancel()
                items = []
    finally:
        finished.cancel()


def _raw_runs(items: list[Any]) -> list[bytes | dict[str, int]]:
    """A raw stream's pending items in order: output joined into runs, resizes between them."""
    runs: list[bytes | dict[str, int]] = []
    pending: list[bytes] = []
    for item in items:
        if isinstance(item, bytes):
            pending.append(item)
            continue
        if pending:
            runs.append(b"".join(pending))
            pending = []
        runs.append(item)
    if pending:
        runs.append(b"".join(pending))
    return runs


def _hydration(session: TerminalSession, mode: str, styles: bool) -> dict[str, Any]:
    screen, meta = session.screen_model, session.meta
    if mode == "raw":  # live output goes on from the offset the repainted screen reflects
        return {"type": "hydrate", "offset": session.raw_offset, "cols": meta.cols, "rows": meta.rows,
                "name": meta.name, "data": screen.hydration(), "lease": session.lease()}  # fmt: skip
    full = screen.full_delta()
    return {"type": "delta", **(screen.with_styles(full) if styles else full.to_json())}


async def _send_timed(websocket: WebSocket, message: bytes | dict[str, Any]) -> None:
    if isinstance(message, bytes):
        sending = websocket.send_bytes(message)
    else:
        sending = websocket.send_text(orjson.dumps(message).decode())
    await asyncio.wait_for(sending, SEND_TIMEOUT_S)


async def _receive(websocket: WebSocket, session: TerminalSession, take_over: bool) -> None:
    with contextlib.suppress(WebSocketDisconnect):
        while True:
            message = await websocket.receive()
            if message["type"] == "websocket.disconnect":
                return
            try:
                _apply(session, message, take_over)
            except LookoutError as exc:
                error = {
                    "type": "error",
                    "error": {
                        "code": exc.code,
                        "message": exc.message,
                        **({"details": exc.details} if exc.details else {}),
                    },
                }
                await websocket.send_text(orjson.dumps(error).decode())


def _apply(session: TerminalSession, message: Mapping[str, Any], take_over: bool = False) -> None:
    """One message from a client: input or resize. `take_over`: the connection's input goes in despite
    another hand's lease (a person who was shown it)."""
    if message.get("bytes") is not None:
        session.send(text=message["bytes"].decode("utf-8", "surrogateescape"), take_over=take_over)
        return
    try:
        body = orjson.loads(message.get("text") or "")
    except orjson.JSONDecodeError as exc:
        raise BadInput(f"not JSON: {exc}") from exc
    kind = body.get("type") if isinstance(body, dict) else None
    if kind == "input":
        take_over = body.pop("take_over", False) is True or take_over  # a person shown the lease types anyway
        steps = body.get("steps")
        if steps is not None:  # {"type": "input", "steps": [...]}: ordered steps
            session.send(*input_steps([_validated(InputStep, step) for step in _steps_list(steps)]),
                         take_over=take_over)  # fmt: skip
        else:
            session.send(*input_steps(_validated(InputStep, body)), take_over=take_over)
    elif kind == "resize":
        size = _validated(Resize, body)
        session.resize(size.cols, size.rows)
    else:
        raise BadInput('expected {"type": "input", ...} or {"type": "resize", "cols": int, "rows": int}')


def _steps_list(steps: Any) -> list[dict[str, Any]]:
    if not isinstance(steps, list) or not all(isinstance(step, dict) for step in steps):
        raise BadInput("steps: a list of {text?, keys?, paste?} objects", field="steps")
    return steps


def _validated(model: type[_Model], body: dict[str, Any]) -> _Model:
    """A message (less its `type`) as the model of the matching HTTP route."""
    try:
        return model.model_validate({k: v for k, v in body.items() if k != "type"})
    except ValidationError as exc:
        problem = exc.errors()[0]
        where = ".".join(str(p) for p in problem.get("loc", ()))
        raise BadInput(f"{where or 'message'}: {problem.get('msg', 'invalid')}", field=where) from exc


@router.websocket("/v1/events")
async def events(websocket: WebSocket) -> None:
    """Lifecycle events of every resource, as JSON messages, from the moment of connection: the subscription is
    made before the handshake completes, so every event after the client's connect() returns reaches it."""
    bus = websocket.app.state.events
    subscription = bus.subscribe()
    receiving: asyncio.Future[Any] | None = None
    try:
        await websocket.accept()
        receiving = asyncio.ensure_future(websocket.receive())
        while True:
            event = asyncio.ensure_future(subscription.next())
            done, _ = await asyncio.wait([event, receiving], return_when=asyncio.FIRST_COMPLETED)
            if event in done:
                await _send_timed(websocket, event.result())
                continue
            event.cancel()
            if receiving.result()["type"] == "websocket.disconnect":
                return
            receiving = asyncio.ensure_future(websocket.receive())  # clients have nothing to say here
    except (TimeoutError, WebSocketDisconnect):
        pass
    finally:
        bus.unsubscribe(subscription)
        if receiving is not None:
            receiving.cancel()
