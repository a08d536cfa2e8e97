"""MCP tool-definition benchmark: the tokens an agent pays on every turn for the tools a server offers.

Each server's tools are listed through the MCP SDK's own stdio client, and every tool's definition (name,
description, input schema, as the server sends it) is counted with o200k_base. lookout is measured whole
and per toolset (`LOOKOUT_MCP_TOOLS`); the peers that install from npm (mobile-mcp, Playwright MCP) are
installed into a cache directory outside the repository and measured in the same run. The goals (issue 20):
every lookout tool together at most 4,000 tokens, a terminal-only agent at most 1,500. The last line is one
JSON object.

    .venv/bin/python bench/mcp_tools.py [--no-peers]
"""
from __future__ import annotations

import argparse
import asyncio
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

from mcp import ClientSession
from mcp.client.stdio import StdioServerParameters, stdio_client

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))
from app.core.tokens import count_tokens  # noqa: E402
from clients.mcp.toolsets import NAMES  # noqa: E402

CACHE = Path(os.environ.get("XDG_CACHE_HOME", Path.home() / ".cache")) / "lookout-bench" / "mcp-peers"
PEERS = {  # name: (npm package, its command in node_modules/.bin, arguments)
    "mobile-mcp": ("@mobilenext/mobile-mcp", "mcp-server-mobile", []),
    "playwright-mcp": ("@playwright/mcp", "playwright-mcp", ["--headless"]),
}
GOALS = {"all": 4000, "terminal": 1500}


async def definitions(params: StdioServerParameters) -> dict[str, int]:
    """Tokens of each tool's definition, by tool name."""
    async with stdio_client(params) as (read, write), ClientSession(read, write) as session:
        await session.initialize()
        tools = (await session.list_tools()).tools
    return {
        tool.name: count_tokens(json.dumps(tool.model_dump(by_alias=True, exclude_none=True, mode="json")))
        for tool in tools
    }


def lookout(toolsets: str) -> StdioServerParameters:
    """The stdio shim of this checkout (what `lookout-mcp` runs)."""
    return StdioServerParameters(command=sys.executable, args=["-c", "from clients.mcp.server import main; main()"],
                                 env={**os.environ, "LOOKOUT_MCP_TOOLS": toolsets}, cwd=REPO)  # fmt: skip


def peer(name: str) -> StdioServerParameters | None:
    """The peer's server from the npm cache (installed on first use); None when npm cannot install it."""
    package, command, args = PEERS[name]
    binary = CACHE / "node_modules" / ".bin" / command
    if not binary.exists():
        if shutil.which("npm") is None:
            return None
        CACHE.mkdir(parents=True, exist_ok=True)
        done = subprocess.run(["npm", "install", "--prefix", str(CACHE), "--no-audit", "--no-fund", "--loglevel=error",
                               *(p for p, _, _ in PEERS.values())], capture_output=True, text=True)  # fmt: skip
        if done.returncode != 0 or not binary.exists():
            print(f"{name}: npm could not install {package}: {done.stderr.strip()[-300:]}", file=sys.stderr)
            return None
    return StdioServerParameters(command=str(binary), args=args, env=dict(os.environ))


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--no-peers", action="store_true", help="measure lookout only")
    args = parser.parse_args()
    rows: dict[str, dict[str, Any]] = {}
    for toolsets in ("all", *NAMES):
        counts = await definitions(lookout(toolsets))
        rows[f"lookout {toolsets}"] = {"tools": len(counts), "tokens": sum(counts.values()), "goal": GOALS.get(toolsets),
                                       "largest": max(counts.items(), key=lambda item: item[1])}  # fmt: skip
    for name in () if args.no_peers else PEERS:
        params = peer(name)
        if params is not None:
            counts = await definitions(params)
            rows[name] = {"tools": len(counts), "tokens": sum(counts.values()), "goal": None,
                          "largest": max(counts.items(), key=lambda item: item[1])}  # fmt: skip
    print(f"{'server':22} {'tools':>6} {'tokens':>8} {'goal':>6}  largest tool")
    for label, row in rows.items():
        goal = f"{row['goal']:,}" if row["goal"] else ""
        print(f"{label:22} {row['tools']:6} {row['tokens']:8,} {goal:>6}  {row['largest'][0]} ({row['largest'][1]:,})")
    print(json.dumps({"bench": "mcp_tools", "servers": rows}))


if __name__ == "__main__":
    asyncio.run(main())
