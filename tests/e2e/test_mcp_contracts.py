"""Every device, page and context MCP tool's input schema, as the real MCP client lists it from `lookout-mcp`,
held against the OpenAPI schema of the route it calls on a daemon subprocess (see tests/support/mcp_contracts).
Both the listed (lean) schemas and the full ones the calls are validated with (upper bounds included) are held.
A tool and its route that drift apart (a tighter bound, a missing choice, another default) fail here."""
from __future__ import annotations

from typing import Any

import httpx
import pytest
from mcp.server import MCPServer

from lookout.clients.mcp.server import create_server
from tests.conftest import Daemon
from tests.support.mcp_client import BROWSER_TOOLS, CONTEXT_TOOLS, DEVICE_TOOLS, shim
from tests.support.mcp_contracts import assert_tool_matches_route

DEVICE = "/v1/devices/{serial}"
PAGE = "/v1/pages/{page_id}"
ROUTES: dict[str, list[tuple[str, str, dict[str, Any]]]] = {
    "device_list": [("GET", "/v1/devices", {})],
    # the tool reads the UI by default: one observation to see a screen and act on it
    "device_screenshot": [("POST", f"{DEVICE}/screenshot", {"own_defaults": ["ui"]})],
    "device_ui": [("GET", f"{DEVICE}/ui", {})],
    "device_find": [("POST", f"{DEVICE}/find", {})],
    "device_tap": [("POST", f"{DEVICE}/tap", {})],
    "device_swipe": [("POST", f"{DEVICE}/swipe", {})],
    "device_type": [("POST", f"{DEVICE}/type", {})],
    "device_key": [("POST", f"{DEVICE}/key", {})],
    "device_app": [("POST", f"{DEVICE}/app", {})],
    "device_logcat": [("GET", f"{DEVICE}/logcat", {})],
    "device_script": [("POST", f"{DEVICE}/script", {})],
    "browser_open": [("POST", "/v1/pages", {"renames": {"width": "viewport.width", "height": "viewport.height"}})],
    "browser_pages": [("GET", "/v1/pages", {})],
    "browser_close": [("DELETE", PAGE, {})],
    "browser_snapshot": [
        ("POST", f"{PAGE}/snapshot", {"skip": ["find"]}),
        ("POST", f"{PAGE}/find", {"only": ["page_id", "find"], "renames": {"find": "text"}}),
    ],
    # `snapshot` is a flag the tool turns into the route's snapshot object
    "browser_action": [("POST", f"{PAGE}/action", {"skip": ["snapshot"], "renames": {"wait_text": "wait.text"}})],
    # a script's closing snapshot is smaller than a snapshot asked for on its own
    "browser_script": [("POST", f"{PAGE}/script", {"renames": {"max_tokens": "snapshot.max_tokens"},
                                                   "own_defaults": ["max_tokens"]})],
    "browser_screenshot": [("POST", f"{PAGE}/screenshot", {})],
    # `everyone` leaves out the route's `agent` (the tool sends the caller's name otherwise)
    "context_history": [("GET", "/v1/timeline/context", {"skip": ["everyone"]})],
    "context_extract": [
        ("GET", "/v1/timeline/extract", {"skip": ["everyone"], "renames": {"from_frame": "from", "to_frame": "to"}})
    ],
    "context_frame": [("GET", "/v1/timeline/frames/{seq}", {})],
}


def test_every_tool_is_held_against_its_route() -> None:
    assert set(ROUTES) == DEVICE_TOOLS | BROWSER_TOOLS | CONTEXT_TOOLS


@pytest.fixture(scope="module")
def schemas(tmp_path_factory: pytest.TempPathFactory) -> tuple[dict[str, Any], dict[str, Any]]:
    """(the tools' input schemas by name, the daemon's OpenAPI schema)."""
    import asyncio

    daemon = Daemon(tmp_path_factory.mktemp("contracts") / "data").start()
    try:
        openapi = httpx.get(f"{daemon.url}/openapi.json", headers={"Authorization": f"Bearer {daemon.token}"},
                            timeout=30).json()  # fmt: skip

        async def listed() -> dict[str, Any]:
            async with shim(LOOKOUT_URL=daemon.url, LOOKOUT_TOKEN=daemon.token) as session:
                return {tool.name: tool.input_schema for tool in (await session.list_tools()).tools}

        return asyncio.run(listed()), openapi
    finally:
        daemon.stop()


@pytest.fixture(scope="module")
def full_schemas() -> dict[str, Any]:
    """The tools' full input schemas (as their calls are validated, upper bounds included), by name: the listed
    ones drop upper bounds, so a bound that drifted from the route's would pass unseen there."""
    import asyncio

    listed = asyncio.run(MCPServer.list_tools(create_server(toolsets=("device", "page", "context"))))
    return {tool.name: tool.input_schema for tool in listed}


@pytest.mark.parametrize("tool", sorted(ROUTES))
def test_tool_schema_matches_its_route(
    tool: str, schemas: tuple[dict[str, Any], dict[str, Any]], full_schemas: dict[str, Any]
) -> None:
    tools, openapi = schemas
    for method, path, options in ROUTES[tool]:
        assert_tool_matches_route(tools[tool], openapi, method, path, **options)
        assert_tool_matches_route(full_schemas[tool], openapi, method, path, **options)


def test_a_drifted_tool_is_caught(schemas: tuple[dict[str, Any], dict[str, Any]]) -> None:
    tools, openapi = schemas
    drifted = {**tools["device_logcat"], "properties": {**tools["device_logcat"]["properties"]}}
    drifted["properties"]["lines"] = {**drifted["properties"]["lines"], "maximum": 1000}
    with pytest.raises(AssertionError, match=r"lines.maximum: the tool says 1000, the route 5000"):
        assert_tool_matches_route(drifted, openapi, "GET", f"{DEVICE}/logcat")
    fewer = {**tools["browser_action"], "properties": {**tools["browser_action"]["properties"]}}
    fewer["properties"]["action"] = {"type": "string", "enum": ["click", "fill"]}
    with pytest.raises(AssertionError, match=r"action.enum"):
        assert_tool_matches_route(fewer, openapi, "POST", f"{PAGE}/action", skip=["snapshot", "wait_text"])
