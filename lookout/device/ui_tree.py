"""The UI tree of a device: `uiautomator dump` XML parsed into a compact list an agent can read and act on.

Pure functions. Every `<node>` gets an index, its position in document order, so the indices of one dump
never change. Bounds are device pixels here; `element()` gives them in an observation's image space.

The default listing is what an agent can see and use: nodes with no visible area or off the screen are
left out (WhatsApp's tab labels have bounds [0,0][0,0]); a clickable node carries the text of the plain
text nodes inside it, which are then not listed apart; a clickable wrapper with no label of its own and
clickable nodes inside is left to them; flags that follow from others go. `all=True` lists every node as
it is, hidden ones flagged.
"""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from lookout.core.patterns import IGNORECASE, Budget, UserPattern

FLAGS = ("clickable", "long-clickable", "checkable", "checked", "focusable", "focused", "scrollable", "selected",
         "password")  # fmt: skip
LISTED_FLAGS = {"clickable": "tap", "long-clickable": "long", "checkable": "check", "checked": "on",
                "focused": "focused", "scrollable": "scroll", "selected": "selected", "password": "password",
                "disabled": "disabled"}  # fmt: skip
"""The flags a listing shows, by their short names. `focusable` follows from the others and goes; so does
`tap`: a listed element can be tapped unless its flags say `static` (text only) or `scroll` (a list)."""
_TAPPABLE = {"clickable", "long-clickable", "checkable"}
_GENERIC = {
    "TextView",
    "View",
    "ViewGroup",
    "FrameLayout",
    "LinearLayout",
    "RelativeLayout",
    "ConstraintLayout",
    "ImageView",
}
"""Classes that say nothing an element's flags and text do not: left out of the listing."""
_FRAMEWORK = ("android.", "androidx.")
"""An app's own (often obfuscated) classes tell an agent nothing; only the framework's are listed."""
_SPACES = re.compile(r"\s+")
CARRIED_TEXTS = 3
"""At most this many texts ride on one clickable node; text nodes past them are listed on their own."""
MAX_TEXT = 24
"""Each text of a listed label longer than this many characters is cut (ending in "…"), never dropped: a row
shows every text it carries; `find` still searches the whole text."""
_BOUNDS = re.compile(r"\[(-?\d+),(-?\d+)\]\[(-?\d+),(-?\d+)\]")
_EDITABLE = ("EditText", "AutoCompleteTextView", "SearchView")


class UiParseError(ValueError):
    """The dump is not a uiautomator hierarchy."""


@dataclass(frozen=True, slots=True)
class Bounds:
    left: int
    top: int
    right: int
    bottom: int

    @property
    def center(self) -> tuple[int, int]:
        return (self.left + self.right) // 2, (self.top + self.bottom) // 2

    def to_image(self, scale: float) -> Bounds:
        return Bounds(*(round(v / scale) for v in (self.left, self.top, self.right, self.bottom)))

    def contains(self, x: int, y: int) -> bool:
        return self.left <= x < self.right and self.top <= y < self.bottom


@dataclass(frozen=True, slots=True)
class UiNode:
    index: int
    cls: str
    """Short class name: `android.widget.Button` -> `Button`."""
    text: str
    resource_id: str
    """Short resource id: `com.example:id/login` -> `login`."""
    desc: str
    package: str
    flags: tuple[str, ...]
    """The flags that are set, in FLAGS order, then `disabled` when enabled="false"."""
    bounds: Bounds
    depth: int
    full_class: str = ""
    full_id: str = ""
    parent: int | None = None
    """The index of the enclosing node; None at the top."""
    layer: int | None = None
    """The layer of the window holding the node, where the dump says it (`<window layer=...>` of
    `uiautomator dump --windows`); None otherwise."""

    def visible(self, screen: tuple[int, int]) -> bool:
        """Whether some of the node's area is on a screen of this size (device pixels)."""
        b = self.bounds
        return b.right > max(b.left, 0) and b.bottom > max(b.top, 0) and b.left < screen[0] and b.top < screen[1]

    @property
    def label(self) -> str:
        """The text, else the description, with runs of white space (newlines too) as one space."""
        return _SPACES.sub(" ", self.text).strip() or _SPACES.sub(" ", self.desc).strip()


