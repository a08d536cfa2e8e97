"""The budgeted page snapshot: which nodes of the accessibility tree an agent sees, and how, within limits.

Pure functions over the parsed tree (lookout.browser.aria). Unnamed wrappers (`generic` without a name or text)
are hoisted away, and so is a label's text beside the control it names. Each node is graded by its distance
to the viewport, then scored by its role (text that carries meaning kept in). Every control on screen is taken
first (those of many rows alike, a table's, after the others), then the other nodes by score, each with the
ancestors that place it, until `max_elements` or `max_tokens` would be passed; the element limit never cuts a
control on screen (only the token budget can), so `included_elements` can exceed `max_elements`. Nothing is
cut silently: a node whose descendants were left out says how many and of what (`- navigation "Main"
[ref=e7]: 48 links folded`), and the header says what was cut and why. `tokens` is the o200k count of the
whole text, header included, and never exceeds `max_tokens`.

Lines (lookout.browser.snapshot_lines) get two spaces of indent per level. A container that is only structure
(no name, text or properties, not interactive) whose children are all shown has no ref (`- listitem`: a ref
costs about 7 tokens a line); one with folded children keeps it for `expand`. A fold is `: N role(s), ...
folded` on the node (none of its children shown) or a last child line `- … N more folded: ...`. Folding never
alters a shown line: a node's inline children with text of its own among them (a paragraph's text, code and
links) are one unit with it, shown or folded together, never a sentence with a hole in it.
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field, replace

from lookout.browser.aria import AriaNode, Box, placed_box
from lookout.browser.snapshot_header import header_cost, header_lines, with_token_line
from lookout.browser.snapshot_lines import INLINE, merged, plural, render_line
from lookout.core.budget import fit
from lookout.core.tokens import count_tokens

ROLE_PRIORITY = {
    "button": 100, "textbox": 95, "searchbox": 95, "checkbox": 90, "radio": 90, "switch": 90, "combobox": 85,
    "listbox": 85, "slider": 85, "spinbutton": 85, "link": 80, "tab": 75, "menuitem": 70,
    "menuitemcheckbox": 70, "menuitemradio": 70, "option": 70, "navigation": 60, "menu": 60, "tablist": 55,
    "form": 50, "dialog": 50, "alertdialog": 50,
    # text that carries meaning (the seed's interactive-only mode lost it): kept, below the controls
    "alert": 98, "heading": 88, "status": 80, "text": 45, "paragraph": 45, "cell": 42, "listitem": 42,
}  # fmt: skip
DEFAULT_PRIORITY = 40
VIEWPORT_GRADE = 50.0
GRADE_WEIGHT = 10
"""A grade step (15 at least) times this outweighs any difference of role (100 at most): viewport first."""
INTERACTIVE = frozenset(role for role, score in ROLE_PRIORITY.items() if score >= 70 and role not in (
    "alert", "heading", "status"))  # fmt: skip
SHORT_TEXT = 80
"""Text nodes up to this many characters stay in interactive_only views (prices, errors, labels)."""
WRAPPERS = frozenset({"generic", "none", "presentation"})
FOLD_LINE_TOKENS = 24
CONTEXT_FOLD = 8
"""A fold of at most this many nodes quotes up to three of its texts."""
CONTEXT_CHARS = 40
MANY_ROWS = 5
"""Table rows under one parent from which on, their controls on screen come after the others."""


@dataclass(frozen=True, slots=True)
class SnapshotOptions:
    max_elements: int = 150
    max_tokens: int = 4000
    viewport_only: bool = False
    interactive_only: bool = False
    full: bool = False
    """No limits at all (the escape hatch)."""
    include_history: bool = True
    """The `# Navigation` breadcrumb of the pages visited before."""


@dataclass(frozen=True, slots=True)
class PageContext:
    url: str
    title: str
    viewport: tuple[int, int] = (1280, 720)
    history: tuple[str, ...] = ()
    """Titles of the pages visited before this one, oldest first (the breadcrumb)."""
    note: str | None = None
    """A header line of the caller's (why a full snapshot was sent instead of a diff)."""
    modal: str | None = None
    """The accessible name of an open modal dialog ("" for one without a name), None when none is open."""
    outcome: tuple[str, ...] = ()
    """What the action this snapshot follows said (`message: Saved.`, `field_error: Price: Enter a number.`):
    a header line each, so it is in the snapshot whatever the budget leaves out."""


