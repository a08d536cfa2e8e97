"""Routes included on first use. The API of devices and of pages (a third of the daemon's routes, with their
schemas) is not what an ordinary request needs, and FastAPI builds a route when it is declared, so the daemon
starts without them: the first request under one's prefix imports its module (in a thread) and includes its
router before it is routed; the OpenAPI document and a hot restart's warm-up include them all first. A request
never meets a missing route: it is routed only once the routes of its prefix are in."""

from __future__ import annotations

import asyncio
import importlib
from collections.abc import Mapping
from typing import Any

from fastapi import FastAPI
from starlette.types import ASGIApp, Receive, Scope, Send


class LaterRoutes:
    """The routers of `modules` (prefix: the module whose `router` serves under it), each included into `app`
    with that prefix and `include` (FastAPI's include_router options) when first needed."""

    def __init__(self, app: FastAPI, modules: Mapping[str, str], **include: Any) -> None:
        self._app, self._pending, self._options = app, dict(modules), include
        build = app.openapi

        def openapi() -> dict[str, Any]:
            self.include_all()
            return build()

        app.openapi = openapi  # type: ignore[method-assign]  # FastAPI's documented way to change the document

    def _include_now(self, prefix: str) -> None:
        module = self._pending.pop(prefix, None)
        if module is not None:  # not yet included (two first requests may race here)
            self._app.include_router(importlib.import_module(module).router, prefix=prefix, **self._options)

    def include_all(self) -> None:
        for prefix in list(self._pending):
            self._include_now(prefix)

    async def ready(self, path: str | None = None) -> None:
        """The routes that `path` may need (every route when None) are in; their modules imported off the loop."""
        for prefix, module in list(self._pending.items()):
            if path is None or path == prefix or path.startswith(prefix + "/"):
                await asyncio.to_thread(importlib.import_module, module)
                self._include_now(prefix)

    @property
    def pending(self) -> bool:
        return bool(self._pending)


class IncludeOnFirstUse:
    """ASGI middleware: before a request is routed, the routes its path may need are in (LaterRoutes)."""

    def __init__(self, app: ASGIApp, routes: LaterRoutes) -> None:
        self.app, self.routes = app, routes

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if self.routes.pending and scope["type"] in ("http", "websocket"):
            await self.routes.ready(scope["path"].removeprefix(scope.get("root_path", "")))
        await self.app(scope, receive, send)