def parse_hierarchy(xml: str | bytes) -> list[UiNode]:
    """Every node of the dump in document order. Text printed around the XML is skipped; a DTD
    (which could expand entities) or anything that is not a hierarchy is a UiParseError."""
    data = xml.encode() if isinstance(xml, str) else xml
    start = min((i for i in (data.find(b"<?xml"), data.find(b"<hierarchy")) if i != -1), default=-1)
    if start == -1:
        raise UiParseError(f"no UI hierarchy in the dump ({data[:80]!r})")
    end = data.rfind(b"</hierarchy>")  # `uiautomator dump /dev/tty` prints a line after the XML
    data = data[start : end + len(b"</hierarchy>")] if end > start else data[start:]
    if b"<!DOCTYPE" in data or b"<!ENTITY" in data:
        raise UiParseError("the dump declares a DTD or entities, which a uiautomator dump never does")
    try:
        root = ET.fromstring(data)
    except ET.ParseError as exc:
        raise UiParseError(f"the dump is not well-formed XML: {exc}") from exc
    if root.tag != "hierarchy":
        raise UiParseError(f"the dump's root is <{root.tag}>, not <hierarchy>")
    nodes: list[UiNode] = []
    stack: list[tuple[ET.Element, int, int | None, int | None]] = [
        (child, 0, None, None) for child in reversed(list(root))
    ]
    while stack:
        element, depth, parent, layer = stack.pop()
        if element.tag == "window" and element.get("layer", "").lstrip("-").isdigit():
            layer = int(element.get("layer", "0"))
        if element.tag == "node":
            nodes.append(_node(element.attrib, len(nodes), depth, parent, layer))
            parent = len(nodes) - 1
        stack.extend((child, depth + 1, parent, layer) for child in reversed(list(element)))
    return nodes


def _node(attrs: dict[str, str], index: int, depth: int, parent: int | None, layer: int | None = None) -> UiNode:
    full_class = attrs.get("class", "")
    full_id = attrs.get("resource-id", "")
    flags = tuple(flag for flag in FLAGS if attrs.get(flag) == "true")
    if attrs.get("enabled") == "false":
        flags += ("disabled",)
    match = _BOUNDS.fullmatch(attrs.get("bounds", "").strip())
    bounds = Bounds(*(int(v) for v in match.groups())) if match else Bounds(0, 0, 0, 0)
    return UiNode(
        index=index, cls=full_class.rsplit(".", 1)[-1], text=attrs.get("text", ""),
        resource_id=full_id.split(":id/", 1)[-1], desc=attrs.get("content-desc", ""),
        package=attrs.get("package", ""), flags=flags, bounds=bounds, depth=depth,
        full_class=full_class, full_id=full_id, parent=parent, layer=layer,
    )  # fmt: skip


def is_relevant(node: UiNode) -> bool:
    """Interactive (clickable, checkable, scrollable, editable) or carrying text or a description."""
    interactive = {"clickable", "long-clickable", "checkable", "scrollable"} & set(node.flags)
    return bool(interactive or node.text.strip() or node.desc.strip() or node.cls in _EDITABLE)


def tappable(node: UiNode) -> bool:
    return bool(_TAPPABLE & set(node.flags)) or node.cls in _EDITABLE


def element(node: UiNode, scale: float, *, bounds: bool = True, hidden: bool = False) -> dict[str, Any]:
    """A node as it is, in image space; empty fields are left out (the form of `all=True` and `find`)."""
    out: dict[str, Any] = {"index": node.index, "class": node.cls}
    for key, value in (("text", node.text), ("id", node.resource_id), ("desc", node.desc)):
        if value:
            out[key] = value
    if node.flags:
        out["flags"] = list(node.flags)
    if hidden:
        out["hidden"] = True
    _geometry(out, node, scale, bounds)
    return out


def _geometry(out: dict[str, Any], node: UiNode, scale: float, bounds: bool, free: Bounds | None = None) -> None:
    """`center`: the middle of the node, or of `free` (its part nothing covers); `bounds` with `bounds`."""
    if bounds:
        b = node.bounds.to_image(scale)
        out["bounds"] = [b.left, b.top, b.right, b.bottom]
    cx, cy = (free or node.bounds).center
    out["center"] = [round(cx / scale), round(cy / scale)]


@dataclass(frozen=True, slots=True)
class Listed:
    """One entry of the default listing: a node and the label it shows (its own and what it carries)."""

    node: UiNode
    label: str


