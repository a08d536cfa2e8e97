"""`lookout-mcp`: the stdio MCP server with lookout's tools (see lookout.clients.mcp.daemon for its environment)."""

from __future__ import annotations

import inspect
import os
import sys
from collections.abc import Awaitable, Callable, Sequence
from typing import Any

from mcp.server import MCPServer
from mcp.server.mcpserver import Context
from mcp.server.mcpserver.exceptions import ToolError
from mcp.types import CallToolResult, InputRequiredResult, Tool, ToolAnnotations

from lookout import __version__
from lookout.clients.mcp import browser_tools, context_tools, device_tools, lease_tools, terminal_tools
from lookout.clients.mcp.daemon import LINK_ATTRIBUTE, DaemonLink, environment_link
from lookout.clients.mcp.lean_schema import lean_schema
from lookout.clients.mcp.toolsets import NAMES, parse_toolsets

ToolList = Sequence[tuple[Callable[..., Awaitable[Any]], ToolAnnotations | None]]

TOOLSETS: dict[str, ToolList] = {  # in toolsets.NAMES' order
    "terminal": [*terminal_tools.TOOLS, *lease_tools.TOOLS],
    "device": device_tools.TOOLS,
    "page": browser_tools.TOOLS,
    "context": context_tools.TOOLS,
}

GUIDES = {
    "terminal": "lookout runs terminals for you and shows them compactly. Open one with terminal_open, then use "
    "terminal_act for each step: it types, waits on the daemon until the output settles (or a regex, a state, a "
    "command's end), and returns the screen in one call. Read a finished command's whole output with "
    "terminal_read(n=...), not by scrolling. Waits last at most 50 s: on a timeout you get ended=timeout and a "
    "cursor to wait on from with terminal_act(since=cursor).",
    "device": "For Android devices: device_screenshot (with marks=true to number the elements), then device_tap "
    "with the screenshot's pixels or an element index and its obs_id; lookout converts coordinates to the device.",
    "page": "For web pages: browser_open, then browser_snapshot (budgeted text with refs) and browser_action on "
    "its refs; browser_close a page you are done with.",
    "context": "Your own history of all of this, within a token budget: context_history; what it elided: "
    "context_extract.",
}


class LookoutServer(MCPServer):
    """Lists its tools with lean input schemas (see lookout.clients.mcp.lean_schema); calls validate as before, and an
    argument a tool does not take is an error, not silently dropped (an agent that wrote `text=` where the
    tool takes `input=` would otherwise get an answer to a call that typed nothing)."""

    async def list_tools(self) -> list[Tool]:
        return [
            tool.model_copy(update={"input_schema": lean_schema(tool.input_schema)})
            for tool in await super().list_tools()
        ]

    async def call_tool(
        self, name: str, arguments: dict[str, Any], context: Context[Any, Any] | None = None
    ) -> CallToolResult | InputRequiredResult:
        tool = self._tool_manager.get_tool(name)
        if tool is not None:
            takes = tool.parameters.get("properties", {})
            unknown = sorted(set(arguments) - set(takes))
            if unknown:
                raise ToolError(f"{name} takes no {', '.join(unknown)}; it takes {', '.join(takes)}")
        return await super().call_tool(name, arguments, context)


def create_server(link: Callable[[], DaemonLink] = environment_link, toolsets: tuple[str, ...] = NAMES) -> MCPServer:
    """The MCP server with the tools of `toolsets`; each tool's docstring is its description. Its tools reach
    the daemon through `link` (default: the environment's LOOKOUT_URL and token, as the stdio shim does)."""
    instructions = " ".join(GUIDES[name] for name in toolsets)
    server = LookoutServer(name="lookout", version=__version__, instructions=instructions, log_level="WARNING")
    setattr(server, LINK_ATTRIBUTE, link)
    for name in toolsets:
        for tool, hints in TOOLSETS[name]:
            description = inspect.cleandoc(tool.__doc__ or "")
            server.add_tool(tool, description=description, annotations=hints, structured_output=False)
    return server


def main() -> None:
    """Serve over stdin and stdout until the client closes them, with the tools `LOOKOUT_MCP_TOOLS` names."""
    try:
        toolsets = parse_toolsets(os.environ.get("LOOKOUT_MCP_TOOLS"))
    except ValueError as exc:
        sys.exit(f"lookout-mcp: LOOKOUT_MCP_TOOLS: {exc}")
    create_server(toolsets=toolsets).run()
