"""What is drawn above what on a device's screen, and so what a finger can still reach: pure functions over a
dump's nodes in device pixels.

Windows first. Each root node of a dump is a window. Where the dump gives window layers (`uiautomator dump
--windows`), the higher layer is on top; otherwise a window smaller than the screen (a dialog, a popup, a
sheet, a bar, the keyboard) is above a full-screen one (an activity), a system UI window above an app's, the
window holding the focused node above one that does not, and otherwise the later window in the dump is on top. A window of the same app as a window below it (its dialog,
its popup, its sheet), over it and no larger, takes every touch on that window, outside its own bounds too (a touch outside a modal
dialog goes to the dialog, which most often closes); any other window takes the touches inside its bounds.

Inside a window, the dump's order is not the drawing order (Android sorts a view's children by where they
are for accessibility), so only what the dump names an overlay covers: a node whose class or resource id
says dialog, bottom sheet, popup, drop-down, snackbar, scrim or floating action button. It covers, where it
lies, every node of its window outside it, except those inside an overlay that comes after it.

`free_part` is what stays of an element once every cover is taken out: the largest rectangle of it, or None
when none is MIN_REACH across and down.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from lookout.device.ui_tree import Bounds, UiNode

MIN_REACH = 10
"""Device pixels of an element that must be free, across and down, for a tap on it."""
OVERLAY_CLASS = re.compile(r"Dialog|BottomSheet|Popup|DropDown|Snackbar|FloatingActionButton")
OVERLAY_ID = re.compile(r"(?:^|[_.])(?:dialog|bottom_?sheet|sheet|popup|dropdown|snackbar|scrim|touch_outside|fab)"
                        r"(?:$|[_.])", re.IGNORECASE)  # fmt: skip
"""Class names and resource ids that say a view is laid over the rest of its window."""
SYSTEM_UI = "com.android.systemui"
MAX_PIECES = 64
"""The free part of an element is tracked as at most this many rectangles (bounded work)."""


@dataclass(frozen=True, slots=True)
class Free:
    """What stays of an element: `part` (None: covered entirely; all of it when nothing covers it), and the
    node that covers the most of it."""

    part: Bounds | None
    cover: UiNode | None
    by: tuple[UiNode, ...] = ()
    """Every node that takes some of it."""


class Stack:
    """The windows of one dump in drawing order, and the nodes that cover others."""

    def __init__(self, nodes: Sequence[UiNode], screen: tuple[int, int]) -> None:
        self.nodes = nodes
        self.screen = screen
        self.window = [0] * len(nodes)
        """Each node's window: the index of its root node."""
        self.overlay = [-1] * len(nodes)
        """Each node's innermost overlay (itself or around it), -1 for none."""
        self.end = list(range(1, len(nodes) + 1))
        """Each node's subtree is nodes[index:end]."""
        for node in nodes:
            up = node.parent
            self.window[node.index] = node.index if up is None else self.window[up]
            inherited = -1 if up is None else self.overlay[up]
            self.overlay[node.index] = node.index if up is not None and is_overlay(node) else inherited
        for node in reversed(nodes):
            if node.parent is not None:
                self.end[node.parent] = max(self.end[node.parent], self.end[node.index])
        self.focused = {self.window[n.index] for n in nodes if "focused" in n.flags}
        """The windows holding the focused node (the one input goes to)."""
        roots = [n for n in nodes if n.parent is None]
        self.rank = {root.index: rank for rank, root in enumerate(sorted(roots, key=self._window_key))}
        self.covers = [
            n for n in nodes if n.visible(screen) and (self.overlay[n.index] == n.index or self.rank.get(n.index, 0))
        ]

    def _window_key(self, root: UiNode) -> tuple[int, int, int, int, int]:
        b, (width, height) = root.bounds, self.screen
        full = b.left <= 0 and b.top <= 0 and b.right >= width and b.bottom >= height
        focused = root.index in self.focused
        return (root.layer or 0, int(root.package == SYSTEM_UI), int(not full), int(focused), root.index)

    def key(self, node: UiNode) -> tuple[int, int]:
        """The node's place in the drawing order as far as it is known: later is on top."""
        return self.rank[self.window[node.index]], node.index

    def modal(self, upper: UiNode, lower: UiNode) -> bool:
        """Whether window `upper` takes every touch on window `lower` (both roots, `upper` above): the same
        app's, over it, and no larger."""
        same = upper.package == lower.package and upper.package != SYSTEM_UI
        return same and _overlap(upper.bounds, lower.bounds) and _area(upper.bounds) <= _area(lower.bounds)

    def covering(self, cover: UiNode, node: UiNode) -> Bounds | None:
        """The area in which `cover` (one of `covers`) covers `node`, or None when it does not."""
        window, other = self.window[node.index], self.window[cover.index]
        if window != other:
            if cover.parent is not None or self.rank[other] < self.rank[window]:
                return None
            return Bounds(0, 0, *self.screen) if self.modal(cover, self.nodes[window]) else cover.bounds
        if node.index <= cover.index < self.end[node.index] and node.index != cover.index:
            return cover.bounds  # an overlay inside the node (a sheet inside the list's frame): the node is under it
        if cover.index <= node.index < self.end[cover.index] or self.overlay[node.index] > cover.index:
            return None  # part of it, or of an overlay above it
        return cover.bounds

    def free_part(self, node: UiNode, part: Bounds | None = None) -> Free:
        """What stays of `node` (or of `part` of it) once everything drawn above it is taken out."""
        start = part or _clip(node.bounds, self.screen)
        pieces = [start]
        most: tuple[int, UiNode] | None = None
        by: list[UiNode] = []
        for cover in self.covers:
            area = self.covering(cover, node)
            if area is None or not _overlap(area, pieces[0] if len(pieces) == 1 else _hull(pieces)):
                continue
            before = sum(_area(p) for p in pieces)
            pieces = [rest for p in pieces for rest in _minus(p, area)][:MAX_PIECES]
            taken = before - sum(_area(p) for p in pieces)
            if taken > 0:
                by.append(cover)
            if taken > 0 and (most is None or taken > most[0]):
                most = (taken, cover)
            if not pieces:
                break
        if most is None:
            return Free(start, None)  # nothing above it: all of it, however small
        reachable = [p for p in pieces if p.right - p.left >= MIN_REACH and p.bottom - p.top >= MIN_REACH]
        best = max(reachable, key=_area, default=None)
        return Free(best, None if most is None else most[1], tuple(by))

    def cover_at(self, node: UiNode, x: int, y: int) -> UiNode | None:
        """The topmost node drawn above `node` that covers the point (x, y), or None."""
        found = [c for c in self.covers if (area := self.covering(c, node)) is not None and area.contains(x, y)]
        return max(found, key=self.key, default=None)


