"""Tool input schemas as an agent needs them: pydantic's JSON Schema less what only repeats itself.

Every turn of every agent carries the tool definitions, so each word counts. A property's `title` restates
its name; `additionalProperties: false` only says what the validation of a call will say anyway; an optional argument's `anyOf [X, null]` with `default: null` says "may be left out", which not
being in `required` already says. Validation is unchanged: the daemon-side models still accept null.
"""
from __future__ import annotations

from typing import Any

_NULL = {"type": "null"}


def lean_schema(schema: dict[str, Any]) -> dict[str, Any]:
    """`schema` without titles and with optional-or-null properties as plain optional ones (a new dict)."""
    return _lean(schema, top=True)


def _lean(node: Any, top: bool = False) -> Any:
    if isinstance(node, list):
        return [_lean(item) for item in node]
    if not isinstance(node, dict):
        return node
    out: dict[str, Any] = {}
    for key, value in node.items():
        if (key == "title" and isinstance(value, str)) or (key == "additionalProperties" and value is False):
            continue  # a strict model still refuses unknown fields when the call is validated
        if key in ("properties", "$defs") and isinstance(value, dict):
            out[key] = {name: _lean(item) for name, item in value.items()}
        else:
            out[key] = _lean(value)
    variants = out.get("anyOf")
    if isinstance(variants, list) and _NULL in variants and out.get("default", ...) is None:
        rest = [v for v in variants if v != _NULL]
        if len(rest) == 1:
            del out["anyOf"], out["default"]
            out = {**rest[0], **out}
    return out
