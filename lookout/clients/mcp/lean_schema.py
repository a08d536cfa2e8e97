"""Tool input schemas as an agent needs them: pydantic's JSON Schema less what only repeats itself.

Every turn of every agent carries the tool definitions, so each word counts. A property's `title` restates
its name; `additionalProperties: false` only says what the validation of a call will say anyway; an
optional argument's `anyOf [X, null]` with `default: null` says "may be left out", which not being in
`required` already says; a flag's `default: false`, a choice's default when it is the first of its `enum`,
and an object's `additionalProperties: true` say what JSON Schema or the reader assumes anyway; so does a
lower bound of 0 or 1 on a count, an offset or a duration. Lengths (`minLength`, `maxLength`), item counts
(`minItems`, `maxItems`) and upper bounds (`maximum`) are left out: they keep requests sane rather than guide
a model, and the daemon (or the tool, where it is stricter and its description says so) still refuses an
argument beyond them, with a clear error. A lower bound that says more (`minimum: 100` pixels) stays.
Validation is unchanged: the models still hold every constraint.
"""

from __future__ import annotations

from typing import Any

_NULL = {"type": "null"}
_BOUNDS = ("minLength", "maxLength", "minItems", "maxItems", "maximum")
_ASSUMED_MINIMUMS = (0, 1)


def lean_schema(schema: dict[str, Any], *, keep_bounds: bool = False) -> dict[str, Any]:
    """`schema` without what it need not say (see the module's docstring), as a new dict; `keep_bounds`
    keeps every bound, length and item count (to compare two schemas' validation, as the contract tests do)."""
    return _lean(schema, keep_bounds)


def _lean(node: Any, keep_bounds: bool) -> Any:
    if isinstance(node, list):
        return [_lean(item, keep_bounds) for item in node]
    if not isinstance(node, dict):
        return node
    out: dict[str, Any] = {}
    for key, value in node.items():
        if key in ("properties", "$defs") and isinstance(value, dict):
            out[key] = {name: _lean(item, keep_bounds) for name, item in value.items()}
        elif not _needless(key, value, keep_bounds):
            out[key] = _lean(value, keep_bounds)
    variants = out.get("anyOf")
    if isinstance(variants, list) and _NULL in variants and out.get("default", ...) is None:
        rest = [v for v in variants if v != _NULL]
        del out["anyOf"], out["default"]
        out = {**rest[0], **out} if len(rest) == 1 else {"anyOf": rest, **out}
    if out.get("type") == "boolean" and out.get("default", ...) is False:
        del out["default"]
    choices = out.get("enum")
    if isinstance(choices, list) and choices and out.get("default", ...) == choices[0]:
        del out["default"]
    return out


def _needless(key: str, value: Any, keep_bounds: bool) -> bool:
    if key == "title":
        return isinstance(value, str)
    if key in _BOUNDS:
        return not keep_bounds
    if key == "minimum":
        return not keep_bounds and value in _ASSUMED_MINIMUMS
    return key == "additionalProperties" and isinstance(value, bool)  # false: the daemon refuses the rest
