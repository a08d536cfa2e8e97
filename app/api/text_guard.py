"""ASGI middleware refusing JSON bodies whose strings hold a lone surrogate (400), before any route sees them.

JSON can carry `"\\ud800"`, which Python decodes to a string that is no valid Unicode: it cannot be encoded
as UTF-8, so it would fail wherever it is written (a terminal, a file, a page, an answer). Paired surrogates
(`"\\ud83d\\ude00"`) are one character after decoding and pass.
"""
from __future__ import annotations

import json
import re
from typing import Any

from starlette.types import ASGIApp, Message, Receive, Scope, Send

from app.api.responses import error_response

_LONE = re.compile("[\ud800-\udfff]")


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
        content_type = dict(scope.get("headers", [])).get(b"content-type", b"")
        if scope["type"] != "http" or b"json" not in content_type:
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
        if b"\\u" in body or b"\\U" in body:
            try:
                where = lone_surrogate(json.loads(body))
            except ValueError:
                pass  # not JSON: the route answers that
        if where is not None:
            message = f"{where} holds a lone surrogate (U+D800-U+DFFF without its pair), which is not a character"
            await error_response(400, "bad_input", message, field=where)(scope, receive, send)
            return

        async def replay() -> Message:
            return messages.pop(0) if messages else await receive()

        await self.app(scope, replay, send)