@dataclass(frozen=True, slots=True)
class Snapshot:
    text: str
    total_elements: int
    included_elements: int
    truncated: bool
    reason: str | None
    tokens: int
    refs: tuple[str, ...]
    """The refs shown, in document order."""
    by_position: bool = True
    """The nodes' boxes could have changed it: only a read with boxes gives this view (see `_any_order`)."""


@dataclass(slots=True)
class _Item:
    node: AriaNode
    parent: _Item | None
    order: int
    score: float = 0.0
    grade: float = 0.0
    """VIEWPORT_GRADE in the viewport, less the further away it is."""
    inline: list[_Item] = field(default_factory=list)
    """Its inline children, shown or folded with it as one unit (a paragraph's text, code and links)."""
    in_unit: bool = False
    """It is one of its parent's `inline` children."""
    many: bool = False
    """In one of many table rows: on screen, after the page's other controls."""
    framed: bool = False  # inside an iframe: placed by the frame (its box is in the frame's own viewport)
    _line: str | None = None
    _cost: int | None = None
    children: list[_Item] = field(default_factory=list)

    @property
    def line(self) -> str:
        """Its line without indent (rendered on first use: most lines of a big page are never shown)."""
        if self._line is None:
            self._line = render_line(self.node)
        return self._line

    @property
    def cost(self) -> int:
        """The tokens of its line (counted on first use: most lines of a big page never need it); a container
        that is only structure without its ref, as it is shown once its children are."""
        if self._cost is None:
            line, ref = self.line, self.node.ref
            if ref is not None and _structural(self.node):
                line = line.replace(f" [ref={ref}]", "", 1)
            self._cost = count_tokens(line) + 1
        return self._cost


def render(root: AriaNode, options: SnapshotOptions, ctx: PageContext) -> Snapshot:
    """The snapshot of the tree under `root` within the options' limits. While a modal dialog is open,
    only the dialog is shown and the rest of the page is one header line."""
    dialog = _modal(root, ctx.modal)
    if dialog is not None:
        behind = len(_items(root, ctx)) - len(_items(AriaNode("document", children=[dialog]), ctx))
        name = json.dumps(dialog.name, ensure_ascii=False) if dialog.name else "(unnamed)"
        note = f"Modal {dialog.role} {name} is open: the rest of the page ({behind} elements) is behind it"
        root, ctx = AriaNode("document", children=[dialog]), replace(ctx, note=note, modal=None)
    items = _items(root, ctx)
    if not options.include_history:
        ctx = replace(ctx, history=())
    if options.full:
        return replace(_finish(items, set(map(id, items)), ctx, options, None, len(items)), by_position=False)
    wanted = [item for item in items if _wanted(item, options)]
    chosen, reason = _choose(wanted, options, ctx, len(items))
    view = _finish(items, chosen, ctx, options, reason, len(items))
    return replace(view, by_position=not _any_order(items, wanted, view, options, ctx))


def _any_order(items: list[_Item], wanted: list[_Item], view: Snapshot, options: SnapshotOptions,
               ctx: PageContext) -> bool:  # fmt: skip
    """The view is the same whatever the nodes' boxes (which only order the items and filter viewport_only):
    it shows every wanted item with its ancestors and inline units, none dropped to fit, and no order of taking
    them could have cut one (they are within `max_elements`, and their lines with a fold line for each of them
    that has children, the most `_choose` can count at once, within its token budget)."""
    if options.viewport_only or len(wanted) > options.max_elements:
        return False
    closure = items if len(wanted) == len(items) else _missing(wanted, set())
    if len(closure) > options.max_elements or view.included_elements != len(closure):
        return False
    budget = options.max_tokens - header_cost(ctx, len(items)) - FOLD_LINE_TOKENS * 4
    return sum(i.cost for i in closure) + FOLD_LINE_TOKENS * sum(bool(i.children) for i in closure) <= budget


