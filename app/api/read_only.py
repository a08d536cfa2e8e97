"""ASGI middleware of a read-only lookout (`lookout replay FILE` serving an archive): every request that
would change something is a 409 that says why; reading works as in any lookout."""

from __future__ import annotations

from starlette.types import ASGIApp, Receive, Scope, Send

from app.api.responses import error_response

READING = frozenset({"GET", "HEAD", "OPTIONS"})


class ReadOnly:
    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http" and scope["method"] not in READING:
            message = ("this lookout serves a replay archive, read-only: it shows what was recorded and changes "
                       "nothing (run `lookout serve` to act)")  # fmt: skip
            await error_response(409, "read_only", message)(scope, receive, send)
            return
        await self.app(scope, receive, send)
