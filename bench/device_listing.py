"""UI listing cost: lookout's element list against the real @mobilenext/mobile-mcp's, on real uiautomator dumps.

The dumps are the real ones in tests/data/ui_dumps (their sources are in SOURCES.md there). For each, a fake
device (tests/support) on a real adb server serves the dump, and the real mobile-mcp (npm package, version
MOBILE_MCP, installed at first use into ~/.cache/lookout-bench, never into the repository) is asked over MCP
(stdio, the SDK's client) for `mobile_list_elements_on_screen` with its defaults, through the same adb server
(its legacy adb robot: MOBILEMCP_LEGACY_ROBOT=1; telemetry off). Its answer's o200k tokens are set beside
lookout's `GET /ui` answer for the same dump (what the daemon returns, at the default 1000 px scale), with the
element counts and tokens an element (lookout: the tokens of the `elements` array over its length; the
answer's header, about 70 tokens, comes once a call). Where mobile-mcp cannot run here (no node or npm, the
package cannot be installed, the server fails), its columns say "not measured": never an estimate.

Goals: at most 25 tokens an element, and fewer tokens than mobile-mcp on every dump.
The last line of the output is one JSON object with the figures.

    .venv/bin/python bench/device_listing.py
"""
from __future__ import annotations

import asyncio
import json
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from lookout.core.scaling import fit  # noqa: E402
from lookout.core.tokens import count_tokens  # noqa: E402
from lookout.device.shown import render_elements  # noqa: E402
from lookout.device.ui_tree import parse_hierarchy  # noqa: E402

DUMPS = ROOT / "tests" / "data" / "ui_dumps"
MOBILE_MCP = "1.0.4"
CACHE = Path.home() / ".cache" / "lookout-bench" / f"mobile-mcp-{MOBILE_MCP}"
NOT_MEASURED = "not measured"


def install_mobile_mcp() -> tuple[Path | None, str]:
    """mobile-mcp's entry script (installed with npm into CACHE if missing), or None and why not."""
    entry = CACHE / "node_modules" / "@mobilenext" / "mobile-mcp" / "lib" / "index.js"
    if entry.is_file():
        return entry, ""
    if shutil.which("node") is None or shutil.which("npm") is None:
        return None, "node and npm are not installed"
    CACHE.mkdir(parents=True, exist_ok=True)
    done = subprocess.run(["npm", "install", "--prefix", str(CACHE), "--no-audit", "--no-fund", "--loglevel=error",
                           f"@mobilenext/mobile-mcp@{MOBILE_MCP}"], capture_output=True, text=True, timeout=600)  # fmt: skip
    if done.returncode != 0 or not entry.is_file():
        return None, f"npm install failed: {done.stderr.strip()[-300:]}"
    return entry, ""


async def mobile_mcp_listings(entry: Path, dumps: list[Path]) -> dict[str, str]:
    """mobile-mcp's answer for each dump, served by a fake device on a real adb server."""
    from mcp import ClientSession, StdioServerParameters
    from mcp.client.stdio import stdio_client

    from tests.support.adb_fake import FakeDevice
    from tests.support.adb_server import AdbServer, adb_binary

    tmp = Path(tempfile.mkdtemp(prefix="lookout-bench-"))
    server = AdbServer(tmp / "adb").start()
    fake = FakeDevice(tmp / "device")
    log = (tmp / "mobile-mcp.log").open("w")  # its own log lines, kept off the table
    answers: dict[str, str] = {}
    try:
        serial = server.connect(fake)
        tools = tmp / "sdk" / "platform-tools"
        tools.mkdir(parents=True)
        (tools / "adb").symlink_to(adb_binary())
        env = {**os.environ, "ANDROID_HOME": str(tmp / "sdk"), "ANDROID_ADB_SERVER_PORT": str(server.port),
               "MOBILEMCP_LEGACY_ROBOT": "1", "MOBILEMCP_DISABLE_TELEMETRY": "1"}  # fmt: skip
        params = StdioServerParameters(command="node", args=[str(entry), "--stdio"], env=env)
        async with stdio_client(params, errlog=log) as (read, write), ClientSession(read, write) as session:
            await session.initialize()
            for path in dumps:
                fake.set_ui(path.read_text())
                result = await session.call_tool("mobile_list_elements_on_screen", {"device": serial})
                text = "".join(c.text for c in result.content if c.type == "text")
                if not result.is_error:
                    answers[path.stem] = text
    finally:
        log.close()
        fake.stop()
        server.stop()
        shutil.rmtree(tmp, ignore_errors=True)
    return answers


