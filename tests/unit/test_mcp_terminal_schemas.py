"""Every terminal MCP tool's input schema agrees with the OpenAPI schema of each route it calls (the rule of
tests/support/mcp_contracts: the same fields with the same types and choices, no other bound or default).
A tool that calls several routes is held against each, for the arguments that route takes; every argument
but a tool's own choice of route is held against at least one. Both sides come from lookout.schemas.terminal,
so this holds as long as nobody copies a field again."""
from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest
from mcp.server import MCPServer

from lookout.clients.mcp.server import create_server
from lookout.clients.mcp.terminal_tools import MAX_WAIT_MS
from lookout.config import Settings
from lookout.server import create_app
from tests.support.mcp_contracts import assert_tool_matches_route, route_arguments

TERMINAL = "/v1/terminals/{terminal_id}"
ROUTES: dict[str, list[tuple[str, str, dict[str, Any]]]] = {
    # tool: [(method, path, keyword arguments of assert_tool_matches_route)]
    "terminal_open": [("POST", "/v1/terminals", {})],
    "terminal_list": [("GET", "/v1/terminals", {"own_defaults": ["max_tokens"]})],
    # without input, until or since the tool reads the screen: `screen`'s fields are GET /screen's query
    "terminal_act": [("POST", f"{TERMINAL}/act", {"skip": ["timeout_ms"]})],
    "terminal_read": [
        ("GET", f"{TERMINAL}/blocks", {"only": ["terminal_id", "since", "limit"], "renames": {"limit": "last"}}),
        ("GET", f"{TERMINAL}/blocks/{{n}}", {"only": ["terminal_id", "n", "max_tokens"]}),
        ("GET", f"{TERMINAL}/raw", {"only": ["terminal_id", "since", "limit"], "renames": {"since": "offset"}}),
        ("GET", f"{TERMINAL}/deltas", {"only": ["terminal_id", "since", "limit"], "renames": {"since": "cursor"}}),
    ],
    "terminal_close": [("DELETE", TERMINAL, {})],
    # a page's id goes to /v1/pages/{id}/lease, the same route; seconds=0 lets go (DELETE), else it is duration_s
    "hold": [("POST", "/v1/terminals/{resource_id}/lease", {"renames": {"id": "resource_id"}, "skip": ["seconds"]})],
}
OWN = {("terminal_read", "what"), ("terminal_act", "timeout_ms"), ("hold", "seconds")}
"""Arguments no route takes (they choose the route) or held on their own below."""


@pytest.fixture(scope="module")
def openapi(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    data = Path(tmp_path_factory.mktemp("data"))
    return create_app(Settings(data_dir=data, token="x" * 16)).openapi()


@pytest.fixture(scope="module")
def tools() -> dict[str, dict[str, Any]]:
    """The terminal tools' full input schemas (as their calls are validated, bounds included), by name."""
    listed = asyncio.run(MCPServer.list_tools(create_server(toolsets=("terminal",))))
    return {tool.name: tool.input_schema for tool in listed}


def test_every_terminal_tool_is_held_against_its_routes(tools: dict[str, dict[str, Any]]) -> None:
    assert set(tools) == set(ROUTES)
    for name, routes in ROUTES.items():
        arguments = set(tools[name].get("properties", {}))
        held = {arg for _, _, how in routes for arg in how.get("only", arguments - set(how.get("skip", ())))}
        assert held | {arg for tool, arg in OWN if tool == name} == arguments, name


@pytest.mark.parametrize("name", sorted(ROUTES))
def test_terminal_tool_takes_what_its_routes_take(
    name: str, tools: dict[str, dict[str, Any]], openapi: dict[str, Any]
) -> None:
    for method, path, how in ROUTES[name]:
        assert_tool_matches_route(tools[name], openapi, method, path, **how)


def test_terminal_act_screen_options_are_the_screen_routes_query(
    tools: dict[str, dict[str, Any]], openapi: dict[str, Any]
) -> None:
    screen = tools["terminal_act"]["$defs"]["ScreenOptions"]
    assert_tool_matches_route({"properties": screen["properties"]}, openapi, "GET", f"{TERMINAL}/screen")


def test_terminal_act_waits_at_most_what_the_route_allows(tools: dict[str, dict[str, Any]], openapi: dict[str, Any]) -> None:
    """Only the tool's timeout is stricter: a tool call must end before MCP clients give up (50 s)."""
    mine = tools["terminal_act"]["properties"]["timeout_ms"]
    theirs = route_arguments(openapi, "POST", f"{TERMINAL}/act")["timeout_ms"]
    assert mine["maximum"] == MAX_WAIT_MS < theirs["maximum"]
    assert_tool_matches_route(
        {"properties": {"timeout_ms": {k: v for k, v in mine.items() if k != "maximum"}}}, openapi, "POST", f"{TERMINAL}/act"
    )
