"""MCP tool-definition benchmark: the tokens an agent pays on every turn for the tools a server offers.

Each server's tools are listed through the MCP SDK's own stdio client, and every tool's definition (name,
description, input schema, as the server sends it) is counted with o200k_base. lookout is measured whole
and per toolset (`LOOKOUT_MCP_TOOLS`); the peers that install from npm (mobile-mcp, Playwright MCP) are
installed into a cache directory outside the repository and measured in the same run. The goals (issue 20):
every lookout tool together at most 4,000 tokens, a terminal-only agent at most 1,500 (so the other
toolsets together at most 2,500).

Screenshots reach the model as MCP image content, whose tokens depend on its size only: the bytes are what
the format changes. The same screens are encoded as PNG and as JPEG at the same dimensions, as the daemon
encodes them (lookout.core.images): a page rendered by real headless Chromium (a 1280x720 catalogue, scaled to
1000x562), the same page at a phone's size (1080x2400 -> 450x1000, standing for an app's screen) and the
fake device's test screen (colour bands). The MCP tools send the format that is smaller on the rendered
screens. The last line is one JSON object.

    .venv/bin/python bench/mcp_tools.py [--no-peers] [--no-images]
"""
from __future__ import annotations

import argparse
import asyncio
import io
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
from lookout.clients.mcp.browser_tools import IMAGE_FORMAT as PAGE_FORMAT  # noqa: E402
from lookout.clients.mcp.device_tools import IMAGE_FORMAT as DEVICE_FORMAT  # noqa: E402
from lookout.clients.mcp.toolsets import NAMES  # noqa: E402
from lookout.core.tokens import count_tokens  # noqa: E402

CACHE = Path(os.environ.get("XDG_CACHE_HOME", Path.home() / ".cache")) / "lookout-bench" / "mcp-peers"
PEERS = {  # name: (npm package, its command in node_modules/.bin, arguments)
    "mobile-mcp": ("@mobilenext/mobile-mcp", "mcp-server-mobile", []),
    "playwright-mcp": ("@playwright/mcp", "playwright-mcp", ["--headless"]),
}
GOALS = {"all": 4000, "terminal": 1500, "device,page,context": 2500}
"""Tokens of the tool definitions at most (issue 20's goals): a goal is met by shorter definitions, never by
moving it."""


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
    return StdioServerParameters(command=sys.executable, args=["-c", "from lookout.clients.mcp.server import main; main()"],
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


CATALOGUE = "<!doctype html><title>Catalogue</title><h1>Catalogue</h1><table>" + "".join(
    f"<tr><td>Item {i}</td><td>${i * 1.37:.2f}</td><td><button>Add {i}</button></td><td><a href='/i/{i}'>Details {i}"
    "</a></td></tr>" for i in range(60)) + "</table>"  # fmt: skip


async def image_bytes() -> dict[str, dict[str, int | str]]:
    """PNG and JPEG bytes of each screen at the size the tools send it, by screen."""
    from PIL import Image
    from playwright.async_api import async_playwright

    from lookout.browser.browser import FLAGS, find_executable
    from lookout.core.images import encode, resize
    from lookout.core.scaling import fit
    from tests.support.adb_fake import default_screen

    screens: dict[str, Any] = {}
    async with async_playwright() as playwright:
        browser = await playwright.chromium.launch(executable_path=find_executable(None), args=list(FLAGS))
        for name, size in (("page 1280x720", (1280, 720)), ("page as a phone 1080x2400", (1080, 2400))):
            page = await browser.new_page(viewport={"width": size[0], "height": size[1]})
            await page.set_content(CATALOGUE)
            screens[name] = Image.open(io.BytesIO(await page.screenshot(type="png"))).convert("RGB")
        await browser.close()
    screens["fake device 1080x2400"] = default_screen(1080, 2400)
    out: dict[str, dict[str, int | str]] = {}
    for name, image in screens.items():
        scale = fit(image.width, image.height, 1000)
        scaled = resize(image, scale.image_width, scale.image_height)
        out[name] = {"size": f"{scaled.width}x{scaled.height}", "png": len(encode(scaled, "png")),
                     "jpeg": len(encode(scaled, "jpeg"))}  # fmt: skip
    return out


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--no-peers", action="store_true", help="measure lookout only")
    parser.add_argument("--no-images", action="store_true", help="skip the PNG/JPEG comparison")
    args = parser.parse_args()
    rows: dict[str, dict[str, Any]] = {}
    for toolsets in ("all", *NAMES, "device,page,context"):
        counts = await definitions(lookout(toolsets))
        rows[f"lookout {toolsets}"] = {"tools": len(counts), "tokens": sum(counts.values()), "goal": GOALS.get(toolsets),
                                       "largest": max(counts.items(), key=lambda item: item[1])}  # fmt: skip
    for name in () if args.no_peers else PEERS:
        params = peer(name)
        if params is not None:
            counts = await definitions(params)
            rows[name] = {"tools": len(counts), "tokens": sum(counts.values()), "goal": None,
                          "largest": max(counts.items(), key=lambda item: item[1])}  # fmt: skip
    print(f"{'server':28} {'tools':>6} {'tokens':>8} {'goal':>6}  largest tool")
    for label, row in rows.items():
        goal = f"{row['goal']:,}" if row["goal"] else ""
        print(f"{label:28} {row['tools']:6} {row['tokens']:8,} {goal:>6}  {row['largest'][0]} ({row['largest'][1]:,})")
    images = {} if args.no_images else await image_bytes()
    if images:
        print(f"\nscreenshot bytes at the same size (tools send: device {DEVICE_FORMAT}, page {PAGE_FORMAT})")
        print(f"{'screen':28} {'size':>9} {'png':>9} {'jpeg':>9}  jpeg/png")
        for label, row in images.items():
            print(f"{label:28} {row['size']:>9} {row['png']:9,} {row['jpeg']:9,}  {row['jpeg'] / row['png']:.2f}")
    print(json.dumps({"bench": "mcp_tools", "servers": rows, "image_bytes": images,
                      "image_formats": {"device": DEVICE_FORMAT, "page": PAGE_FORMAT}}))  # fmt: skip


if __name__ == "__main__":
    asyncio.run(main())
