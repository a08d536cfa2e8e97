"""Playwright's AI snapshot (`page.aria_snapshot(mode="ai")`, with `boxes=True` or without) parsed into a tree, once.

One node a line: `- role "name" [flag] [key=value] [ref=e12] [box=x,y,w,h]`, then `:` when children
follow, or `: text` for an inline text child (YAML quotes the whole key when it holds `#` and the like:
`- 'tab "Section #10" [ref=e5]':`); `- text: ...` is a text node and `- /url: ...`,
`- /placeholder: ...` are properties of the node above. Pure functions; everything after this (scoring,
budgets, rendering, diffs) works on the tree.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import partial

_ATTRS = r"(?P<attrs>(?: \[[^\]\n]*\])*)"
"""` [flag] [key=value] [ref=..] [box=..]` in any order (split in Python: cheaper than a group each)."""
_ROLE_NAME = r'(?P<role>[A-Za-z][\w-]*)(?: (?P<name>"[^"\\\n]*(?:\\.[^"\\\n]*)*"))?'
_NODE = re.compile(_ROLE_NAME + _ATTRS + r"(?::(?: (?P<value>.*))?)?")
NODE_LINE = re.compile(r"^(?P<indent> *)- " + _ROLE_NAME + _ATTRS + r"(?::(?: (?P<value>.*))?)?$|^(?P<other>.*)$")
"""One line: a node in the common form (its box among `attrs`), else `other` (for lookout.browser.closed_shadow)."""
_ATTRS_BUT_BOX = r"(?P<attrs>(?: \[(?!box=)[^\]\n]*\])*)"
_BOX = r"(?: \[box=(?P<x>-?\d+),(?P<y>-?\d+),(?P<w>\d+),(?P<h>\d+)\])?"
"""A box of four integers as the last attribute (the common case: read by the pattern, not by `_box`)."""
_LINE = re.compile(
    r"^(?P<indent> *)- " + _ROLE_NAME + _ATTRS_BUT_BOX + _BOX + r"(?::(?: (?P<value>.*))?)?$"
    r"|^(?P<prop_indent> *)- /(?P<key>[^:\n]*):(?P<prop>.*)$|^(?P<other>.*)$",
    re.M,
)
"""A node line in the common form, a property line (`- /url: ...`), else any line (read by the slower path:
quoted keys, errors)."""
_DIALOG_NODE = re.compile(r""" *- ['"]?(?:alert)?dialog\b""")
"""A dialog's line, from the line's start (the key may be quoted)."""


class AriaParseError(ValueError):
    """A line of the snapshot is not in the expected grammar."""


Box = tuple[int, int, int, int]
"""x, y, width, height in viewport pixels."""


@dataclass(slots=True)
class AriaNode:
    role: str
    name: str = ""
    ref: str | None = None
    box: Box | None = None
    """x, y, width, height in viewport pixels at the time of the snapshot."""
    flags: dict[str, str] = field(default_factory=dict)
    """`[checked]` -> {"checked": ""}, `[level=2]` -> {"level": "2"} (ref and box are fields of their own)."""
    text: str = ""
    """Inline text (`- paragraph: Hello`), or the text of a `text` node."""
    props: dict[str, str] = field(default_factory=dict)
    """`/url`, `/placeholder`, ... without the slash."""
    children: list[AriaNode] = field(default_factory=list)

    def walk(self) -> list[AriaNode]:
        """This node and every node below it, in document order."""
        out, stack = [], [self]
        while stack:
            node = stack.pop()
            out.append(node)
            stack.extend(reversed(node.children))
        return out


def placed_box(node: AriaNode) -> Box | None:
    """The node's box where it places the node: only a node with a ref (a node without one is not visible or
    takes no pointer events, and is placed by its parent), so that a read that took only the refs' boxes
    (lookout.browser.ref_places) gives the view a read with every box gives. (A node inside a frame is placed
    by the frame: the view knows which are, lookout.browser.snapshot_view.)"""
    return node.box if node.ref is not None else None


def placed(root: AriaNode, places: str) -> bool:
    """Give each node with a ref in the top document (not inside an iframe) its box from `places`
    (lookout.browser.ref_places's answer: `ref x y w h ...`); whether every such node got exactly one (a ref
    twice in `places` counts as none: which box is its own is unknown)."""
    words = places.split()
    if len(words) % 5:
        return False
    boxes: dict[str, Box | None] = {}
    try:
        for i in range(0, len(words), 5):
            ref = words[i]
            boxes[ref] = None if ref in boxes else (
                int(words[i + 1]), int(words[i + 2]), int(words[i + 3]), int(words[i + 4]))  # fmt: skip
    except ValueError:
        return False
    complete, stack = True, [root]
    while stack:
        node = stack.pop()
        if node.role != "iframe":  # a frame's nodes are in a document (and a world) of their own
            stack += node.children
        if node.ref is not None:
            node.box = boxes.get(node.ref)
            complete = complete and node.box is not None
    return complete


def refs_in(root: AriaNode) -> frozenset[str]:
    """The refs of the nodes under `root` (its own included), in no order: `walk` without the list in order."""
    refs, stack = [], [root]
    while stack:
        node = stack.pop()
        if node.ref is not None:
            refs.append(node.ref)
        stack += node.children
    return frozenset(refs)


def parse(snapshot: str) -> AriaNode:
    """The snapshot as a tree under a synthetic `document` root, in one pass over its lines."""
    root = AriaNode("document")
    stack: list[tuple[int, AriaNode]] = [(-1, root)]
    for match in _LINE.finditer(snapshot):
        indent_text, role, name, attrs, x, y, w, h, value, prop_indent, key, prop, other = match.groups()
        if role is not None:
            indent = len(indent_text)
        elif key is not None:
            indent = len(prop_indent)
        else:
            body = other.lstrip(" ")
            if not body.strip():
                continue
            indent = len(other) - len(body)
        while stack[-1][0] >= indent:
            stack.pop()
        parent = stack[-1][1]
        node: AriaNode | None
        if role is not None:
            node = _built(role, name, attrs, value, None if x is None else (int(x), int(y), int(w), int(h)))
        elif key is not None:
            parent.props[key.strip()] = _value(prop.strip())
            continue
        else:
            node = _other_line(body, parent, partial(_line_number, snapshot, match.start()))
        if node is None:
            continue
        parent.children.append(node)
        stack.append((indent, node))
    return root


def holds_dialog(snapshot: str) -> bool:
    """Whether a line of the snapshot is a `dialog` or `alertdialog` node (text that only names one is not).
    Cheap enough for the event loop: one pass of `str.find` (about 1 ms a megabyte, a fraction of what
    decoding the snapshot's message took there) and a look at the lines that hold the word; a regular
    expression over every line took 25 ms on an 800 KB page."""
    at = snapshot.find("dialog")
    while at >= 0:
        if _DIALOG_NODE.match(snapshot, snapshot.rfind("\n", 0, at) + 1):
            return True
        end = snapshot.find("\n", at)
        if end < 0:
            return False
        at = snapshot.find("dialog", end)
    return False


def _line_number(text: str, offset: int) -> int:
    return text.count("\n", 0, offset) + 1


def _other_line(body: str, parent: AriaNode, number: Callable[[], int]) -> AriaNode | None:
    """A line the common form did not match: a property of `parent` (None), a node with a quoted key, or
    an error."""
    if not body.startswith("- "):
        raise AriaParseError(f"line {number()}: expected '- ', got {body.strip()[:60]!r}")
    body = body[2:].rstrip()
    if body[:1] in "'\"":
        body = _unquote_key(body, number())
    if body.startswith("/"):
        key, _, value = body[1:].partition(":")
        parent.props[key.strip()] = _value(value.strip())
        return None
    if body.startswith("text:") or body == "text":
        return AriaNode("text", "", None, None, {}, _value(body[5:].strip()), {}, [])
    match = _NODE.fullmatch(body)
    if match is None:
        raise AriaParseError(f'line {number()}: not `role "name" [attr]...` in {body[:60]!r}')
    role, name, attrs, value = match.groups()
    return _built(role, name, attrs, value)


def _unquote_key(body: str, number: int) -> str:
    """A line whose key YAML had to quote (`- 'tab "Section #10" [ref=e5]':`), unquoted; others as they are."""
    if body.startswith("'"):
        i = 1
        while i < len(body):
            if body[i] == "'":
                if body[i + 1 : i + 2] == "'":
                    i += 2
                    continue
                return body[1:i].replace("''", "'") + body[i + 1 :]
            i += 1
        raise AriaParseError(f"line {number}: unterminated quote in {body[:60]!r}")
    if body.startswith('"'):
        end = _string_end(body, 0)
        return str(json.loads(body[:end])) + body[end:]
    return body


def _built(role: str, name: str | None, attrs: str, value: str | None, box: Box | None = None) -> AriaNode:
    """A node from its line's parts (positional arguments: the dataclass's keyword defaults cost a call each);
    `box`: the one the pattern read after `attrs`."""
    text = _value(value.strip()) if value else ""
    if role == "text" and name is None and not attrs and box is None:
        return AriaNode("text", "", None, None, {}, text, {}, [])
    name = (json.loads(name) if "\\" in name else name[1:-1]) if name else ""
    ref = None
    flags: dict[str, str] = {}
    if attrs:  # " [a] [b=c]": no `]` inside a bracket, so "] [" only ever separates two
        for attr in attrs[2:-1].split("] ["):
            key, _, value_ = attr.partition("=")
            if key == "ref":
                ref = value_
            elif key == "box":
                box = _box(value_)
            else:
                flags[key] = value_
    return AriaNode(role, name, ref, box, flags, text, {}, [])


def _box(value: str) -> Box:
    try:  # four integers, else four numbers
        x, y, w, h = map(int, value.split(","))
    except ValueError:
        try:
            x, y, w, h = (int(float(v)) for v in value.split(","))
        except ValueError:
            raise AriaParseError(f"a box is four numbers, not {value[:60]!r}") from None
    return x, y, w, h


def _string_end(text: str, start: int) -> int:
    """The index after the JSON string that starts at `start` (a double quote)."""
    i = start + 1
    while i < len(text):
        if text[i] == "\\":
            i += 2
            continue
        if text[i] == '"':
            return i + 1
        i += 1
    raise AriaParseError(f"unterminated string in {text[:60]!r}")


def _value(text: str) -> str:
    if text.startswith('"') and text.endswith('"') and len(text) >= 2:
        try:
            return str(json.loads(text))
        except ValueError:
            return text
    return text
