"""A page snapshot as a diff against an earlier one, keyed by ref.

Nodes are matched by ref (a node without one, such as a text line or a select's option, by its parent,
its role, name and text, and its rank among its parent's children that share them). A node present only now is added, one present only
before is removed, one whose own line (role, name, flags, text, url) differs is changed; the rest is
summarised in one line. Grammar, after a header that names the observation the diff is against:

    + <line>        added (its parent's ref first when it has one: `+ [in e16] - listitem [ref=e30]: Row 3`)
    - <line>        removed (as it was)
    ~ <line>        changed (as it is now)
    = N unchanged   the number of nodes that did not change

When most of the page changed (more than `FULL_ABOVE`) or the URL changed, a diff would cost more than
it saves: the caller shows a full snapshot instead and says why.
"""

from __future__ import annotations

from dataclasses import dataclass

from lookout.browser.aria import AriaNode
from lookout.browser.snapshot_header import with_token_line
from lookout.browser.snapshot_lines import render_line
from lookout.core.budget import fit, within
from lookout.core.tokens import count_tokens

FULL_ABOVE = 0.7


@dataclass(frozen=True, slots=True)
class Change:
    kind: str
    """"+", "-" or "~"."""
    line: str
    parent_ref: str | None


@dataclass(frozen=True, slots=True)
class Diff:
    changes: tuple[Change, ...]
    unchanged: int
    total: int

    @property
    def changed_share(self) -> float:
        """The share of the nodes of both snapshots that were added, removed or changed (0 to 1)."""
        return len(self.changes) / max(len(self.changes) + self.unchanged, 1)


def keyed(root: AriaNode) -> dict[str, tuple[str, str | None, str]]:
    """key -> (rendered line, parent's ref, place) for every node below `root`, in document order. The key
    is the ref, or the place: the parent's key, the node's role, name and text, and which of its parent's
    children with those it is (so a text line keeps its key when a sibling before it goes away)."""
    out: dict[str, tuple[str, str | None, str]] = {}

    def visit(node: AriaNode, parent_key: str, parent_ref: str | None) -> None:
        seen: dict[tuple[str, str, str], int] = {}
        for child in node.children:
            identity = (child.role, child.name, child.text)
            seen[identity] = seen.get(identity, 0) + 1
            place = f"{parent_key}/{child.role}|{child.name}|{child.text}#{seen[identity]}"
            key = child.ref or place
            out[key] = (render_line(child), parent_ref, place)
            visit(child, key, child.ref or parent_ref)

    visit(root, "", None)
    return out


def diff(before: AriaNode, after: AriaNode) -> Diff:
    old, new = keyed(before), keyed(after)
    by_place = {place: key for key, (_, _, place) in old.items() if key not in new}
    matched: set[str] = set()
    changes: list[Change] = []
    unchanged = 0
    for key, (line, parent, place) in new.items():
        old_key = key if key in old else by_place.get(place)  # a node that gained a ref keeps its place
        if old_key is None or old_key in matched:
            changes.append(Change("+", line, parent))
            continue
        matched.add(old_key)
        if old[old_key][0] != line:
            changes.append(Change("~", line, parent))
        else:
            unchanged += 1
    changes += [Change("-", line, parent) for key, (line, parent, _) in old.items() if key not in matched]
    return Diff(tuple(changes), unchanged, max(len(new), len(old)))


def render_diff(result: Diff, header: list[str], max_tokens: int) -> tuple[str, int, int]:
    """The diff's text within `max_tokens` (the changes past the budget become one line); returns the text,
    its token count and how many changes it shows."""
    lines = [_change_line(change) for change in result.changes]

    def measure(shown: int) -> tuple[str, int]:
        body = lines[:shown]
        if shown < len(lines):
            body.append(f"… {len(lines) - shown} more changes not shown (max_tokens)")
        body.append(f"= {result.unchanged} unchanged")
        return with_token_line(header, body)

    costs = (count_tokens(line) + 1 for line in lines)
    fitted = fit(measure, max_tokens, len(lines), lambda: within(costs, max_tokens - measure(0)[1]))
    return fitted.value, fitted.tokens, fitted.choice


def _change_line(change: Change) -> str:
    place = f"[in {change.parent_ref}] " if change.parent_ref and change.kind == "+" else ""
    return f"{change.kind} {place}{change.line}"
