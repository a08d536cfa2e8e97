"""ASGI middleware refusing JSON bodies whose strings hold a lone surrogate (400), before any route sees them,
and reading a JSON body sent without `Content-Type: application/json` (curl's `-d` sends
`application/x-www-form-urlencoded`; a bare request sends none) as JSON, as curl users expect.

JSON can carry `"\\ud800"`, which Python decodes to a string that is no valid Unicode: it cannot be encoded
as UTF-8, so it would fail wherever it is written (a terminal, a file, a page, an answer). Paired surrogates
(`"\\ud83d\\ude00"`) are one character after decoding and pass.
"""

from __future__ import annotations

import json
import re
from typing import Any

from starlette.types import ASGIApp, Message, Receive, Scope, Send

from lookout.api.responses import error_response

_LONE = re.compile("[\ud800-\udfff]")
_OTHER_TYPES = (b"", b"application/x-www-form-urlencoded", b"text/plain")
"""Content types a JSON body may come with by accident: read as JSON when the body is a JSON object or list."""


def lone_surrogate(value: Any, where: str = "body") -> str | None:
    """Where the first lone surrogate is in decoded JSON (`body.command[1]`), or None."""
    if isinstance(value, str):
        return where if _LONE.search(value) else None
    if isinstance(value, dict):
        for key, item in value.items():
            found = lone_surrogate(key, f"{where} key") or lone_surrogate(item, f"{where}.{key}")
            if found:
                return found
    elif isinstance(value, list):
        for i, item in enumerate(value):
            if found := lone_surrogate(item, f"{where}[{i}]"):
                return found
    return None


class TextGuard:
    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        content_type = dict(scope.get("headers", [])).get(b"content-type", b"")
        media_type = content_type.split(b";")[0].strip().lower()
        if b"json" not in media_type and media_type not in _OTHER_TYPES:
            await self.app(scope, receive, send)
            return
        messages: list[Message] = []
        body = bytearray()
        while True:
            message = await receive()
            messages.append(message)
            if message["type"] != "http.request":
                break
            body += message.get("body", b"")
            if not message.get("more_body", False):
                break
        where = None
        if b"json" not in media_type:
            decoded = _object_or_list(body)
            if decoded is None:  # not JSON: the route reads it as what it says it is
                await self.app(scope, _replay(messages, receive), send)
                return
            headers = [(k, v) for k, v in scope["headers"] if k != b"content-type"]
            scope = {**scope, "headers": [*headers, (b"content-type", b"application/json")]}
            where = lone_surrogate(decoded)
        elif b"\\u" in body or b"\\U" in body:
            try:
                where = lone_surrogate(json.loads(body))
            except ValueError:
                pass  # not JSON: the route answers that
        if where is not None:
            reason = f"{where} holds a lone surrogate (U+D800-U+DFFF without its pair), which is not a character"
            await error_response(400, "bad_input", reason, field=where)(scope, receive, send)
            return

        await self.app(scope, _replay(messages, receive), send)


def _object_or_list(body: bytes | bytearray) -> Any:
    """The body decoded when it is a JSON object or list, else None."""
    if body.lstrip()[:1] not in (b"{", b"["):
        return None
    try:
        return json.loads(body)
    except ValueError:
        return None


def _replay(messages: list[Message], receive: Receive) -> Receive:
    """A receive that hands back the messages already read, then reads on."""

    async def replay() -> Message:
        return messages.pop(0) if messages else await receive()

    return replay
