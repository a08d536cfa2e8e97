"""A UI listing as an agent gets it: what is on top first, what is covered left out and counted, within a
token budget (DEFAULT_MAX_TOKENS unless asked otherwise) whose cut the answer states. Pure functions.

Order: the elements of what is drawn above something listed (a dialog's window, a dialog or a bottom sheet
laid over the app, a floating button), the topmost first and each in document order, then the rest in
document order; a budget cuts from the end, so a modal's title and buttons are the last thing it drops.
An element that something drawn above covers entirely is left out of the listing (counted in `covered`
with what covers it; `all=true` lists it with `covered_by`); one covered in part is listed with its centre in
the largest part left free, where a tap by element lands (lookout.device.layers).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import orjson

from lookout.core.budget import fit, self_counted, within
from lookout.core.tokens import count_tokens
from lookout.device.layers import Stack
from lookout.device.reach import describe_hit
from lookout.device.ui_tree import Listed, UiNode, element, listed_element, listing

DEFAULT_MAX_TOKENS = 4000
"""The budget of a listing that names none (as a page snapshot's): 600 cells of a grid cost about 9,000."""
GET_MORE = ("find (text, resource_id, desc, class_name) reaches any element; or a higher max_tokens "
            "(up to 1000000)")  # fmt: skip
MAX_COVERS_NAMED = 3


def render_elements(
    nodes: Sequence[UiNode], scale: float, *, screen: tuple[int, int], all: bool = False,
    max_tokens: int | None = None, header: dict[str, Any] | None = None, bounds: bool = False,
) -> dict[str, Any]:  # fmt: skip
    """`header`, then {covered?, cut?, elements, total, matched, shown, tokens}: the listing in the order above
    (or every node in document order, hidden ones flagged and covered ones named, with `all`), within
    `max_tokens` (DEFAULT_MAX_TOKENS when None). `tokens` is the o200k token count of the returned object
    itself, serialized as compact JSON."""
    stack = Stack(nodes, screen)
    extra: dict[str, Any] = {}
    if all:
        elements = as_they_are(nodes, nodes, scale, screen, bounds=bounds, stack=stack)
    else:
        elements, covered = _ordered(nodes, stack, scale, bounds)
        if covered:
            extra["covered"] = _covered(nodes, covered, screen)
    return budgeted(elements, len(nodes), DEFAULT_MAX_TOKENS if max_tokens is None else max_tokens,
                    {**(header or {}), **extra})  # fmt: skip


def as_they_are(nodes: Sequence[UiNode], chosen: Sequence[UiNode], scale: float, screen: tuple[int, int], *,
                bounds: bool, stack: Stack | None = None) -> list[dict[str, Any]]:  # fmt: skip
    """`chosen` nodes as they are (the form of `all=true` and `find`): hidden ones flagged, and those that
    something drawn above covers entirely with `covered_by` (its index)."""
    stack = stack or Stack(nodes, screen)
    out = []
    for node in chosen:
        entry = element(node, scale, bounds=bounds, hidden=not node.visible(screen))
        free = stack.free_part(node) if node.visible(screen) else None
        if free is not None and free.part is None and free.cover is not None:
            entry["covered_by"] = free.cover.index
        out.append(entry)
    return out


def uncovered(nodes: Sequence[UiNode], screen: tuple[int, int]) -> list[Listed]:
    """The listing's entries that nothing covers entirely, in document order (what marks are drawn for)."""
    stack = Stack(nodes, screen)
    return [item for item in listing(nodes, screen) if stack.free_part(item.node).part is not None]


def _ordered(nodes: Sequence[UiNode], stack: Stack, scale: float,
             bounds: bool) -> tuple[list[dict[str, Any]], dict[int, list[int]]]:  # fmt: skip
    """The listed elements, on-top groups first, and the covered ones: cover index -> covered indices."""
    entries = []
    covered: dict[int, list[int]] = {}
    above: set[int] = set()
    for item in listing(nodes, stack.screen):
        free = stack.free_part(item.node)
        above.update(c.index for c in free.by)
        if free.part is None:
            if free.cover is not None:
                covered.setdefault(free.cover.index, []).append(item.node.index)
            continue
        part = free.part if free.cover is not None else None
        entries.append((item.node, listed_element(item, scale, bounds=bounds, free=part)))

    def group(node: UiNode) -> tuple[int, int]:
        """The outermost node around `node` (or itself) that is drawn above something listed, by its place."""
        found: UiNode | None = None
        at: int | None = node.index
        while at is not None:
            if at in above:
                found = nodes[at]
            at = nodes[at].parent
        return (-1, -1) if found is None else stack.key(found)

    ranked = sorted(entries, key=lambda entry: group(entry[0]), reverse=True)  # stable: document order inside
    return [out for _, out in ranked], covered


def _covered(nodes: Sequence[UiNode], covered: dict[int, list[int]], screen: tuple[int, int]) -> dict[str, Any]:
    """How many listed elements are covered entirely, by what (the largest covers named), and how to see them."""
    named = sorted(covered, key=lambda i: len(covered[i]), reverse=True)[:MAX_COVERS_NAMED]
    by = [{**describe_hit(nodes, nodes[i], screen), "covers": len(covered[i])} for i in named]
    return {"elements": sum(map(len, covered.values())), "by": by,
            "note": "drawn below these, not listed and not tappable; all=true lists them with covered_by"}  # fmt: skip


def budgeted(elements: list[dict[str, Any]], total: int, max_tokens: int,
             header: dict[str, Any]) -> dict[str, Any]:  # fmt: skip
    """The elements from the top that fit `max_tokens`, with the counts, what was cut and how to get it, and
    the answer's own token count."""

    def build(count: int) -> dict[str, Any]:
        out = dict(header)
        if count < len(elements):
            out["cut"] = {"reason": "max_tokens", "omitted": len(elements) - count, "max_tokens": max_tokens,
                          "first_omitted": elements[count]["index"], "get_more": GET_MORE}  # fmt: skip
        out.update(elements=elements[:count], total=total, matched=len(elements), shown=count)
        return out

    def measure(count: int) -> tuple[dict[str, Any], int]:
        out = build(count)
        return out, self_counted(lambda tokens: _dumps({**out, "tokens": tokens}))[1]

    costs = (count_tokens(_dumps(e)) + 1 for e in elements)
    fitted = fit(measure, max_tokens, len(elements), lambda: within(costs, max_tokens - measure(0)[1]))
    return {**fitted.value, "tokens": fitted.tokens}


def _dumps(value: Any) -> str:
    return orjson.dumps(value).decode()
