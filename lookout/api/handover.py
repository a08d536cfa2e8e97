"""Requests while the daemon hands over to the one that replaces it (`lookout restart`, lookout.daemon.serve).

The gate is the outermost middleware, in both daemons of a hot restart.

In the new daemon, which accepts on the shared socket before it takes anything over (`adopting`), every
request but `GET /healthz` waits until it holds the data dir and has listed every terminal (`adopted`), then is
served: never a 404 for a terminal being adopted, never a listing without it (a request for a terminal not yet
adopted waits for it in the registry: lookout.terminal.adoptions). One that waits longer than
`LOOKOUT_TAKEOVER_WAIT_S`, or whose daemon fails to take over (`adoption_failed`), is answered 503 `restarting`
saying to send it again. WebSockets wait the same way.

In the old daemon: while the new daemon takes the data dir over (`hold`), requests that
arrive here wait, and live WebSockets are closed with 1012 (service restart: clients connect again, to the
new daemon); once it serves (`pass_to`), requests that still arrive here (on connections already open) are
passed to it, and every answer given from then on closes its connection, so clients move over. Requests begun
before the handover end here: a wait runs to its end and its answer is true (this daemon still follows the
terminals, read-only). Before the terminals are let go, the short requests in flight are given time to end
(`settled`): a wait or an act, page actions and scripts, and `/mcp` calls may go on. A request begun here
whose input finds its terminal already let go (an act whose body came late, an `/mcp` tool's call) has
changed nothing (lookout.core.errors.TakenOver): it waits here until the new daemon serves and is passed to it
whole, so its input is written once, by the daemon that holds the terminal, after what was sent before it.
"""

from __future__ import annotations

import asyncio
import re
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import TYPE_CHECKING, Any, Literal

from starlette.types import ASGIApp, Message, Receive, Scope, Send

from lookout.api.front_door import HEALTH
from lookout.api.responses import error_response

if TYPE_CHECKING:
    import httpx

LONG = re.compile(r"^/v1/terminals/[^/]+/(?:wait|act)$|^/v1/(?:pages|devices)/[^/]+/(?:action|script)$|^/mcp$")
"""Requests that may run long and go on after the terminals are let go (they change nothing there)."""
INPUT = re.compile(r"^/v1/terminals/[^/]+/(?:input|act)$")
"""Requests that write input: passed to the new daemon whole when their terminal was let go before they wrote."""
RESTARTING = 1012
TAKEN_OVER = "x-lookout-taken-over"
"""The header of an answer that says its request is the new daemon's to serve (see TakenOver)."""
_TAKEN_OVER = TAKEN_OVER.encode()
_HOP_BY_HOP = frozenset(
    {b"connection", b"keep-alive", b"transfer-encoding", b"te", b"trailer", b"upgrade", b"proxy-connection"}
)