def _modal(root: AriaNode, name: str | None) -> AriaNode | None:
    """The open modal dialog's node: a dialog with that name, or the only dialog when it has none."""
    if name is None:
        return None
    dialogs = [n for n in root.walk() if n.role in ("dialog", "alertdialog")]
    named = [n for n in dialogs if n.name == name]
    return named[0] if named else dialogs[0] if len(dialogs) == 1 else None


def _items(root: AriaNode, ctx: PageContext) -> list[_Item]:
    """The nodes an agent can see, in document order, wrappers hoisted away, each with its line."""
    out: list[_Item] = []
    stack: list[tuple[AriaNode, _Item | None]] = [(root, None)]
    while stack:
        node, parent = stack.pop()
        if node.role == "document" or (node.role in WRAPPERS and not node.name and not node.text):
            stack.extend((child, parent) for child in reversed(_seen_children(node)))
            continue
        node = merged(node)
        framed = parent is not None and (parent.framed or parent.node.role == "iframe")
        item = _Item(node, parent, len(out), framed=framed)
        item.grade = _viewport_grade(None if item.framed else placed_box(node), parent, ctx)
        item.score = GRADE_WEIGHT * item.grade + ROLE_PRIORITY.get(node.role, DEFAULT_PRIORITY)
        out.append(item)
        if parent is not None:
            parent.children.append(item)
        if node.children:
            stack.extend((child, item) for child in reversed(_seen_children(node)))
    for item in out:  # parents before their children
        item.many = item.many or (item.parent is not None and item.parent.many)
        if not (children := item.children):
            continue
        roles = [child.node.role for child in children]
        many_rows = roles.count("row") >= MANY_ROWS
        for child, role in zip(children, roles, strict=True):
            child.many = many_rows and role == "row"
        if "text" in roles:
            item.inline = [child for child, role in zip(children, roles, strict=True) if role in INLINE]
            for child in item.inline:
                child.in_unit = True
    return out


def _seen_children(node: AriaNode) -> list[AriaNode]:
    """Its children but a label's text beside the control it names."""
    children = node.children
    if len(children) < 2:
        return children
    names = {child.name for child in children if child.name and child.role in INTERACTIVE}
    if not names:
        return children
    return [child for child in children if not (child.role == "text" and child.text.strip() in names)]


def _viewport_grade(box: Box | None, parent: _Item | None, ctx: PageContext) -> float:
    """+50 in the viewport, then less the further away (in viewport heights); a node that its own box does not
    place (`placed_box`: without a ref, or an option of a closed select; or inside a frame) takes its parent's."""
    if box is None or (box[2] == 0 and box[3] == 0):
        return parent.grade if parent else 0.0
    height = ctx.viewport[1]
    top, bottom = box[1], box[1] + box[3]
    if bottom >= 0 and top <= height:
        return VIEWPORT_GRADE
    distance = (top - height) / height if top > height else -bottom / height
    return 30.0 if distance < 1 else 15.0 if distance < 2 else 0.0


def _in_viewport(item: _Item) -> bool:
    return item.grade >= VIEWPORT_GRADE


def _on_screen_control(item: _Item) -> bool:
    """A control with a box of some size in the viewport (in a frame: a ref; not an option of a closed select)."""
    box = placed_box(item.node)
    sized = item.node.ref is not None if item.framed else box is not None and box[2] > 0 and box[3] > 0
    return item.node.role in INTERACTIVE and sized and _in_viewport(item)


def _wanted(item: _Item, options: SnapshotOptions) -> bool:
    if options.viewport_only and not _in_viewport(item):
        return False
    if options.interactive_only:
        node = item.node
        short_text = (node.role in ("text", "heading", "alert", "status") or node.text) and len(
            node.text or node.name) <= SHORT_TEXT  # fmt: skip
        return node.role in INTERACTIVE or bool(short_text)
    return True


