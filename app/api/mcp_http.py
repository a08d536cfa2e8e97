"""`/mcp`: the MCP shim's tools over Streamable HTTP, served by the daemon itself.

An agent then needs nothing installed beside it: `claude mcp add --transport http lookout
http://127.0.0.1:8765/mcp --header "Authorization: Bearer $TOKEN"`. The endpoint sits behind the same guard
as every route (token, Host, Origin, body size); its tools call the REST API in process, through the app's
own middleware, so they answer exactly as the stdio shim's do.

The MCP SDK takes seconds to import, so the server is built on the first request to `/mcp` (imported in a
thread) rather than at start: a daemon nobody reaches over MCP never pays for it.
"""
from __future__ import annotations

import asyncio
import importlib
from typing import Any

from fastapi import FastAPI
from starlette.routing import Route
from starlette.types import ASGIApp, Receive, Scope, Send

PATH = "/mcp"
IN_PROCESS_URL = "http://127.0.0.1"
"""The tools' requests never leave the process; a loopback base URL keeps the Host check satisfied."""


class McpEndpoint:
    """The ASGI app behind `/mcp`: builds the MCP server and runs its session manager on first use."""

    def __init__(self, app: FastAPI, token: str) -> None:
        self._app = app
        self._token = token
        self._handler: ASGIApp | None = None
        self._lock = asyncio.Lock()
        self._stop = asyncio.Event()
        self._runner: asyncio.Task[None] | None = None

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        handler = self._handler or await self._start()
        await handler(scope, receive, send)

    async def _start(self) -> ASGIApp:
        async with self._lock:
            if self._handler is not None:
                return self._handler
            server, handler = await asyncio.to_thread(self._build)
            started = asyncio.Event()

            async def run() -> None:
                async with server.session_manager.run():
                    started.set()
                    await self._stop.wait()

            self._runner = asyncio.create_task(run(), name="mcp-sessions")
            await started.wait()
            self._handler = handler
            return handler

    def _build(self) -> tuple[Any, ASGIApp]:
        """The MCP server whose tools reach this app in process, and its Streamable HTTP handler (runs in a
        thread: the imports are slow)."""
        import httpx
        from mcp.server.transport_security import TransportSecuritySettings

        from clients.mcp.daemon import DaemonLink

        create_server = importlib.import_module("clients.mcp.server").create_server
        link = DaemonLink(IN_PROCESS_URL, self._token, httpx.ASGITransport(app=self._app))
        server = create_server(lambda: link)
        # The guard in front of the app already checks Host and Origin (with LOOKOUT_ALLOWED_HOSTS); the SDK's
        # own check knows only loopback names and would refuse a daemon published under another name.
        security = TransportSecuritySettings(enable_dns_rebinding_protection=False)
        starlette_app = server.streamable_http_app(streamable_http_path=PATH, transport_security=security)
        handler = next(r.endpoint for r in starlette_app.routes if isinstance(r, Route) and r.path == PATH)
        return server, handler

    async def close(self) -> None:
        """End every MCP session (at the daemon's shutdown)."""
        self._stop.set()
        if self._runner is not None:
            await self._runner


def mount(app: FastAPI, token: str) -> McpEndpoint:
    """Add the `/mcp` route to `app`; the returned endpoint must be closed when the app stops."""
    endpoint = McpEndpoint(app, token)
    app.router.routes.append(Route(PATH, endpoint, methods=["GET", "POST", "DELETE"], include_in_schema=False))
    return endpoint