class HandoverGate:
    """Where the daemon is in a handover, shared by the middleware and the restart that drives it."""

    def __init__(self, adopt_wait_s: float = 60.0) -> None:
        self.phase: Literal["adopting", "serving", "holding", "passing"] = "serving"
        self.adopt_wait_s = adopt_wait_s
        self._refusal: str | None = None
        """Why requests held while adopting are refused (the take-over failed)."""
        self.target: tuple[str, int] | None = None
        self._open = asyncio.Event()
        self._open.set()
        self.short = 0
        self.long = 0
        self._quiet = asyncio.Event()
        self._quiet.set()
        self._sockets: set[Callable[[], Awaitable[None]]] = set()
        self._client: httpx.AsyncClient | None = None

    @property
    def passing(self) -> bool:
        return self.phase == "passing"

    @property
    def busy(self) -> bool:
        return bool(self.short or self.long)

    def adopting(self) -> None:
        """This daemon accepts before it holds the data dir: requests wait for `adopted`."""
        self.phase = "adopting"
        self._open.clear()

    def adopted(self) -> None:
        self.phase = "serving"
        self._open.set()

    def adoption_failed(self, why: str) -> None:
        """The take-over failed (this daemon ends): the requests that wait here are refused with `why`."""
        self._refusal = why
        self._open.set()

    async def until_adopted(self) -> str | None:
        """Wait until this daemon has taken over; None once it has, else why the request is refused."""
        try:
            await asyncio.wait_for(self._open.wait(), self.adopt_wait_s)
        except TimeoutError:
            return (f"lookout is restarting: this new daemon has not taken the terminals over from the one before "
                    f"it within {self.adopt_wait_s:g} s (LOOKOUT_TAKEOVER_WAIT_S); send the request again")  # fmt: skip
        return self._refusal

    async def hold(self) -> None:
        """New requests wait; live WebSockets are closed (1012)."""
        self.phase = "holding"
        self._open.clear()
        await asyncio.gather(*(close() for close in list(self._sockets)), return_exceptions=True)

    async def settled(self, timeout: float) -> bool:
        """Whether the short requests in flight ended within `timeout` seconds."""
        try:
            await asyncio.wait_for(self._quiet.wait(), timeout)
        except TimeoutError:
            return False
        return True

    def pass_to(self, address: tuple[str, int]) -> None:
        """The new daemon serves at `address`: pass it what arrives here from now on."""
        import httpx  # only a daemon being replaced needs it (its import is a fifth of the daemon's start)

        self.target = address
        self.phase = "passing"
        self._client = httpx.AsyncClient(base_url=f"http://{address[0]}:{address[1]}", timeout=None)
        self._open.set()

    def resume(self) -> None:
        """The handover failed: serve again."""
        self.phase = "serving"
        self._open.set()

    async def wait_open(self) -> None:
        await self._open.wait()

    def begun(self, long: bool) -> None:
        if long:
            self.long += 1
        else:
            self.short += 1
            self._quiet.clear()

    def ended(self, long: bool) -> None:
        if long:
            self.long -= 1
        else:
            self.short -= 1
            if not self.short:
                self._quiet.set()

    def track(self, close: Callable[[], Awaitable[None]]) -> Callable[[], None]:
        self._sockets.add(close)
        return lambda: self._sockets.discard(close)

    async def passed(self, scope: Scope, receive: Receive, send: Send) -> None:
        """Pass an HTTP request to the new daemon and its answer back (its connection then closes)."""
        assert self._client is not None
        headers = [(k, v) for k, v in scope["headers"] if k not in _HOP_BY_HOP]
        path = scope.get("raw_path") or scope["path"].encode()
        query = scope.get("query_string") or b""
        url = path.decode("latin-1") + ("?" + query.decode("latin-1") if query else "")
        request = self._client.build_request(scope["method"], url, headers=headers, content=_body(receive))
        import httpx

        try:
            response = await self._client.send(request, stream=True)
        except httpx.HTTPError as exc:
            message = (
                f"lookout restarted, and the new daemon did not take this request ({type(exc).__name__}); send it again"
            )
            await error_response(503, "restarting", message)(scope, receive, send)
            return
        try:
            out = [(k, v) for k, v in response.headers.raw if k.lower() not in _HOP_BY_HOP]
            await send({"type": "http.response.start", "status": response.status_code,
                        "headers": [*out, (b"connection", b"close")]})  # fmt: skip
            async for chunk in response.aiter_raw():
                await send({"type": "http.response.body", "body": chunk, "more_body": True})
            await send({"type": "http.response.body", "body": b"", "more_body": False})
        finally:
            await response.aclose()

    async def close(self) -> None:
        if self._client is not None:
            await self._client.aclose()


async def _refuse(scope: Scope, receive: Receive, send: Send, why: str) -> None:
    if scope["type"] == "websocket":
        await send({"type": "websocket.close", "code": RESTARTING, "reason": "lookout is restarting"})
    else:
        await error_response(503, "restarting", why, headers={"Retry-After": "1"})(scope, receive, send)


async def _body(receive: Receive) -> AsyncIterator[bytes]:
    while True:
        message = await receive()
        if message["type"] != "http.request":
            return
        yield message.get("body", b"")
        if not message.get("more_body"):
            return


