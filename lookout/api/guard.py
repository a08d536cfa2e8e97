"""ASGI middleware in front of every route: Host and Origin, the bearer token, and the request body's size and time."""

from __future__ import annotations

import asyncio
import base64
import binascii
from urllib.parse import parse_qs

import orjson
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from lookout.api.auth_throttle import AuthThrottle
from lookout.api.front_door import Streams
from lookout.api.hosts import host_allowed, normalized_hosts, origin_allowed
from lookout.api.responses import error_response
from lookout.core.auth_token import token_matches

OPEN_PATHS = frozenset({"/healthz", "/"})
OPEN_PREFIXES = ("/ui/",)
"""The web UI's static files: its sign-in page asks for the token, so loading it cannot need one."""

SUBPROTOCOL = "lookout"
BEARER_SUBPROTOCOL = "lookout.bearer."
"""Browsers cannot set headers on a WebSocket, but they can offer subprotocols: the web UI offers `lookout` and
`lookout.bearer.<the token in unpadded base64url>`, lookout accepts `lookout`, and the token stays out of URLs."""


class Guard:
    """Refuses requests addressed to another host or sent from another origin (403), with a repeated
    Authorization header (400), without the token (401, slowed for a client that keeps guessing), bodies
    over `max_body` bytes (413) or slower than `body_timeout_s` (408), and a WebSocket beyond `max_streams`
    open at once (503, counted when it is let in, before any await).

    HTTP requests carry the token as `Authorization: Bearer <token>`; WebSocket upgrades may also pass it in a
    `lookout.bearer.` subprotocol or as `?token=` (for scripts; the log masks it)."""

    def __init__(self, app: ASGIApp, token: str, max_body: int, allowed_hosts: tuple[str, ...] = (),
                 body_timeout_s: float = 30.0, throttle: AuthThrottle | None = None,
                 max_streams: int = 256, streams: Streams | None = None) -> None:  # fmt: skip
        self.app = app
        self.token = token
        self.max_body = max_body
        self.allowed_hosts = normalized_hosts(allowed_hosts)
        self.body_timeout_s = body_timeout_s
        self.throttle = throttle or AuthThrottle()
        self.streams = streams or Streams(max_streams)
        """WebSocket connections let in and not yet ended (shared with the front door, lookout.api.front_door)."""

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] not in ("http", "websocket"):
            await self.app(scope, receive, send)
            return
        refusal = await self._refusal(scope)
        if refusal is not None:
            status, code, message, headers = refusal
            if scope["type"] == "websocket":  # closed before the handshake: the client sees a 403
                await send({"type": "websocket.close", "code": 4000 + status, "reason": message[:120]})
            else:
                await error_response(status, code, message, headers=headers)(scope, receive, send)
            return
        if scope["type"] == "websocket":
            await self._websocket(scope, receive, send)
        else:
            await self._with_body(scope, receive, send)

    async def _refusal(self, scope: Scope) -> tuple[int, str, str, dict[str, str] | None] | None:
        """Why this request may not go on (status, code, message, headers), or None."""
        host = _header(scope, b"host")
        if not host_allowed(host, self.allowed_hosts):
            return 403, "forbidden_host", (
                f"Host {host!r} is not a loopback name or address: lookout answers other names only when they "
                "are listed in LOOKOUT_ALLOWED_HOSTS (a guard against DNS rebinding)"), None  # fmt: skip
        if not origin_allowed(_header(scope, b"origin"), host or ""):
            return 403, "forbidden_origin", "requests from a page on another origin are refused", None
        path = scope.get("path", "")
        if path in OPEN_PATHS or path.startswith(OPEN_PREFIXES):
            return None
        if sum(name == b"authorization" for name, _ in scope["headers"]) > 1:
            return 400, "bad_request", "more than one Authorization header", None
        client = (scope.get("client") or ("",))[0]
        if not await self.throttle.wait_turn(client):
            retry = {"Retry-After": str(self.throttle.retry_after(client))}
            return 429, "too_many_attempts", "too many wrong tokens from this address: wait and retry", retry
        if not token_matches(self.token, _given_token(scope)):
            self.throttle.failed(client)
            retry_after = self.throttle.retry_after(client)
            headers = {"Retry-After": str(retry_after)} if retry_after else None
            return 401, "unauthorized", "missing or wrong token (Authorization: Bearer <token>)", headers
        self.throttle.succeeded(client)
        return None

    async def _websocket(self, scope: Scope, receive: Receive, send: Send) -> None:
        """Within `max_streams`, the connection goes on (counted until it ends), else it is refused with the limit."""
        if self.streams.full:
            await _refuse_websocket(scope, send, 503, "too_many_streams", self.streams.refusal())
            return
        self.streams.open += 1
        try:
            await self._websocket_app(scope, receive, send)
        finally:
            self.streams.open -= 1

    async def _websocket_app(self, scope: Scope, receive: Receive, send: Send) -> None:
        """The app sees no bearer subprotocol; when the client offered `lookout`, the accept names it (a browser
        fails a handshake that names none of the subprotocols it offered)."""
        offered = scope.get("subprotocols") or []
        scope = {**scope, "subprotocols": [p for p in offered if not p.startswith(BEARER_SUBPROTOCOL)]}
        if SUBPROTOCOL not in offered:
            await self.app(scope, receive, send)
            return

        async def accept_lookout(message: Message) -> None:
            if message["type"] == "websocket.accept" and not message.get("subprotocol"):
                message = {**message, "subprotocol": SUBPROTOCOL}
            await send(message)

        await self.app(scope, receive, accept_lookout)

    async def _with_body(self, scope: Scope, receive: Receive, send: Send) -> None:
        """The body is read up front, within the size limit and the time limit, then replayed to the app."""
        length = _header(scope, b"content-length")
        if length is not None and length.isdigit() and int(length) > self.max_body:
            await self._too_large(scope, receive, send)
            return
        body = bytearray()
        try:
            async with asyncio.timeout(self.body_timeout_s):
                while True:
                    message = await receive()
                    if message["type"] != "http.request":
                        return  # the client left
                    body += message.get("body", b"")
                    if len(body) > self.max_body:
                        await self._too_large(scope, receive, send)
                        return
                    if not message.get("more_body", False):
                        break
        except TimeoutError:
            reason = f"the request body did not arrive within {self.body_timeout_s:g} s"
            await error_response(408, "request_timeout", reason, headers={"Connection": "close"})(scope, receive, send)
            return
        replayed = False

        async def replay() -> Message:
            nonlocal replayed
            if replayed:
                return await receive()
            replayed = True
            return {"type": "http.request", "body": bytes(body), "more_body": False}

        await self.app(scope, replay, send)

    async def _too_large(self, scope: Scope, receive: Receive, send: Send) -> None:
        await error_response(413, "too_large", f"request body exceeds {self.max_body} bytes")(scope, receive, send)


