"""Every terminal MCP tool's input schema agrees with the OpenAPI schema of each route it calls (the rule of
tests/support/mcp_contracts: the same fields with the same types and choices, no other bound or default).
A tool that calls several routes is held against each, for the arguments that route takes; every argument
but a tool's own choice of route is held against at least one. Both sides come from app.schemas.terminal,
so this holds as long as nobody copies a field again."""
from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest

from app.config import Settings
from app.server import create_app
from clients.mcp.server import create_server
from tests.support.mcp_contracts import assert_tool_matches_route

TERMINAL = "/v1/terminals/{terminal_id}"
ROUTES: dict[str, list[tuple[str, str, dict[str, Any]]]] = {
    # tool: [(method, path, keyword arguments of assert_tool_matches_route)]
    "terminal_open": [("POST", "/v1/terminals", {})],
    "terminal_list": [("GET", "/v1/terminals", {})],
    # without input, until or since the tool reads the screen: `screen`'s fields are GET /screen's query
    "terminal_act": [("POST", f"{TERMINAL}/act", {})],
    "terminal_read": [
        ("GET", f"{TERMINAL}/blocks", {"only": ["terminal_id", "since", "limit"], "renames": {"limit": "last"}}),
        ("GET", f"{TERMINAL}/blocks/{{n}}", {"only": ["terminal_id", "n", "max_tokens"]}),
        ("GET", f"{TERMINAL}/raw", {"only": ["terminal_id", "since", "limit"], "renames": {"since": "offset"}}),
        ("GET", f"{TERMINAL}/deltas", {"only": ["terminal_id", "since", "limit"], "renames": {"since": "cursor"}}),
    ],
    "terminal_close": [("DELETE", TERMINAL, {})],
}
OWN = {("terminal_read", "what")}
"""Arguments no route takes: they choose the route."""


@pytest.fixture(scope="module")
def openapi(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    data = Path(tmp_path_factory.mktemp("data"))
    return create_app(Settings(data_dir=data, token="x" * 16)).openapi()


@pytest.fixture(scope="module")
def tools() -> dict[str, dict[str, Any]]:
    """The terminal tools' input schemas as the server lists them, by name."""
    listed = asyncio.run(create_server(toolsets=("terminal",)).list_tools())
    return {tool.name: tool.input_schema for tool in listed}


def test_every_terminal_tool_is_held_against_its_routes(tools: dict[str, dict[str, Any]]) -> None:
    assert set(tools) == set(ROUTES)
    for name, routes in ROUTES.items():
        held = {arg for _, _, how in routes for arg in how.get("only", tools[name].get("properties", {}))}
        assert held | {arg for tool, arg in OWN if tool == name} == set(tools[name].get("properties", {})), name


@pytest.mark.parametrize("name", sorted(ROUTES))
def test_terminal_tool_takes_what_its_routes_take(
    name: str, tools: dict[str, dict[str, Any]], openapi: dict[str, Any]
) -> None:
    for method, path, how in ROUTES[name]:
        assert_tool_matches_route(tools[name], openapi, method, path, **how)


def test_terminal_act_screen_options_are_the_screen_routes_query(
    tools: dict[str, dict[str, Any]], openapi: dict[str, Any]
) -> None:
    act = tools["terminal_act"]
    screen = act["$defs"][act["properties"]["screen"]["$ref"].rsplit("/", 1)[-1]]
    assert_tool_matches_route({"properties": screen["properties"]}, openapi, "GET", f"{TERMINAL}/screen")
