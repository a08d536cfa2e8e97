"""How a node of the accessibility tree reads as one line of a snapshot (pure functions over lookout.browser.aria).

Line grammar: `- role "name" [flag] [flag=value] [url=...] [ref=eN]: inline text`; `- text: ...` for text. A
node whose content is only inline text (a heading or link made of `text`, `code`, `emphasis`... nodes) has that
text joined into its own line (`- heading [level=2]: 4.1. if Statements`); in a flow of text with links or
controls in it, each run of plain inline pieces between them is joined into one `text`. The page's own words
are quoted wherever they could pass for more than text (lookout's own `[ref=eN]`, a line's end).
"""

from __future__ import annotations

import json
import re

from lookout.browser.aria import AriaNode

HIDDEN_FLAGS = frozenset({"cursor", "active"})
INLINE = frozenset({"text", "code", "emphasis", "strong", "mark", "subscript", "superscript", "insertion",
                    "deletion", "time", "link", "generic", "none"})  # fmt: skip
"""Roles that are part of the flow of their parent's text."""
INLINE_DEPTH = 32
_NO_SPACE_AFTER = "([{‘“«"
_NO_SPACE_BEFORE = ",.;:!?)]}’”»"


def merged(node: AriaNode) -> AriaNode:
    """The node with its children joined into its text when they are only inline text; in a text flow
    with links or controls in it, each run of plain inline pieces between them joined into one `text`."""
    if not node.children or node.role == "text" or node.text or not any(c.role in INLINE for c in node.children):
        return node
    parts = [_inline_text(child, 0) for child in node.children]
    texts = [part for part in parts if part is not None]
    if len(texts) == len(parts):
        return _copy(node, _joined(texts), [])
    if not any(child.role == "text" for child in node.children):
        return node
    children: list[AriaNode] = []
    run: list[str] = []
    for child, part in zip(node.children, parts, strict=True):
        if part is not None:
            run.append(part)
            continue
        if run:
            children.append(AriaNode("text", text=_joined(run)))
            run = []
        children.append(child)
    if run:
        children.append(AriaNode("text", text=_joined(run)))
    return _copy(node, node.text, children)


def _copy(node: AriaNode, text: str, children: list[AriaNode]) -> AriaNode:
    """The node with that text and those children (`dataclasses.replace` costs several times this)."""
    return AriaNode(node.role, node.name, node.ref, node.box, node.flags, text, node.props, children)


def _inline_text(node: AriaNode, depth: int) -> str | None:
    """The text of a subtree that is only inline text (no name, no link or control in it), else None."""
    if node.role == "text":
        return None if node.children else node.text
    if node.role not in INLINE or node.role == "link" or node.name or node.props or depth > INLINE_DEPTH:
        return None
    if not node.children:
        return node.text
    parts = [_inline_text(child, depth + 1) for child in node.children]
    texts = [part for part in parts if part is not None]
    return _joined(texts) if len(texts) == len(parts) else None


def _joined(parts: list[str]) -> str:
    """Inline pieces as one text: a space between them but after an opening or before a closing mark."""
    out = ""
    for part in parts:
        part = part.strip()
        if not part:
            continue
        if out and out[-1] not in _NO_SPACE_AFTER and part[0] not in _NO_SPACE_BEFORE:
            out += " "
        out += part
    return out


_UNSAFE_BARE = re.compile(r'[\[\]"\s]')
_UNSAFE_INLINE = re.compile(r'^"|:|\[ref=|[\x00-\x1f\x7f-\x9f\u2028\u2029]')


def render_line(node: AriaNode) -> str:
    """A node's own line, without its indent."""
    if node.role == "text":
        return f"- text: {_inline(node.text)}"
    parts = [f"- {node.role}"]
    if node.name:
        parts.append(json.dumps(node.name, ensure_ascii=False))
    parts += [f"[{k}={v}]" if v else f"[{k}]" for k, v in node.flags.items() if k not in HIDDEN_FLAGS]
    parts += [f"[{k}={_prop_value(v)}]" for k, v in node.props.items() if k in ("url", "placeholder")]
    if node.ref:
        parts.append(f"[ref={node.ref}]")
    line = " ".join(parts)
    return f"{line}: {_inline(node.text)}" if node.text else line


def _prop_value(value: str) -> str:
    """A page's own words in brackets (a placeholder, a URL): quoted when they hold a bracket, a quote or a
    space, so that none can pass for lookout's own `[ref=eN]` (a placeholder "x] [ref=e9" is shown
    `[placeholder="x] [ref=e9"]`)."""
    return json.dumps(value, ensure_ascii=False) if _UNSAFE_BARE.search(value) else value


def _inline(text: str) -> str:
    """A line's own text, bare unless it could be read as more than text: a colon, space at its ends, a
    leading quote, a `[ref=` of its own, a character that ends a line (`\\x85`, `\\u2028`...) or a control."""
    return json.dumps(text, ensure_ascii=False) if _UNSAFE_INLINE.search(text) or text != text.strip() else text


def plural(role: str, count: int) -> str:
    """`1 checkbox`, `2 checkboxes`, `3 links`."""
    return role if count == 1 else role + ("es" if role.endswith(("x", "s", "ch", "sh")) else "s")