def lookout_listing(xml: bytes, max_tokens: int | None = None) -> dict[str, Any]:
    """lookout's GET /ui answer for a dump, at the default scale of the dump's screen."""
    nodes = parse_hierarchy(xml)
    width = max(n.bounds.right for n in nodes)
    height = max(n.bounds.bottom for n in nodes)
    scale = fit(width, height, 1000)
    header = {"obs_id": "o_0123456789abcdef", "serial": "emulator-5554",
              "device": {"width": width, "height": height, "rotation": 0},
              "image": {"width": scale.image_width, "height": scale.image_height},
              "scale_factor": round(scale.factor, 6)}  # fmt: skip
    return render_elements(nodes, scale.factor, screen=(width, height), header=header, max_tokens=max_tokens)


def main() -> None:
    dumps = sorted(DUMPS.glob("*.xml"))
    entry, why = install_mobile_mcp()
    peer: dict[str, str] = {}
    if entry is not None:
        try:
            peer = asyncio.run(mobile_mcp_listings(entry, dumps))
        except Exception as exc:  # noqa: BLE001 (the peer's failure is reported, never estimated)
            why = f"mobile-mcp failed: {type(exc).__name__}: {exc}"
    rows = []
    for path in dumps:
        ours = lookout_listing(path.read_bytes())
        answer = peer.get(path.stem)
        elements = json.dumps(ours["elements"], ensure_ascii=False, separators=(",", ":"))
        rows.append({"dump": path.stem, "nodes": ours["total"],
                     "mobile_mcp_tokens": count_tokens(answer) if answer is not None else None,
                     "mobile_mcp_elements": len(answer.splitlines()) - 1 if answer is not None else None,
                     "lookout_tokens": ours["tokens"], "lookout_elements": ours["shown"],
                     "lookout_per_element": round(count_tokens(elements) / max(ours["shown"], 1), 1)})  # fmt: skip
    print(f"mobile-mcp {MOBILE_MCP}: " + ("measured (its own answers, through the same adb server)" if peer
                                          else f"{NOT_MEASURED} ({why})"))  # fmt: skip
    print(f"{'dump':<18}{'nodes':>6}{'mcp tok':>14}{'mcp el':>14}{'lookout tok':>13}{'el':>5}{'tok/el':>8}")
    for r in rows:
        mcp_tokens = NOT_MEASURED if r["mobile_mcp_tokens"] is None else r["mobile_mcp_tokens"]
        mcp_elements = NOT_MEASURED if r["mobile_mcp_elements"] is None else r["mobile_mcp_elements"]
        print(f"{r['dump']:<18}{r['nodes']:>6}{mcp_tokens!s:>14}{mcp_elements!s:>14}{r['lookout_tokens']:>13}"
              f"{r['lookout_elements']:>5}{r['lookout_per_element']:>8}")  # fmt: skip
    measured = [r for r in rows if r["mobile_mcp_tokens"] is not None]
    smaller = sum(r["lookout_tokens"] < r["mobile_mcp_tokens"] for r in measured)
    worst = max(r["lookout_per_element"] for r in rows)
    print(f"lookout smaller on {smaller} of {len(measured)} measured dumps; at most {worst} tokens an element")
    print(json.dumps({"bench": "device_listing", "mobile_mcp": MOBILE_MCP, "peer_measured": bool(peer),
                      "dumps": rows, "lookout_smaller": smaller, "measured_dumps": len(measured),
                      "max_tokens_per_element": worst}))  # fmt: skip


if __name__ == "__main__":
    main()
