"""Hold an MCP tool's input schema against the OpenAPI schema of the route the tool calls.

The rule: every argument of the tool is an argument of the route (a path or query parameter, or a body
field, under the same name unless renamed); its type and choices (`type`, `anyOf`, `enum`, `items`) are the
route's; every constraint or default it states is the route's too, at every depth. A tool may leave a
constraint out (the lean schemas a client lists drop upper bounds: the daemon still enforces them), but
never states a different one, so a tool cannot be stricter or looser than the daemon, or offer other
choices. Both sides are compared lean but with their bounds, `$ref`s resolved and "or null" removed; give
a tool's full schema (as its model validates) to hold its bounds too.
"""
from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from lookout.clients.mcp.lean_schema import lean_schema

SHAPE = ("type", "anyOf", "enum", "items", "const")
"""What a tool's argument must state exactly as the route does, when the route states it."""
IGNORED = ("description", "examples")


def route_arguments(openapi: Mapping[str, Any], method: str, path: str) -> dict[str, dict[str, Any]]:
    """Every argument of a route by name: its path and query parameters and its JSON body's fields (with
    `$ref`s resolved), each as a lean JSON Schema. A body field's sub-fields are named `field.sub`."""
    operation = openapi["paths"][path][method.lower()]
    out: dict[str, dict[str, Any]] = {}
    for parameter in operation.get("parameters", ()):
        out[parameter["name"]] = _resolved(openapi, parameter["schema"])
    body = operation.get("requestBody", {}).get("content", {}).get("application/json")
    if body is not None:
        _fields(openapi, _resolved(openapi, body["schema"]), "", out)
    return out


def assert_tool_matches_route(
    tool_schema: Mapping[str, Any],
    openapi: Mapping[str, Any],
    method: str,
    path: str,
    *,
    renames: Mapping[str, str] | None = None,
    only: Iterable[str] | None = None,
    skip: Iterable[str] = (),
    own_defaults: Iterable[str] = (),
) -> None:
    """Assert the rule above for the tool's arguments (`only` those, or all but `skip`). `renames` maps a
    tool argument to the route's name for it (`wait_text` -> `wait.text`); `own_defaults` names arguments
    whose default is deliberately the tool's own (the tool sends it)."""
    route = route_arguments(openapi, method, path)
    renames = renames or {}
    names = list(only) if only is not None else [n for n in tool_schema.get("properties", {}) if n not in set(skip)]
    problems: list[str] = []
    for name in names:
        tool_arg = _resolved(tool_schema, tool_schema["properties"][name])
        target = renames.get(name, name)
        if target not in route:
            problems.append(f"{name}: {method} {path} has no argument {target!r} (it has {', '.join(sorted(route))})")
            continue
        problems += _differences(name, tool_arg, route[target], allow_own_default=name in set(own_defaults))
    assert not problems, f"{method} {path}:\n" + "\n".join(problems)


def _differences(name: str, tool: Mapping[str, Any], route: Mapping[str, Any], *, allow_own_default: bool) -> list[str]:
    out = []
    for key in SHAPE:
        if key in route and key not in ("items", "anyOf") and tool.get(key) != route[key]:
            out.append(f"{name}.{key}: the tool says {tool.get(key)!r}, the route {route[key]!r}")
    if "items" in route or "items" in tool:
        out += _differences(f"{name}[]", tool.get("items", {}), route.get("items", {}), allow_own_default=False)
    if "anyOf" in route or "anyOf" in tool:
        mine, theirs = tool.get("anyOf", []), route.get("anyOf", [])
        if len(mine) != len(theirs):
            out.append(f"{name}.anyOf: the tool says {mine!r}, the route {theirs!r}")
        for n, (a, b) in enumerate(zip(mine, theirs, strict=False)):
            out += _differences(f"{name}|{n}", a, b, allow_own_default=False)
    for field, sub in tool.get("properties", {}).items():
        if field not in route.get("properties", {}):
            out.append(f"{name}.{field}: the route has no such field")
        else:
            out += _differences(f"{name}.{field}", sub, route["properties"][field], allow_own_default=False)
    for key, value in tool.items():
        if key in IGNORED or key in SHAPE or key == "properties" or (key == "default" and allow_own_default):
            continue
        if route.get(key, ...) != value:
            out.append(f"{name}.{key}: the tool says {value!r}, the route {route.get(key, 'nothing')!r}")
    return out


def _fields(openapi: Mapping[str, Any], schema: Mapping[str, Any], prefix: str, out: dict[str, dict[str, Any]]) -> None:
    for field, sub in schema.get("properties", {}).items():
        resolved = _resolved(openapi, sub)
        out[prefix + field] = resolved
        if "properties" in resolved:
            _fields(openapi, resolved, f"{prefix}{field}.", out)


def _resolved(root: Mapping[str, Any], schema: Mapping[str, Any]) -> dict[str, Any]:
    """`schema` lean, "X or null" as X, and every `$ref` in it replaced by what it names (the referring
    schema's own keys, such as a description or a default, kept beside it), at every depth."""
    lean = lean_schema(dict(schema), keep_bounds=True)
    variants = lean.get("anyOf")
    if isinstance(variants, list) and {"type": "null"} in variants:  # "or null": may be left out
        rest = [v for v in variants if v != {"type": "null"}]
        lean = {k: v for k, v in lean.items() if k != "anyOf" and not (k == "default" and v is None)}
        lean = {**lean, **rest[0]} if len(rest) == 1 else {**lean, "anyOf": rest}
    if "$ref" in lean:
        target: Any = root
        for part in lean.pop("$ref").removeprefix("#/").split("/"):
            target = target[part]
        lean = {**_resolved(root, target), **lean}
    if "anyOf" in lean:
        lean["anyOf"] = [_resolved(root, variant) for variant in lean["anyOf"]]
    if "items" in lean:
        lean["items"] = _resolved(root, lean["items"])
    if "properties" in lean:
        lean["properties"] = {field: _resolved(root, sub) for field, sub in lean["properties"].items()}
    return lean
