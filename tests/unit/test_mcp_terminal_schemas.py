"""Every terminal MCP tool's input schema agrees with the OpenAPI schema of the route it calls: the same
fields with the same types, enums and limits (the shim may only be stricter, where MCP clients give up
sooner). Both come from app.schemas.terminal, so this holds as long as nobody copies a field again."""
from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from app.config import Settings
from app.server import create_app
from clients.mcp.server import create_server

ROUTES: dict[str, tuple[str, str, dict[str, str]]] = {
    # tool: (method, path, {tool argument: where the route takes it: "body", "body:<field>", "query", "path"})
    "terminal_open": ("post", "/v1/terminals", {"*": "body:*"}),
    "terminal_list": ("get", "/v1/terminals", {}),
    "terminal_act": ("post", "/v1/terminals/{terminal_id}/act", {"terminal_id": "path", "*": "body:*"}),
    "terminal_send": ("post", "/v1/terminals/{terminal_id}/input", {"terminal_id": "path", "input": "body"}),
    "terminal_wait": ("post", "/v1/terminals/{terminal_id}/wait", {"terminal_id": "path", "*": "body:*"}),
    "terminal_screen": ("get", "/v1/terminals/{terminal_id}/screen", {"terminal_id": "path", "screen": "query"}),
    "terminal_raw": ("get", "/v1/terminals/{terminal_id}/raw", {"terminal_id": "path", "*": "query:*"}),
    "terminal_deltas": ("get", "/v1/terminals/{terminal_id}/deltas", {"terminal_id": "path", "*": "query:*"}),
    "terminal_blocks": ("get", "/v1/terminals/{terminal_id}/blocks", {"terminal_id": "path", "n": "skip",
                                                                       "max_tokens": "skip", "*": "query:*"}),
    "terminal_close": ("delete", "/v1/terminals/{terminal_id}", {"terminal_id": "path", "*": "query:*"}),
}
STRICTER = {("terminal_act", "timeout_ms"), ("terminal_wait", "timeout_ms"), ("terminal_raw", "limit")}
"""Arguments whose maximum the shim lowers (a tool call must end before the client's own timeout)."""
_NOISE = {"title", "description", "default", "additionalProperties"}


def _shape(node: Any, defs: dict[str, Any]) -> Any:
    """`node` with references resolved and without what only explains (titles, descriptions, defaults) or
    says "may be null" (an argument left out is the same)."""
    if isinstance(node, list):
        return [_shape(item, defs) for item in node]
    if not isinstance(node, dict):
        return node
    if "$ref" in node:
        return _shape(defs[node["$ref"].rsplit("/", 1)[-1]], defs)
    out = {key: _shape(value, defs) for key, value in node.items() if key not in _NOISE}
    if "anyOf" in out:
        variants = [v for v in out["anyOf"] if v != {"type": "null"}]
        if len(variants) == 1:
            del out["anyOf"]
            out.update(variants[0])
        else:
            out["anyOf"] = variants
    return out


@pytest.fixture(scope="module")
def openapi(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    data = Path(tmp_path_factory.mktemp("data"))
    return create_app(Settings(data_dir=data, token="x" * 16)).openapi()


async def test_each_terminal_tool_takes_what_its_route_takes(openapi: dict[str, Any]) -> None:
    components = openapi["components"]["schemas"]
    tools = {tool.name: tool for tool in await create_server(toolsets=("terminal",)).list_tools()}
    assert set(tools) == set(ROUTES)
    for name, (method, path, where) in ROUTES.items():
        operation = openapi["paths"][path][method]
        schema = tools[name].input_schema
        defs = schema.get("$defs", {})
        body = operation.get("requestBody", {}).get("content", {}).get("application/json", {}).get("schema")
        body = _shape(body, components) if body else {}
        query = {p["name"]: _shape(p["schema"], components) for p in operation.get("parameters", ())
                 if p["in"] == "query"}  # fmt: skip
        for argument, argument_schema in schema["properties"].items():
            place = where.get(argument, where.get("*", "missing"))
            if place in ("path", "skip"):
                continue
            mine = _shape(argument_schema, defs)
            if place == "body":
                theirs = body
            elif place == "body:*":
                theirs = body["properties"].get(argument)
            elif place == "query":
                assert set(mine["properties"]) == set(query), name
                theirs = {**mine, "properties": query}
                mine = {**mine, "properties": {k: _shape(v, defs) for k, v in mine["properties"].items()}}
            elif place == "query:*":
                theirs = query.get(argument)
            else:
                raise AssertionError(f"{name}.{argument}: which part of {method.upper()} {path} takes it?")
            assert theirs is not None, f"{name}.{argument} is not taken by {method.upper()} {path}"
            if (name, argument) in STRICTER:
                assert mine.pop("maximum") <= theirs.pop("maximum"), (name, argument)
            assert mine == theirs, (name, argument, mine, theirs)
