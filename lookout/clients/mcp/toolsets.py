"""The toolsets a client may choose, by name: `LOOKOUT_MCP_TOOLS` for the stdio shim, `/mcp?tools=` over HTTP.

Light on purpose (no MCP import): the daemon parses the choice before it builds a server."""

from __future__ import annotations

NAMES = ("terminal", "device", "page", "context")


def parse_toolsets(value: str | None) -> tuple[str, ...]:
    """`"terminal,page"` -> ("terminal", "page") in NAMES' order; None, "" or "all" -> every toolset.
    ValueError names the valid ones."""
    if not value or value.strip() == "all":
        return NAMES
    chosen = {name.strip() for name in value.split(",") if name.strip()}
    unknown = sorted(chosen - set(NAMES))
    if unknown or not chosen:
        raise ValueError(f"unknown toolset {', '.join(unknown) or value!r}: name some of {', '.join(NAMES)}, or all")
    return tuple(name for name in NAMES if name in chosen)