def listing(nodes: Sequence[UiNode], screen: tuple[int, int]) -> list[Listed]:
    """The visible, relevant nodes as an agent should see them (see the module docstring), in document order."""
    shown = [n.visible(screen) for n in nodes]
    owner: dict[int, int] = {}
    """text node -> the nearest visible tappable node around it, which shows its text instead."""
    carried: dict[int, list[str]] = {}
    tappable_inside: set[int] = set()
    for node in nodes:
        if not shown[node.index]:
            continue
        up = node.parent
        while up is not None and not (shown[up] and tappable(nodes[up])):
            up = nodes[up].parent
        if up is None:
            continue
        if tappable(node):
            tappable_inside.add(up)
        elif node.label and "scrollable" not in node.flags:
            texts = carried.setdefault(up, [nodes[up].label] if nodes[up].label else [])
            if len(texts) < CARRIED_TEXTS and node.label not in texts:
                texts.append(node.label)
                owner[node.index] = up
            elif node.label in texts:
                owner[node.index] = up
    out: list[Listed] = []
    seen: set[tuple[Bounds, str]] = set()
    for node in nodes:
        if not shown[node.index] or node.index in owner or not is_relevant(node):
            continue
        texts = carried.get(node.index) or ([node.label] if node.label else [])
        if not texts and node.index in tappable_inside:
            continue  # a label-less wrapper: its clickable content is listed
        label = " | ".join(texts)
        if (node.bounds, label) in seen:
            continue  # the same thing in the same place, nested: listed once, the outermost
        seen.add((node.bounds, label))
        out.append(Listed(node, " | ".join(_cut(text) for text in texts)))
    return out


def _cut(text: str) -> str:
    return text if len(text) <= MAX_TEXT else text[: MAX_TEXT - 1] + "…"


def listed_element(item: Listed, scale: float, *, bounds: bool = False, free: Bounds | None = None) -> dict[str, Any]:
    """The compact form of a listing entry: index, class (unless generic), text, id (only when there is no
    text), short flags, and the centre (of its `free` part when something covers the rest; and the bounds
    with `bounds`) in image space."""
    node = item.node
    out: dict[str, Any] = {"index": node.index}
    if node.cls not in _GENERIC and node.full_class.startswith(_FRAMEWORK):
        out["class"] = node.cls
    if item.label:
        out["text"] = item.label
    elif node.resource_id:
        out["id"] = node.resource_id
    flags = [LISTED_FLAGS[f] for f in node.flags if f in LISTED_FLAGS]
    if "tap" in flags:  # the common case goes unsaid; what can be tapped can almost always be long-pressed
        flags = [f for f in flags if f not in ("tap", "long")]
    elif not tappable(node) and "scroll" not in flags:
        flags.insert(0, "static")
    if flags:
        out["flags"] = " ".join(flags)
    _geometry(out, node, scale, bounds, free)
    return out


def find(
    nodes: Sequence[UiNode], *, text: str | None = None, resource_id: str | None = None, desc: str | None = None,
    class_name: str | None = None, regex: bool = False,
) -> list[UiNode]:  # fmt: skip
    """The nodes matching every given criterion: case-insensitive substrings, or regexes with `regex`.
    `resource_id` and `class_name` match the short or the full name."""
    fields: dict[str, tuple[str, Callable[[UiNode], tuple[str, ...]]]] = {}
    for name, value, values in (
        ("text", text, lambda n: (n.text,)),
        ("resource_id", resource_id, lambda n: (n.resource_id, n.full_id)),
        ("desc", desc, lambda n: (n.desc,)),
        ("class_name", class_name, lambda n: (n.cls, n.full_class)),
    ):
        if value is not None:
            fields[name] = (value, values)
    if not fields:
        raise ValueError("give at least one of text, resource_id, desc, class_name")
    tests = [(_matcher(name, value, regex), values) for name, (value, values) in fields.items()]
    return [n for n in nodes if all(any(test(v) for v in values(n)) for test, values in tests)]


def prefer_visible(nodes: Sequence[UiNode], found: Sequence[UiNode], screen: tuple[int, int]) -> list[UiNode]:
    """`found` with each hidden node replaced by the nearest visible node around it that carries the same
    text or description (WhatsApp's tab label at [0,0][0,0] -> its tab), or dropped when there is none;
    in document order, each node once."""
    chosen: dict[int, UiNode] = {}
    for node in found:
        if node.visible(screen):
            chosen[node.index] = node
            continue
        names = {v.casefold() for v in (node.text.strip(), node.desc.strip()) if v}
        up = node.parent
        while up is not None:
            candidate = nodes[up]
            if candidate.visible(screen) and names & {
                v.casefold() for v in (candidate.text.strip(), candidate.desc.strip()) if v
            }:
                chosen[up] = candidate
                break
            up = candidate.parent
    return [chosen[i] for i in sorted(chosen)]


def _matcher(name: str, value: str, regex: bool) -> Callable[[str], bool]:
    if regex:
        try:
            pattern = UserPattern(value, IGNORECASE)
        except ValueError as exc:
            raise ValueError(f"{name}: {exc}") from exc
        budget = Budget()
        return lambda candidate: pattern.search(candidate, budget) is not None
    needle = value.casefold()
    return lambda candidate: needle in candidate.casefold()