def _clip(b: Bounds, screen: tuple[int, int]) -> Bounds:
    return Bounds(max(b.left, 0), max(b.top, 0), min(b.right, screen[0]), min(b.bottom, screen[1]))


def _area(b: Bounds) -> int:
    return max(b.right - b.left, 0) * max(b.bottom - b.top, 0)


def _overlap(a: Bounds, b: Bounds) -> bool:
    return a.left < b.right and b.left < a.right and a.top < b.bottom and b.top < a.bottom


def _hull(pieces: Sequence[Bounds]) -> Bounds:
    return Bounds(min(p.left for p in pieces), min(p.top for p in pieces), max(p.right for p in pieces),
                  max(p.bottom for p in pieces))  # fmt: skip


def _minus(p: Bounds, c: Bounds) -> list[Bounds]:
    """The rectangles of `p` outside `c` (at most four)."""
    if not _overlap(p, c):
        return [p]
    out = []
    if c.top > p.top:
        out.append(Bounds(p.left, p.top, p.right, c.top))
    if c.bottom < p.bottom:
        out.append(Bounds(p.left, c.bottom, p.right, p.bottom))
    top, bottom = max(p.top, c.top), min(p.bottom, c.bottom)
    if c.left > p.left:
        out.append(Bounds(p.left, top, c.left, bottom))
    if c.right < p.right:
        out.append(Bounds(c.right, top, p.right, bottom))
    return [b for b in out if _area(b) > 0]


def is_overlay(node: UiNode) -> bool:
    """Whether the dump names the node something laid over the rest of its window."""
    return bool(OVERLAY_CLASS.search(node.cls) or OVERLAY_ID.search(node.resource_id))