class _Kept:
    """A request's `receive` that keeps the body the app reads (within the Guard's limits), to replay it."""

    def __init__(self, receive: Receive) -> None:
        self._receive = receive
        self._body = bytearray()
        self._replayed = False

    async def __call__(self) -> Message:
        message = await self._receive()
        if message["type"] == "http.request":
            self._body += message.get("body", b"")
        return message

    async def replay(self) -> Message:
        if self._replayed:
            return await self._receive()
        self._replayed = True
        return {"type": "http.request", "body": bytes(self._body), "more_body": False}


class Handover:
    """The middleware (see the module docstring)."""

    def __init__(self, app: ASGIApp, gate: HandoverGate) -> None:
        self.app = app
        self.gate = gate

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        gate = self.gate
        if scope["type"] not in ("http", "websocket"):
            await self.app(scope, receive, send)
            return
        if gate.phase == "adopting" and scope["path"] != HEALTH and (refusal := await gate.until_adopted()):
            await _refuse(scope, receive, send, refusal)
            return
        if scope["type"] == "websocket":
            await self._websocket(scope, receive, send)
            return
        if gate.phase == "holding":
            await gate.wait_open()
        if gate.phase == "passing":
            await gate.passed(scope, receive, send)
            return
        long = LONG.match(scope["path"]) is not None
        gate.begun(long)
        try:
            if not INPUT.match(scope["path"]):
                await self.app(scope, receive, self._closing_once_handed_over(send))
                return
            kept = _Kept(receive)
            if await self._served_here(scope, kept, send):
                return
            await gate.wait_open()  # its terminal was let go: once the new daemon serves, it answers
            if gate.passing:  # (a property: the phase changed while this request ran)
                await gate.passed(scope, kept.replay, send)
            else:  # the new daemon failed and this one took the terminals back
                await self.app(scope, kept.replay, self._closing_once_handed_over(send))
        finally:
            gate.ended(long)

    async def _served_here(self, scope: Scope, receive: Receive, send: Send) -> bool:
        """Serve the request here; False when it was left untouched for the new daemon (see TakenOver), its
        answer here swallowed."""
        closing = self._closing_once_handed_over(send)
        taken_over = False

        async def watched(message: Message) -> None:
            nonlocal taken_over
            if message["type"] == "http.response.start":
                taken_over = any(key == _TAKEN_OVER for key, _ in message.get("headers", []))
            if not taken_over:
                await closing(message)

        await self.app(scope, receive, watched)
        return not taken_over

    async def _websocket(self, scope: Scope, receive: Receive, send: Send) -> None:
        if self.gate.phase != "serving":
            await send({"type": "websocket.close", "code": RESTARTING, "reason": "lookout is restarting"})
            return
        closed = asyncio.Event()

        async def close() -> None:
            closed.set()
            await send({"type": "websocket.close", "code": RESTARTING, "reason": "lookout is restarting"})

        ending = asyncio.ensure_future(closed.wait())

        async def guarded_receive() -> Message:
            task = asyncio.ensure_future(receive())
            done, _ = await asyncio.wait({task, ending}, return_when=asyncio.FIRST_COMPLETED)
            if task in done:
                return task.result()
            task.cancel()
            return {"type": "websocket.disconnect", "code": RESTARTING}

        async def guarded_send(message: Message) -> None:
            if not closed.is_set():
                await send(message)

        untrack = self.gate.track(close)
        try:
            await self.app(scope, guarded_receive, guarded_send)
        finally:
            untrack()
            ending.cancel()

    def _closing_once_handed_over(self, send: Send) -> Send:
        """`send` that, once the daemon is being replaced, tells the client its connection closes after this
        answer (its next request then reaches the new daemon)."""

        async def wrapped(message: Message) -> None:
            if message["type"] == "http.response.start" and self.gate.phase != "serving":
                headers: list[Any] = [h for h in message.get("headers", []) if h[0].lower() != b"connection"]
                message = {**message, "headers": [*headers, (b"connection", b"close")]}
            await send(message)

        return wrapped
