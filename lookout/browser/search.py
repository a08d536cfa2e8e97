"""Looking inside a parsed snapshot: a subtree by ref (`expand`), and text or regex search (`find`)."""

from __future__ import annotations

from dataclasses import dataclass

from lookout.browser.aria import AriaNode
from lookout.browser.snapshot_lines import render_line
from lookout.core.patterns import IGNORECASE, Budget, UserPattern

MAX_MATCHES = 50


@dataclass(frozen=True, slots=True)
class Match:
    line: str
    path: tuple[str, ...]
    """The lines of its ancestors, outermost first."""


def subtree(root: AriaNode, ref: str) -> AriaNode | None:
    """A document root holding only the node with this ref, or None when no node has it."""
    node = next((n for n in root.walk() if n.ref == ref), None)
    return None if node is None else AriaNode("document", children=[node])


def find(root: AriaNode, pattern: str, regex: bool = False, limit: int = MAX_MATCHES) -> tuple[list[Match], int]:
    """The nodes whose line (role, name, text, url...) contains `pattern` (case-insensitive) or matches it
    as a regex; at most `limit`, with the number of all matches."""
    if regex:
        compiled, budget = UserPattern(pattern, IGNORECASE), Budget()

        def test(line: str) -> bool:
            return compiled.search(line, budget) is not None
    else:
        needle = pattern.casefold()

        def test(line: str) -> bool:
            return needle in line.casefold()

    matches: list[Match] = []
    count = 0
    stack: list[tuple[AriaNode, tuple[str, ...]]] = [(child, ()) for child in reversed(root.children)]
    while stack:
        node, path = stack.pop()
        line = render_line(node)
        if test(line):
            count += 1
            if len(matches) < limit:
                matches.append(Match(line, path))
        stack.extend((child, (*path, line)) for child in reversed(node.children))
    return matches, count
