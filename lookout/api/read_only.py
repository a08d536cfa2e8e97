"""ASGI middleware of a read-only lookout (`lookout replay FILE` serving an archive): every request that
would change something is a 409 that says why; reading works as in any lookout and stores nothing (the
domains record no frames: see lookout.server). A device's UI read is refused too: it may dump the live device's
UI and store it with an observation."""

from __future__ import annotations

import re

from starlette.types import ASGIApp, Receive, Scope, Send

from lookout.api.responses import error_response

READING = frozenset({"GET", "HEAD", "OPTIONS"})
OBSERVING = re.compile(r"/v1/devices/[^/]+/ui/?")
"""Reads that observe a live backend and store what they saw."""


class ReadOnly:
    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http" and (scope["method"] not in READING or OBSERVING.fullmatch(scope["path"])):
            message = ("this lookout serves a replay archive, read-only: it shows what was recorded and changes "
                       "nothing (a device's elements as recorded are in GET /v1/timeline/frames/{seq}; run "
                       "`lookout serve` to act)")  # fmt: skip
            await error_response(409, "read_only", message)(scope, receive, send)
            return
        await self.app(scope, receive, send)
