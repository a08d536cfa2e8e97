"""The UI tree of a device: `uiautomator dump` XML parsed into a compact list an agent can read and act on.

Pure functions. Every `<node>` gets an index, its position in document order, so the indices of one dump
never change. Bounds are device pixels here; `element()` gives them in an observation's image space.
"""
from __future__ import annotations

import re
import xml.etree.ElementTree as ET
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import orjson

from app.core.patterns import IGNORECASE, Budget, UserPattern
from app.core.tokens import count_tokens

FLAGS = ("clickable", "long-clickable", "checkable", "checked", "focusable", "focused", "scrollable", "selected",
         "password")  # fmt: skip
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
    stack = [(child, 0) for child in reversed(list(root))]
    while stack:
        element, depth = stack.pop()
        if element.tag == "node":
            nodes.append(_node(element.attrib, len(nodes), depth))
        stack.extend((child, depth + 1) for child in reversed(list(element)))
    return nodes


def _node(attrs: dict[str, str], index: int, depth: int) -> UiNode:
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
        full_class=full_class, full_id=full_id,
    )  # fmt: skip


def is_relevant(node: UiNode) -> bool:
    """Interactive (clickable, checkable, scrollable, editable) or carrying text or a description."""
    interactive = {"clickable", "long-clickable", "checkable", "scrollable"} & set(node.flags)
    return bool(interactive or node.text.strip() or node.desc.strip() or node.cls in _EDITABLE)


def element(node: UiNode, scale: float) -> dict[str, Any]:
    """The compact form of a node, in image space; empty fields are left out."""
    out: dict[str, Any] = {"index": node.index, "class": node.cls}
    for key, value in (("text", node.text), ("id", node.resource_id), ("desc", node.desc)):
        if value:
            out[key] = value
    if node.flags:
        out["flags"] = list(node.flags)
    b = node.bounds.to_image(scale)
    out["bounds"] = [b.left, b.top, b.right, b.bottom]
    cx, cy = node.bounds.center
    out["center"] = [round(cx / scale), round(cy / scale)]
    return out


def render_elements(
    nodes: Sequence[UiNode], scale: float, *, all: bool = False, max_tokens: int | None = None,
    header: dict[str, Any] | None = None,
) -> dict[str, Any]:  # fmt: skip
    """`header`, then {elements, total, matched, shown, cut?, tokens}: the relevant nodes (or all), in document
    order, within `max_tokens` (the elements from the top that fit; `cut` says how many were left out).
    `tokens` is the o200k token count of the returned object itself, serialized as compact JSON."""
    matched = [n for n in nodes if all or is_relevant(n)]
    elements = [element(n, scale) for n in matched]

    def build(count: int) -> dict[str, Any]:
        out = {**(header or {}), "elements": elements[:count], "total": len(nodes), "matched": len(matched),
               "shown": count}  # fmt: skip
        if count < len(elements):
            out["cut"] = {"reason": "max_tokens", "omitted": len(elements) - count, "max_tokens": max_tokens}
        return out

    count = len(elements)
    if max_tokens is not None and _self_counted(build(count))["tokens"] > max_tokens:
        costs = [count_tokens(_dumps(e)) + 1 for e in elements]
        budget = max_tokens - _self_counted(build(0))["tokens"]
        count = 0
        while count < len(elements) and costs[count] <= budget:
            budget -= costs[count]
            count += 1
        while count and _self_counted(build(count))["tokens"] > max_tokens:
            count -= 1
    return _self_counted(build(count))


def _self_counted(out: dict[str, Any]) -> dict[str, Any]:
    """`out` with `tokens` set to the token count of `out` serialized with it."""
    tokens = 0
    for _ in range(4):  # the count only moves when its number of digits does
        counted = count_tokens(_dumps({**out, "tokens": tokens}))
        if counted == tokens:
            break
        tokens = counted
    return {**out, "tokens": tokens}


def _dumps(value: Any) -> str:
    return orjson.dumps(value).decode()


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
