"""`/mcp`: the MCP shim's tools over Streamable HTTP, served by the daemon itself.

An agent then needs nothing installed beside it: `claude mcp add --transport http lookout
http://127.0.0.1:8765/mcp --header "Authorization: Bearer $TOKEN"`. The endpoint sits behind the same guard
as every route (token, Host, Origin, body size); its tools call the REST API in process, through the app's
own middleware, so they answer exactly as the stdio shim's do.
"""
from __future__ import annotations

from contextlib import AbstractAsyncContextManager

import httpx
from fastapi import FastAPI
from mcp.server.transport_security import TransportSecuritySettings
from starlette.routing import Route

from clients.mcp.daemon import DaemonLink
from clients.mcp.server import create_server

PATH = "/mcp"
IN_PROCESS_URL = "http://127.0.0.1"
"""The tools' requests never leave the process; a loopback base URL keeps the Host check satisfied."""


def mount(app: FastAPI, token: str) -> AbstractAsyncContextManager[None]:
    """Add the `/mcp` route to `app`; returns what the app's lifespan must run while it serves."""
    link = DaemonLink(IN_PROCESS_URL, token, httpx.ASGITransport(app=app))
    server = create_server(lambda: link)
    # The guard in front of the app already checks Host and Origin (with LOOKOUT_ALLOWED_HOSTS); the SDK's own
    # check knows only loopback names and would refuse a daemon published under another name.
    security = TransportSecuritySettings(enable_dns_rebinding_protection=False)
    handler = server.streamable_http_app(streamable_http_path=PATH, transport_security=security)
    endpoint = next(r for r in handler.routes if isinstance(r, Route) and r.path == PATH)
    app.router.routes.append(Route(PATH, endpoint.endpoint, methods=["GET", "POST", "DELETE"], include_in_schema=False))
    return server.session_manager.run()
