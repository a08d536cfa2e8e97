"""Controls inside closed shadow roots, which neither Playwright's snapshot nor a page script reaches, read from
Chromium's accessibility tree over the DevTools protocol and spliced into the snapshot's raw text.

Cost on a page without closed roots: nothing but a number read with the title. `COUNT_AT_START`, an init script
of every context lookout opens, counts the closed roots a document attaches (`attachShadow({mode: "closed"})`,
and `setHTMLUnsafe` or `Document.parseHTMLUnsafe` of HTML that declares one); only a page whose count is above zero is read over CDP: one
`DOMSnapshot.captureSnapshot` (the closed roots, their hosts and every node's box; cheaper than
`DOM.getDocument` with pierce alone) and one `Accessibility.getFullAXTree`. Not seen: closed roots the HTML
parser makes from the document's source (`<template shadowrootmode="closed">`), those of a document that was open
before lookout connected, and those in iframes.

The nodes of a closed root are lines of the same grammar (lookout.browser.aria) with refs `s<N>` (N: Chromium's
backend node id, stable while the element lives; Playwright's refs are `e<N>` and `f<N>e<N>`, so they never
collide), placed under the deepest line of the snapshot whose box holds the host's box, among its children in
the order of their boxes. Everything after the read (views, diffs, find, ref checks) works on them as on others;
actions on them are lookout.browser.shadow_actions.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

from lookout.browser import playwright_api as pw
from lookout.browser.aria import NODE_LINE

if TYPE_CHECKING:
    from playwright.async_api import CDPSession
    from playwright.async_api import Page as PlaywrightPage

Box = tuple[int, int, int, int]
KEY = "__lookoutClosedRoots"
COUNT_AT_START = (
    "(() => { const KEY = '" + KEY + "';"
    + r"""
  const count = doc => { if (doc) Object.defineProperty(doc, KEY, {value: (doc[KEY] || 0) + 1, configurable: true}); };
  const attach = Element.prototype.attachShadow;
  Element.prototype.attachShadow = function (init) {
    const root = attach.call(this, init);
    if (init && init.mode === 'closed') count(this.ownerDocument);
    return root;
  };
  const declares = html => /shadowrootmode\s*=\s*["']?closed/i.test(String(html));
  for (const proto of [Element.prototype, ShadowRoot.prototype]) {
    const set = proto.setHTMLUnsafe;
    if (set) proto.setHTMLUnsafe = function (html, ...rest) {
      const out = set.call(this, html, ...rest);
      if (declares(html)) count(this.ownerDocument);
      return out;
    };
  }
  const parse = Document.parseHTMLUnsafe;  // a document of its own, whose nodes this one may adopt
  if (parse) Document.parseHTMLUnsafe = function (html, ...rest) {
    if (declares(html)) count(document);
    return parse.call(this, html, ...rest);
  };
})();"""
)  # fmt: skip
"""The init script that counts a document's closed shadow roots (the count only grows)."""
PROBE = f"() => [document.title, document.{KEY} || 0, performance.timeOrigin]"
"""The page's title, its count of closed shadow roots and which document it is (its time origin), in one round
trip."""
HOISTED = frozenset({"generic", "none", "presentation", "LabelText", "MenuListPopup", "InlineTextBox"})
"""Chromium's roles shown as their children (an unnamed wrapper, a label's box, a select's popup)."""
VALUED = frozenset({"textbox", "searchbox", "spinbutton", "slider", "combobox"})
"""Roles shown with their value inline and without their inner nodes (an input's editor)."""
ROLES = {"StaticText": "text", "image": "img"}
FLAGS = {"checked": "checked", "pressed": "pressed", "disabled": "disabled", "expanded": "expanded",
         "selected": "selected", "focused": "active"}  # fmt: skip


class ClosedShadow:
    """One page's reader of closed shadow roots: its CDP session (opened on first use) and how often it read."""

    def __init__(self) -> None:
        self._cdp: CDPSession | None = None
        self.reads = 0
        """How many times the page was read over CDP (a page without closed roots never is)."""

    async def session(self, page: PlaywrightPage) -> CDPSession:
        if self._cdp is None:
            self._cdp = await page.context.new_cdp_session(page)
        return self._cdp

    async def spliced(self, page: PlaywrightPage, raw: str) -> str:
        """`raw` (Playwright's snapshot of `page`) with the nodes of the page's closed shadow roots."""
        self.reads += 1
        cdp = await self.session(page)
        try:
            layout = await cdp.send("DOMSnapshot.captureSnapshot", {"computedStyles": []})
            hosts, owner, boxes = await asyncio.to_thread(closed_roots, layout)  # a pass over every node: not here
            if not hosts:
                return raw
            # the whole tree: a host without a role of its own is ignored, and a query of its subtree finds nothing
            tree = await cdp.send("Accessibility.getFullAXTree")
        except pw.Error:
            self._cdp = None  # a session that went with its target: the next read opens another
            raise
        return await asyncio.to_thread(with_sections, raw, tree["nodes"], hosts, owner, boxes)