def _choose(wanted: list[_Item], options: SnapshotOptions, ctx: PageContext, total: int) -> tuple[set[int], str | None]:
    """Every control on screen first, then the other items by score, each with its ancestors, while the limits
    hold; the reason when something is left. The fold lines are counted as they come and go: a chosen item
    with children left out has one, and loses it when its last child is taken."""
    budget = options.max_tokens - header_cost(ctx, total) - FOLD_LINE_TOKENS * 4
    chosen: set[int] = set()
    left_out: dict[int, int] = {}
    """For each chosen item, how many of its children are not chosen (it has a fold line while any is not)."""
    used_tokens = used_elements = 0
    reasons = {"filters"} if len(wanted) < total else set()
    ranked = sorted((not (on := _on_screen_control(i)), on and i.many, -i.score, i.order, on, i) for i in wanted)
    for *_, exempt, item in ranked:  # controls on screen first, those of many rows last; `order` is unique
        if id(item) in chosen:
            continue
        if used_elements >= options.max_elements and not exempt:
            reasons.add("element limit")
            continue
        missing = _missing([item], chosen)
        if used_elements + len(missing) > options.max_elements and not exempt:
            reasons.add("element limit")
            continue
        new = set(map(id, missing))
        own = {id(a): sum(id(c) not in new for c in a.children) if a.children else 0 for a in missing}
        taken: dict[int, int] = {}  # the chosen parents of missing items: how many of their children come now
        for a in missing:
            if a.parent is not None and (parent := id(a.parent)) in chosen:
                taken[parent] = taken.get(parent, 0) + 1
        folds = sum(left > 0 for left in own.values()) - sum(left_out[p] == n for p, n in taken.items())
        cost = sum(a.cost for a in missing) + FOLD_LINE_TOKENS * folds
        if used_tokens + cost > budget:
            reasons.add("token budget")
            continue
        chosen |= new
        left_out.update(own)
        for parent, n in taken.items():
            left_out[parent] -= n
        used_tokens += cost
        used_elements += len(missing)
    reason = next((r for r in ("token budget", "element limit", "filters") if r in reasons), None)
    return chosen, reason


def _with_units(path: list[_Item], chosen: set[int]) -> list[_Item]:
    """`path` and the inline units of its items (an inline child brings its parent's unit: its parent is on
    the path), each once, none already chosen."""
    out: list[_Item] = []
    seen: set[int] = set()
    stack = list(reversed(path))
    while stack:
        item = stack.pop()
        if id(item) in seen or id(item) in chosen:
            continue
        seen.add(id(item))
        out.append(item)
        stack.extend(reversed(item.inline))
    return out


def _missing(items: list[_Item], chosen: set[int]) -> list[_Item]:
    """What choosing `items` adds: each and its ancestors up to the first chosen one (the chosen items hold every
    ancestor of theirs), with their inline units, each once."""
    path: list[_Item] = []
    for item in items:
        current: _Item | None = item
        while current is not None and id(current) not in chosen:
            path.append(current)
            current = current.parent
    return _with_units(path, chosen)


def _finish(
    items: list[_Item], chosen: set[int], ctx: PageContext, options: SnapshotOptions, reason: str | None, total: int
) -> Snapshot:
    """Render, then (rarely: the estimate per line is not exact) drop the lowest-scored leaves, one unit at a
    time, until the whole text fits the budget (lookout.core.budget.fit over how many are dropped)."""
    size = len(chosen)
    bodies = [_body(items, chosen)]
    """The body after 0, 1, 2, ... drops, until nothing is shown."""
    measured: dict[int, tuple[Snapshot, int]] = {}

    def measure(k: int) -> tuple[Snapshot, int]:
        """The snapshot after `size - k` drops (or as many as there can be)."""
        while len(bodies) <= size - k and bodies[-1][1]:
            drop = min(_droppable(bodies[-1][1], chosen), key=lambda unit: (unit[0].score, -unit[0].order))
            chosen.difference_update(map(id, drop))
            bodies.append(_body(items, chosen))
        drops = min(size - k, len(bodies) - 1)
        if drops not in measured:
            body, shown, refs = bodies[drops]
            truncated = len(shown) < total
            why = (reason if drops == 0 else "token budget") if truncated else None
            text, tokens = with_token_line(header_lines(ctx, len(shown), total, why), body)
            measured[drops] = Snapshot(text, total, len(shown), truncated, why, tokens, tuple(refs)), tokens
        return measured[drops]

    return measure(size)[0] if options.full else fit(measure, options.max_tokens, size).value


