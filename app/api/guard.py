"""ASGI middleware in front of every route: the bearer token and the request size limit."""
from __future__ import annotations

from typing import Any
from urllib.parse import parse_qs, urlsplit

from starlette.types import ASGIApp, Message, Receive, Scope, Send

from app.api.responses import error_response
from app.core.auth_token import token_matches

OPEN_PATHS = frozenset({"/healthz", "/"})
OPEN_PREFIXES = ("/ui/",)
"""The web UI's static files: its sign-in page asks for the token, so loading it cannot need one."""


class Guard:
    """Refuses requests without the token (401), bodies over `max_body` bytes (413) and WebSocket upgrades
    from another origin (403).

    HTTP requests carry the token as `Authorization: Bearer <token>`; WebSocket upgrades may also pass it
    as `?token=` (browsers cannot set headers on them)."""

    def __init__(self, app: ASGIApp, token: str, max_body: int) -> None:
        self.app = app
        self.token = token
        self.max_body = max_body

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        path = scope.get("path", "")
        if scope["type"] not in ("http", "websocket") or path in OPEN_PATHS or path.startswith(OPEN_PREFIXES):
            await self.app(scope, receive, send)
            return
        if not token_matches(self.token, _given_token(scope)):
            if scope["type"] == "websocket":
                await send({"type": "websocket.close", "code": 4401, "reason": "missing or wrong token"})
            else:
                await error_response(401, "unauthorized", "missing or wrong token (Authorization: Bearer <token>)")(
                    scope, receive, send
                )
            return
        if scope["type"] == "websocket":
            if not _same_origin(scope):
                await send({"type": "websocket.close", "code": 4403, "reason": "cross-origin WebSocket refused"})
                return
            await self.app(scope, receive, send)
            return
        length = dict(scope["headers"]).get(b"content-length")
        if length is not None and length.isdigit() and int(length) > self.max_body:
            await self._too_large(scope, receive, send)
            return
        await self._limited(scope, receive, send)

    async def _limited(self, scope: Scope, receive: Receive, send: Send) -> None:
        """A body without Content-Length (chunked) is read up front, within the limit, then replayed."""
        if dict(scope["headers"]).get(b"content-length") is not None:
            await self.app(scope, receive, send)
            return
        body = bytearray()
        while True:
            message = await receive()
            if message["type"] != "http.request":
                return
            body += message.get("body", b"")
            if len(body) > self.max_body:
                await self._too_large(scope, receive, send)
                return
            if not message.get("more_body", False):
                break
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


def _same_origin(scope: Scope) -> bool:
    """A WebSocket upgrade from a web page must come from a page this daemon served (a page elsewhere must
    not drive a local shell); clients that are not browsers send no Origin."""
    headers: dict[bytes, bytes] = dict(scope["headers"])
    origin = headers.get(b"origin")
    if origin is None:
        return True
    return urlsplit(origin.decode("latin-1")).netloc == headers.get(b"host", b"").decode("latin-1")


def _given_token(scope: Scope) -> str | None:
    headers: dict[bytes, Any] = dict(scope["headers"])
    auth = headers.get(b"authorization", b"").decode("latin-1")
    if auth[:7].lower() == "bearer ":
        return auth[7:].strip()
    if scope["type"] == "websocket":
        values = parse_qs(scope.get("query_string", b"").decode("latin-1")).get("token")
        return values[0] if values else None
    return None