def _header(scope: Scope, name: bytes) -> str | None:
    """The first value of header `name`, or None."""
    for key, value in scope["headers"]:
        if key == name:
            return value.decode("latin-1")
    return None


def _given_token(scope: Scope) -> str | None:
    auth = _header(scope, b"authorization") or ""
    if auth[:7].lower() == "bearer ":
        return auth[7:].strip()
    if scope["type"] != "websocket":
        return None
    for protocol in scope.get("subprotocols") or []:
        if protocol.startswith(BEARER_SUBPROTOCOL):
            return _unbase64(protocol[len(BEARER_SUBPROTOCOL) :])
    values = parse_qs(scope.get("query_string", b"").decode("latin-1")).get("token")
    return values[0] if values else None


def _unbase64(text: str) -> str | None:
    try:
        return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4)).decode()
    except (binascii.Error, UnicodeDecodeError, ValueError):
        return None


async def _refuse_websocket(scope: Scope, send: Send, status: int, code: str, message: str) -> None:
    """Refuse a WebSocket before its handshake: with an HTTP answer that carries the JSON error where the server
    can send one (the ASGI denial response), else with a close (the client sees a 403)."""
    if "websocket.http.response" not in scope.get("extensions", {}):
        await send({"type": "websocket.close", "code": 4000 + status, "reason": message[:120]})
        return
    body = orjson.dumps({"error": {"code": code, "message": message}})
    headers = [(b"content-type", b"application/json"), (b"content-length", str(len(body)).encode())]
    await send({"type": "websocket.http.response.start", "status": status, "headers": headers})
    await send({"type": "websocket.http.response.body", "body": body})