def with_sections(
    raw: str, nodes: list[dict[str, Any]], hosts: list[int], owner: dict[int, int], boxes: dict[int, Box]
) -> str:
    """`raw` with a section for each host (`nodes`: Accessibility.getFullAXTree; the rest: `closed_roots`)."""
    by_id = {n["nodeId"]: n for n in nodes}
    starts = tops(nodes, owner)
    sections = []
    for host in hosts:
        lines = section(by_id, starts.get(host, []), owner, boxes)
        if lines:
            shown = shown_ids(by_id, starts.get(host, []), owner)
            sections.append((boxes.get(host) or _union([boxes.get(i) for i in shown]), lines))
    return splice(raw, sections)


def _union(boxes: list[Box | None]) -> Box | None:
    real = [b for b in boxes if b is not None and (b[2] or b[3])]
    if not real:
        return None
    left, top = min(b[0] for b in real), min(b[1] for b in real)
    return left, top, max(b[0] + b[2] for b in real) - left, max(b[1] + b[3] for b in real) - top


def closed_roots(layout: dict[str, Any]) -> tuple[list[int], dict[int, int], dict[int, Box]]:
    """From `DOMSnapshot.captureSnapshot` of the page: the hosts of the main document's outermost closed shadow
    roots (backend node ids, in document order); for every node inside a closed root (nested roots too) the
    outermost host it is under; and the viewport box of every node with a layout box. The snapshot lists the
    flat tree (a root's nodes under their host, slotted light children under their slot), each node of a shadow
    tree with the kind of root it is in; frames are documents of their own."""
    document, strings = layout["documents"][0], layout["strings"]
    nodes = document["nodes"]
    parents, backend = nodes["parentIndex"], nodes["backendNodeId"]
    rare = nodes.get("shadowRootType") or {"index": [], "value": []}
    kind = {i: strings[v] for i, v in zip(rare["index"], rare["value"], strict=True)}
    hosts: list[int] = []
    known: set[int] = set()
    under: list[int | None] = []
    """For each node (by index), the outermost host of the closed root it is in."""
    owner: dict[int, int] = {}
    for i, parent in enumerate(parents):
        inside = kind.get(i)  # a node of the document's own tree (a host's light child, slotted) has none
        host = under[parent] if inside and parent >= 0 else None
        if host is None and inside == "closed":
            host = backend[parent]
            if host not in known:
                known.add(host)
                hosts.append(host)
        under.append(host)
        if host is not None:
            owner[backend[i]] = host
    dx, dy = document.get("scrollOffsetX", 0), document.get("scrollOffsetY", 0)
    boxes: dict[int, Box] = {}
    boxed = document.get("layout") or {"nodeIndex": [], "bounds": []}
    for index, (x, y, w, h) in zip(boxed["nodeIndex"], boxed["bounds"], strict=True):
        boxes.setdefault(backend[index], (round(x - dx), round(y - dy), round(w), round(h)))
    return hosts, owner, boxes


def tops(nodes: list[dict[str, Any]], owner: dict[int, int]) -> dict[int, list[str]]:
    """For each host, the accessibility nodes (ids) of its closed root that are not under another of them, in
    document order (`nodes`: Accessibility.getFullAXTree, where an ignored host's children are its parent's)."""
    by_id = {n["nodeId"]: n for n in nodes}
    out: dict[int, list[str]] = {}
    stack = [n for n in nodes if "parentId" not in n][:1]
    while stack:
        node = stack.pop()
        host = owner.get(node.get("backendDOMNodeId", -1))
        if host is not None:
            out.setdefault(host, []).append(node["nodeId"])
            continue
        stack.extend(by_id[c] for c in reversed(node.get("childIds", ())) if c in by_id)
    return out


Nodes = dict[str, dict[str, Any]]
"""Accessibility nodes by their ids."""


def _walk(by_id: Nodes, starts: list[str], inside: dict[int, int]) -> Iterator[tuple[dict[str, Any], int, str]]:
    """The accessibility nodes under `starts` to show, depth first, with their depth and the name of the node
    shown above them (wrappers hoisted; light children, which Playwright shows, and inline boxes left out)."""
    stack = [(by_id[c], 0, "") for c in reversed(starts) if c in by_id]
    while stack:
        node, depth, above = stack.pop()
        if node.get("backendDOMNodeId") not in inside:
            continue
        role = _value(node, "role")
        hoisted = node.get("ignored") or (role in HOISTED and not _value(node, "name"))
        if not hoisted:
            yield node, depth, above
        if role in VALUED or role == "StaticText":
            continue
        name = above if hoisted else str(_value(node, "name") or "")
        inner = depth if hoisted else depth + 1
        stack.extend((by_id[c], inner, name) for c in reversed(node.get("childIds", ())) if c in by_id)


def shown_ids(by_id: Nodes, starts: list[str], inside: dict[int, int]) -> list[int]:
    """The backend ids of the nodes `section` shows (text nodes aside)."""
    return [n["backendDOMNodeId"] for n, _, _ in _walk(by_id, starts, inside) if _value(n, "role") != "StaticText"]


