"""`/mcp`: the MCP shim's tools over Streamable HTTP, served by the daemon itself.

An agent then needs nothing installed beside it: `claude mcp add --transport http lookout
http://127.0.0.1:8765/mcp --header "Authorization: Bearer $TOKEN"`; `/mcp?tools=terminal,page` offers only
those toolsets (as `LOOKOUT_MCP_TOOLS` does for the stdio shim). The endpoint sits behind the same guard as
every route (token, Host, Origin, body size); its tools call the REST API in process, through the app's own
middleware, so they answer exactly as the stdio shim's do.

The endpoint is stateless (the SDK's stateless mode: every request is served by a fresh transport and no
session id is issued), so a restart of the daemon breaks no client: one connected before it goes on calling
tools after it with no action of its own. Nothing a tool needs lives in an MCP session (a wait resumes from
the cursor it is given; observations are stored by id), and accepting old session ids would need them kept
or derived, which the SDK does not support. The one thing a session carried, the client's name, is given
per request instead: the `X-Lookout-Agent` header (or `?agent=`) names the agent in the timeline.

The MCP SDK takes seconds to import, so a server is built on the first request that needs it (imported in a
thread) rather than at start: a daemon nobody reaches over MCP never pays for it.
"""

from __future__ import annotations

import asyncio
from typing import Any
from urllib.parse import parse_qs

from fastapi import FastAPI
from starlette.routing import Route
from starlette.types import ASGIApp, Receive, Scope, Send

from lookout.api.responses import error_response
from lookout.clients.mcp.toolsets import parse_toolsets

PATH = "/mcp"
IN_PROCESS_URL = "http://127.0.0.1"
"""The tools' requests never leave the process; a loopback base URL keeps the Host check satisfied."""


class McpEndpoint:
    """The ASGI app behind `/mcp`: one MCP server per toolset choice, built and run on first use."""

    def __init__(self, app: FastAPI, token: str) -> None:
        self._app = app
        self._token = token
        self._handlers: dict[tuple[str, ...], ASGIApp] = {}
        self._lock = asyncio.Lock()
        self._stop = asyncio.Event()
        self._runners: list[asyncio.Task[None]] = []

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        requested = parse_qs(scope.get("query_string", b"").decode("latin-1")).get("tools", [None])[-1]
        try:
            toolsets = parse_toolsets(requested)
        except ValueError as exc:
            await error_response(400, "bad_input", f"tools: {exc}")(scope, receive, send)
            return
        handler = self._handlers.get(toolsets) or await self._start(toolsets)
        await handler(scope, receive, send)

    @property
    def toolsets(self) -> list[str]:
        """The toolset choices served so far (each a comma-separated list), for `warm`."""
        return [",".join(toolsets) for toolsets in self._handlers]

    async def warm(self, choices: list[str]) -> None:
        """Build the servers of these toolset choices now (a daemon that replaces one that served them: its
        first calls then find them ready, instead of waiting seconds for the MCP SDK's import)."""
        for choice in choices:
            try:
                await self._start(parse_toolsets(choice))
            except ValueError:
                continue

    async def _start(self, toolsets: tuple[str, ...]) -> ASGIApp:
        async with self._lock:
            if toolsets in self._handlers:
                return self._handlers[toolsets]
            server, handler = await asyncio.to_thread(self._build, toolsets)
            started = asyncio.Event()

            async def run() -> None:
                async with server.session_manager.run():
                    started.set()
                    await self._stop.wait()

            self._runners.append(asyncio.create_task(run(), name=f"mcp-sessions-{'-'.join(toolsets)}"))
            await started.wait()
            self._handlers[toolsets] = handler
            return handler

    def _build(self, toolsets: tuple[str, ...]) -> tuple[Any, ASGIApp]:
        """The MCP server whose tools reach this app in process, and its Streamable HTTP handler (runs in a
        thread: the imports are slow)."""
        import httpx
        from mcp.server.transport_security import TransportSecuritySettings

        from lookout.clients.mcp.daemon import DaemonLink
        from lookout.clients.mcp.server import create_server

        link = DaemonLink(IN_PROCESS_URL, self._token, httpx.ASGITransport(app=self._app))
        server = create_server(lambda: link, toolsets)
        # The guard in front of the app already checks Host and Origin (with LOOKOUT_ALLOWED_HOSTS); the SDK's
        # own check knows only loopback names and would refuse a daemon published under another name.
        security = TransportSecuritySettings(enable_dns_rebinding_protection=False)
        starlette_app = server.streamable_http_app(
            streamable_http_path=PATH, transport_security=security, stateless_http=True
        )
        handler = next(r.endpoint for r in starlette_app.routes if isinstance(r, Route) and r.path == PATH)
        return server, handler

    async def close(self) -> None:
        """End every MCP session (at the daemon's shutdown)."""
        self._stop.set()
        await asyncio.gather(*self._runners)


def mount(app: FastAPI, token: str) -> McpEndpoint:
    """Add the `/mcp` route to `app`; the returned endpoint must be closed when the app stops."""
    endpoint = McpEndpoint(app, token)
    app.router.routes.append(Route(PATH, endpoint, methods=["GET", "POST", "DELETE"], include_in_schema=False))
    return endpoint
