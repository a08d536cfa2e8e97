"""UI listing cost: lookout's element list against @mobilenext/mobile-mcp's, on real uiautomator dumps.

The dumps are the real ones in tests/data/ui_dumps (their sources are in SOURCES.md there). For each:
o200k tokens of mobile-mcp's `mobile_list_elements_on_screen` answer, rebuilt here from its documented
format (the text "Found these elements on screen: " and a JSON array of {type, text, label, identifier?,
coordinates{x, y, width, height}, focused?} for every node with a text, a description, a resource id or
checkable="true" and a non-empty box, children before their parent), and of lookout's `GET /ui` answer
for the same dump (what the daemon returns, at the default 1000 px scale), with the element counts and
tokens an element (the tokens of the `elements` array over its length: what each listed element costs;
the answer's header, about 70 tokens, comes once a call). The issue's figures for mobile-mcp, measured with mobile-mcp itself, are printed
beside the rebuilt ones as a check of the rebuild.

Goals: at most 25 tokens an element, and fewer tokens than mobile-mcp on every dump.
The last line of the output is one JSON object with the figures.

    .venv/bin/python bench/device_listing.py
"""
from __future__ import annotations

import json
import re
import sys
import xml.etree.ElementTree as ET
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from app.core.scaling import fit  # noqa: E402
from app.core.tokens import count_tokens  # noqa: E402
from app.device.ui_tree import parse_hierarchy, render_elements  # noqa: E402

DUMPS = ROOT / "tests" / "data" / "ui_dumps"
ISSUE_FIGURES = {"whatsapp_chats": 4363, "tiktok_feed": 4382, "wecom_list": 4389, "sayhi_list": 2217}
"""mobile-mcp's tokens as issue 19 measured them with mobile-mcp itself (Settings was not found as a public dump)."""
_BOUNDS = re.compile(r"^\[(\d+),(\d+)\]\[(\d+),(\d+)\]$")


def mobile_mcp_listing(xml: bytes) -> tuple[str, int]:
    """mobile-mcp's answer for a dump (see the module docstring) and its element count."""
    root = ET.fromstring(xml[xml.find(b"<?xml") if b"<?xml" in xml else 0 :])
    out: list[dict[str, Any]] = []

    def visit(node: ET.Element) -> None:
        for child in node.findall("node"):
            visit(child)
        if node.tag != "node":
            return
        a = node.attrib
        if not (a.get("text") or a.get("content-desc") or a.get("hint") or a.get("resource-id")
                or a.get("checkable") == "true"):  # fmt: skip
            return
        match = _BOUNDS.match(a.get("bounds", ""))
        if match is None:
            return
        left, top, right, bottom = map(int, match.groups())
        if right - left <= 0 or bottom - top <= 0:
            return
        element: dict[str, Any] = {"type": a.get("class") or "text"}
        if "text" in a:
            element["text"] = a["text"]
        element["label"] = a.get("content-desc") or a.get("hint") or ""
        if a.get("resource-id"):
            element["identifier"] = a["resource-id"]
        element["coordinates"] = {"x": left, "y": top, "width": right - left, "height": bottom - top}
        if a.get("focused") == "true":
            element["focused"] = True
        out.append(element)

    visit(root)
    return "Found these elements on screen: " + json.dumps(out, ensure_ascii=False, separators=(",", ":")), len(out)


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
    rows = []
    for path in sorted(DUMPS.glob("*.xml")):
        xml = path.read_bytes()
        mcp_text, mcp_count = mobile_mcp_listing(xml)
        ours = lookout_listing(xml)
        rows.append({"dump": path.stem, "nodes": ours["total"], "mobile_mcp_tokens": count_tokens(mcp_text),
                     "mobile_mcp_issue": ISSUE_FIGURES.get(path.stem), "mobile_mcp_elements": mcp_count,
                     "lookout_tokens": ours["tokens"], "lookout_elements": ours["shown"],
                     "lookout_per_element": round(count_tokens(json.dumps(ours["elements"], ensure_ascii=False, separators=(",", ":"))) / max(ours["shown"], 1), 1)})  # fmt: skip
    head = f"{'dump':<18}{'nodes':>6}{'mcp tok':>9}{'(issue)':>9}{'mcp el':>8}{'lookout tok':>13}{'el':>5}{'tok/el':>8}"
    print(head)
    for r in rows:
        print(f"{r['dump']:<18}{r['nodes']:>6}{r['mobile_mcp_tokens']:>9}{r['mobile_mcp_issue'] or '-'!s:>9}"
              f"{r['mobile_mcp_elements']:>8}{r['lookout_tokens']:>13}{r['lookout_elements']:>5}"
              f"{r['lookout_per_element']:>8}")  # fmt: skip
    smaller = sum(r["lookout_tokens"] < r["mobile_mcp_tokens"] for r in rows)
    worst = max(r["lookout_per_element"] for r in rows)
    print(f"lookout smaller on {smaller} of {len(rows)} dumps; at most {worst} tokens an element")
    print(json.dumps({"bench": "device_listing", "dumps": rows, "lookout_smaller": smaller,
                      "max_tokens_per_element": worst}))  # fmt: skip


if __name__ == "__main__":
    main()