def _droppable(shown: list[_Item], chosen: set[int]) -> list[list[_Item]]:
    """The units that can leave the view: shown items (with their inline parts) with nothing else of theirs
    shown below them."""
    out = []
    for item in shown:
        if item.in_unit:
            continue
        unit = _reach(item, lambda current: current.inline)  # with its inline children, recursively
        members = set(map(id, unit))
        if not any(id(c) in chosen and id(c) not in members for part in unit for c in part.children):
            out.append(unit)
    return out


def _body(items: list[_Item], chosen: set[int]) -> tuple[list[str], list[_Item], list[str]]:
    """The lines of the chosen items, the items shown and the refs shown, in document order."""
    lines: list[str] = []
    shown: list[_Item] = []
    refs: list[str] = []

    def emit(item: _Item, depth: int) -> None:
        shown.append(item)
        kept = [c for c in item.children if id(c) in chosen]
        left = [c for c in item.children if id(c) not in chosen]
        ref = item.node.ref
        bare = ref is not None and kept and not left and _structural(item.node)  # see the module's grammar
        if bare:
            line = "  " * depth + item.line.replace(f" [ref={ref}]", "", 1)
        else:
            line = "  " * depth + item.line
            if ref and item.node.role != "text":
                refs.append(ref)
        if left and not kept:
            summary = _fold_summary(left)
            lines.append(f"{line} [{summary}]" if item.node.text else f"{line}: {summary}")
            return
        lines.append(line)
        for child in kept:
            emit(child, depth + 1)
        if left:
            lines.append("  " * (depth + 1) + f"- … {_fold_summary(left, more=True)}")

    tops = [i for i in items if i.parent is None]
    for item in tops:
        if id(item) in chosen:
            emit(item, 0)
    left = [i for i in tops if id(i) not in chosen]
    if left:
        lines.append(f"- … {_fold_summary(left, more=True)}")
    return lines, shown, refs


def _fold_summary(items: list[_Item], more: bool = False) -> str:
    """`48 links, 3 buttons folded` for the subtrees of `items` (their interactive nodes first). A small
    fold (a table row's cells beside the button that was shown) also quotes its first texts, so what is
    shown keeps its context: `4 more folded: 1 link, 3 others ("Item 19", "$26.03")`."""
    nodes = [n for item in items for n in _subtree(item)]
    roles = Counter(n.node.role for n in nodes if n.node.role in INTERACTIVE)
    parts = [f"{count} {plural(role, count)}" for role, count in roles.most_common(4)]
    others = len(nodes) - sum(roles.values())
    if others:
        parts.append(f"{others} other{'s' if others > 1 else ''}")
    summary = f"{len(nodes)} more folded: " + ", ".join(parts) if more else ", ".join(parts) + " folded"
    if len(nodes) <= CONTEXT_FOLD:
        texts = [t for n in nodes if (t := (n.node.text or n.node.name).strip()) and n.node.role not in INTERACTIVE]
        if texts:
            summary += " (" + ", ".join(json.dumps(t[:CONTEXT_CHARS], ensure_ascii=False) for t in texts[:3]) + ")"
    return summary


def _subtree(item: _Item) -> list[_Item]:
    return _reach(item, lambda current: current.children)


def _reach(item: _Item, next_items: Callable[[_Item], list[_Item]]) -> list[_Item]:
    """The item and every item reached from it through `next_items`, depth first."""
    out, stack = [], [item]
    while stack:
        current = stack.pop()
        out.append(current)
        stack.extend(next_items(current))
    return out


def _structural(node: AriaNode) -> bool:
    """Only structure: no name, text or properties, not interactive, no flag but `active`."""
    return not (node.name or node.text or node.props or node.role in INTERACTIVE or node.flags.keys() - {"active"})
