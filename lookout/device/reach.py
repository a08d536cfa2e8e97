"""Where a finger can act on a screen: the area outside the system bars, the point of an element to tap, the
span of a swipe by direction, and what an action at a point hits. Pure functions over device pixels.

The system bars come from `dumpsys window` (the insets sources of the status bar, navigation bar and their
gesture areas) and from the dump (`android:id/statusBarBackground`, `navigationBarBackground`). A tap on an
element lands in the middle of its part inside the screen and outside the known bars; an element with less
than MIN_REACH pixels of it there, across or down, is not tapped. A swipe by direction runs inside the area
outside the bars (and, at an edge where no bar is known, outside DEFAULT_TOP or DEFAULT_BOTTOM of the screen): a swipe that
starts in the navigation bar is the Home gesture on a phone with gesture navigation.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from lookout.device.ui_tree import Bounds, UiNode

MIN_REACH = 10
"""Device pixels of an element that must be reachable, across and down, for a tap on it."""
DEFAULT_TOP = 0.05
DEFAULT_BOTTOM = 0.08
"""Shares of the screen's height a swipe by direction keeps clear of when no bar is known (a status bar and
a gesture navigation area are about that tall on phones)."""
SWIPE_MARGIN = 0.02
"""A swipe by direction also keeps this share of the free area clear at its ends."""
BAR_IDS = ("android:id/statusBarBackground", "android:id/navigationBarBackground")
MAX_LABEL = 80


def safe_area(width: int, height: int, bars: Iterable[Bounds]) -> Bounds:
    """The screen less every bar along one of its edges (a bar is a rectangle that spans most of an edge)."""
    left, top, right, bottom = 0, 0, width, height
    for bar in bars:
        w, h = bar.right - bar.left, bar.bottom - bar.top
        if w <= 0 or h <= 0:
            continue
        if w >= width // 2 and h < height // 2:
            if bar.top <= 0:
                top = max(top, bar.bottom)
            elif bar.bottom >= height:
                bottom = min(bottom, bar.top)
        elif h >= height // 2 and w < width // 2:
            if bar.left <= 0:
                left = max(left, bar.right)
            elif bar.right >= width:
                right = min(right, bar.left)
    return Bounds(left, top, right, bottom)


def dump_bars(nodes: Sequence[UiNode]) -> list[Bounds]:
    """The system bars an app's dump shows (their background views)."""
    return [n.bounds for n in nodes if n.full_id in BAR_IDS]


def reachable(bounds: Bounds, area: Bounds) -> Bounds | None:
    """The part of `bounds` inside `area`, or None when it is less than MIN_REACH across or down."""
    part = Bounds(max(bounds.left, area.left), max(bounds.top, area.top), min(bounds.right, area.right),
                  min(bounds.bottom, area.bottom))  # fmt: skip
    if part.right - part.left < MIN_REACH or part.bottom - part.top < MIN_REACH:
        return None
    return part


def direction_swipe(width: int, height: int, bars: Sequence[Bounds], direction: str,
                    distance: float) -> tuple[tuple[int, int], tuple[int, int]]:  # fmt: skip
    """A swipe through the middle of the free area in which the finger moves `direction` over `distance` of
    that area, both ends inside it."""
    area = safe_area(width, height, bars)
    top = area.top if area.top > 0 else round(height * DEFAULT_TOP)
    bottom = area.bottom if area.bottom < height else round(height * (1 - DEFAULT_BOTTOM))
    area = Bounds(area.left, top, area.right, bottom)
    w, h = area.right - area.left, area.bottom - area.top
    mx, my = round(w * SWIPE_MARGIN), round(h * SWIPE_MARGIN)
    lo_x, hi_x, lo_y, hi_y = area.left + mx, area.right - 1 - mx, area.top + my, area.bottom - 1 - my
    cx, cy = (lo_x + hi_x) // 2, (lo_y + hi_y) // 2
    dx, dy = {"up": (0, -1), "down": (0, 1), "left": (-1, 0), "right": (1, 0)}[direction]
    half_x, half_y = round((hi_x - lo_x) * distance / 2), round((hi_y - lo_y) * distance / 2)
    start = (cx - dx * half_x, cy - dy * half_y)
    end = (cx + dx * half_x, cy + dy * half_y)
    return start, end


def node_at(nodes: Sequence[UiNode], x: int, y: int, screen: tuple[int, int]) -> UiNode | None:
    """The element a tap at (x, y) hits: the deepest visible node there that can be tapped, else the deepest
    visible node there."""
    here = [n for n in nodes if n.visible(screen) and n.bounds.contains(x, y)]
    tappable = [n for n in here if {"clickable", "long-clickable", "checkable"} & set(n.flags)]
    found = max(tappable or here, key=lambda n: n.depth, default=None)
    return found


def describe_hit(nodes: Sequence[UiNode], node: UiNode, screen: tuple[int, int]) -> dict[str, str | int]:
    """What names a node for the one who tapped it: index and class, its text or description, else the
    text of the visible nodes inside it, and its resource id."""
    out: dict[str, str | int] = {"index": node.index, "class": node.cls}
    if node.label:
        out["text"] = node.label
    else:
        inside = [n.label for n in _descendants(nodes, node) if n.label and n.visible(screen)]
        if inside:
            joined = " | ".join(dict.fromkeys(inside))
            out["inner_text"] = joined if len(joined) <= MAX_LABEL else joined[: MAX_LABEL - 1] + "…"
    if node.resource_id:
        out["id"] = node.resource_id
    return out


def _descendants(nodes: Sequence[UiNode], node: UiNode) -> list[UiNode]:
    """The nodes inside `node` (they follow it in document order, deeper than it)."""
    out = []
    for other in nodes[node.index + 1 :]:
        if other.depth <= node.depth:
            break
        out.append(other)
    return out
