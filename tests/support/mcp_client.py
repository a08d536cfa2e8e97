"""The MCP SDK's own client against lookout: over stdio through the `lookout-mcp` shim, or over Streamable HTTP
at the daemon's `/mcp`; the tool names each toolset lists, and a tool's answer read as the agent reads it."""
from __future__ import annotations

import json
import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import httpx2
from mcp import ClientSession
from mcp.client.stdio import StdioServerParameters, stdio_client
from mcp.client.streamable_http import streamable_http_client
from mcp.types import CallToolResult, Implementation

SHIM = Path(sys.executable).parent / "lookout-mcp"
CLIENT_NAME = "pytest-agent"
"""The name the stdio client gives when it connects."""
HTTP_CLIENT_NAME = "http-agent"
"""The name the HTTP client gives (in its handshake and as `X-Lookout-Agent`)."""
TERMINAL_TOOLS = {"terminal_open", "terminal_list", "terminal_act", "terminal_read", "terminal_close", "hold"}
DEVICE_TOOLS = {
    "device_list", "device_screenshot", "device_ui", "device_find", "device_tap", "device_swipe", "device_type",
    "device_key", "device_script", "device_app", "device_logcat",
}  # fmt: skip
BROWSER_TOOLS = {
    "browser_open", "browser_pages", "browser_snapshot", "browser_action", "browser_script", "browser_screenshot",
    "browser_close",
}  # fmt: skip
CONTEXT_TOOLS = {"context_history", "context_extract", "context_frame"}


@asynccontextmanager
async def shim(**env: str) -> AsyncIterator[ClientSession]:
    """`lookout-mcp` (the installed console script) as a stdio subprocess, with an initialized session."""
    params = StdioServerParameters(command=str(SHIM), env=env)
    info = Implementation(name=CLIENT_NAME, version="1")
    async with stdio_client(params) as (read, write), ClientSession(read, write, client_info=info) as session:
        await session.initialize()
        yield session


@asynccontextmanager
async def over_http(base_url: str, token: str, tools: str | None = None) -> AsyncIterator[ClientSession]:
    """An initialized session with the daemon at `base_url` over Streamable HTTP, with nothing but the URL and
    the token (as `claude mcp add --transport http` configures it); `tools`: the `?tools=` toolsets."""
    headers = {"Authorization": f"Bearer {token}", "X-Lookout-Agent": HTTP_CLIENT_NAME}
    url = f"{base_url}/mcp" + (f"?tools={tools}" if tools else "")
    info = Implementation(name=HTTP_CLIENT_NAME, version="1")
    async with (
        httpx2.AsyncClient(headers=headers, timeout=httpx2.Timeout(60, read=120)) as client,
        streamable_http_client(url, http_client=client) as (read, write),
        ClientSession(read, write, client_info=info) as session,
    ):
        await session.initialize()
        yield session


async def call(session: ClientSession, tool: str, **arguments: Any) -> Any:
    """A tool's answer, parsed; fails the test when the tool reports an error."""
    result = await session.call_tool(tool, arguments)
    assert not result.is_error, f"{tool}: {tool_text(result)}"
    return json.loads(tool_text(result))


def tool_text(result: CallToolResult) -> str:
    """The one text content of a tool's result."""
    assert len(result.content) == 1 and result.content[0].type == "text"
    return result.content[0].text