def section(by_id: Nodes, starts: list[str], inside: dict[int, int], boxes: dict[int, Box]) -> list[str]:
    """The lines of the nodes under `starts` (a host's `tops`) that are `inside` closed roots, indented from 0."""
    lines: list[str] = []
    for node, depth, above in _walk(by_id, starts, inside):
        role, name = str(_value(node, "role")), str(_value(node, "name") or "")
        indent = "  " * depth
        if role == "StaticText":
            if name.strip() and name.strip() != above.strip():
                lines.append(f"{indent}- text: {_quoted(name)}")
            continue
        backend = node["backendDOMNodeId"]
        line = f"{indent}- {ROLES.get(role, role)}" + (f" {_quoted(name)}" if name else "")
        line += "".join(f" [{flag}]" for flag in _flags(node)) + f" [ref=s{backend}]"
        if (box := boxes.get(backend)) is not None:
            line += " [box={},{},{},{}]".format(*box)
        value = _value(node, "value")
        if role in VALUED and value not in (None, ""):
            line += f": {_quoted(str(value))}"
        lines.append(line)
    for i in range(len(lines) - 1):  # a text child under its parent
        if _depth(lines[i + 1]) > _depth(lines[i]) and not lines[i].endswith(":"):
            lines[i] += ":"
    return lines


def _depth(line: str) -> int:
    return (len(line) - len(line.lstrip(" "))) // 2


def _quoted(text: str) -> str:
    return json.dumps(" ".join(text.split()), ensure_ascii=False)


def _value(node: dict[str, Any], key: str) -> Any:
    return (node.get(key) or {}).get("value")


def _flags(node: dict[str, Any]) -> list[str]:
    out = []
    for prop in node.get("properties", ()):
        flag, value = FLAGS.get(prop["name"]), (prop.get("value") or {}).get("value")
        if prop["name"] == "level":
            out.append(f"level={value}")
        elif flag is not None and value in (True, "true"):
            out.append(flag)
        elif flag is not None and value == "mixed":
            out.append(f"{flag}=mixed")
    return out


def splice(raw: str, sections: list[tuple[Box | None, list[str]]]) -> str:
    """`raw` with each section's lines placed under the deepest line whose box holds the section's box (the
    document's top level when none does, or the section has no box), before the first child that comes after
    it on the page. A line that held inline text (`- generic [ref=e4]: light child`) gets it as a text child."""
    lines = raw.split("\n") if raw else []
    info = [_line_info(line) for line in lines]
    before: dict[int, list[str]] = {}
    opened: set[int] = set()
    for box, body in sections:
        at, indent, parent = _place(info, len(lines), box)
        if parent is not None:
            opened.add(parent)
        before.setdefault(at, []).extend(" " * indent + line for line in body)
    out: list[str] = []
    for i, line in enumerate([*lines, None]):
        out.extend(before.get(i, ()))
        if line is None:
            break
        if i in opened:
            head, value = info[i][3]
            out.append(head + ":")
            if value:
                out.append(" " * (info[i][0] + 2) + "- text: " + value)
        else:
            out.append(line)
    return "\n".join(out)


_Info = tuple[int, Box | None, bool, tuple[str, str]]
"""A line's indent, box, whether it is a node a section may go under, and its head and inline value."""


def _line_info(line: str) -> _Info:
    match = NODE_LINE.fullmatch(line)
    if match is None or match.group("other") is not None or match.group("role") == "text":
        return len(line) - len(line.lstrip(" ")), None, False, (line, "")
    attrs, value = match.group("attrs") or "", match.group("value") or ""
    box = None
    if "[box=" in attrs:
        try:
            x, y, w, h = (int(float(v)) for v in attrs.split("[box=")[1].split("]")[0].split(","))
            box = (x, y, w, h)
        except ValueError:
            box = None
    head = line[: match.end("attrs")]
    return len(match.group("indent")), box, True, (head, value)


def _place(info: list[_Info], end: int, box: Box | None) -> tuple[int, int, int | None]:
    """Where a section with `box` goes: the line index to insert before, its indent, and its parent line (the
    deepest line whose box holds the centre of `box`, the smallest of those; containers need not hold their
    children's boxes)."""
    if box is None:
        return end, 0, None
    cx, cy = box[0] + box[2] / 2, box[1] + box[3] / 2
    holding = [i for i in range(end) if info[i][2] and _holds(info[i][1], cx, cy)]
    lo, hi, indent, parent = 0, end, min((i[0] for i in info if i[2]), default=0), None
    if holding:
        parent = max(holding, key=lambda i: (info[i][0], -_area(info[i][1])))
        lo, indent = parent + 1, info[parent][0] + 2
        hi = next((j for j in range(lo, end) if info[j][0] <= info[parent][0]), end)
    for i in range(lo, hi):
        other = info[i][1]
        if info[i][0] == indent and info[i][2] and other is not None and (other[1], other[0]) > (box[1], box[0]):
            return i, indent, parent
    return hi, indent, parent


def _area(box: Box | None) -> int:
    return 0 if box is None else box[2] * box[3]


def _holds(box: Box | None, x: float, y: float) -> bool:
    return box is not None and box[0] <= x <= box[0] + box[2] and box[1] <= y <= box[1] + box[3]
