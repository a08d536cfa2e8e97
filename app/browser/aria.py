"""Playwright's AI snapshot (`page.aria_snapshot(mode="ai", boxes=True)`) parsed into a tree, once.

One node a line: `- role "name" [flag] [key=value] [ref=e12] [box=x,y,w,h]`, then `:` when children
follow, or `: text` for an inline text child (YAML quotes the whole key when it holds `#` and the like:
`- 'tab "Section #10" [ref=e5]':`); `- text: ...` is a text node and `- /url: ...`,
`- /placeholder: ...` are properties of the node above. Pure functions; everything after this (scoring,
budgets, rendering, diffs) works on the tree.
"""
from __future__ import annotations

import json
import re
from dataclasses import dataclass, field

_NODE = re.compile(
    r'(?P<role>[A-Za-z][\w-]*)(?: (?P<name>"(?:[^"\\]|\\.)*"))?(?P<attrs>(?: \[[^\]]*\])*)(?::(?: (?P<value>.*))?)?'
)
_ATTR = re.compile(r" \[([^\]]*)\]")


class AriaParseError(ValueError):
    """A line of the snapshot is not in the expected grammar."""


@dataclass
class AriaNode:
    role: str
    name: str = ""
    ref: str | None = None
    box: tuple[int, int, int, int] | None = None
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


def parse(snapshot: str) -> AriaNode:
    """The snapshot as a tree under a synthetic `document` root."""
    root = AriaNode("document")
    stack: list[tuple[int, AriaNode]] = [(-1, root)]
    for number, line in enumerate(snapshot.splitlines(), 1):
        if not line.strip():
            continue
        indent = len(line) - len(line.lstrip(" "))
        body = line.strip()
        if not body.startswith("- "):
            raise AriaParseError(f"line {number}: expected '- ', got {body[:60]!r}")
        while stack[-1][0] >= indent:
            stack.pop()
        parent = stack[-1][1]
        body = _unquote_key(body[2:], number)
        if body.startswith("/"):
            key, _, value = body[1:].partition(":")
            parent.props[key.strip()] = _value(value.strip())
            continue
        node = _node(body, number)
        parent.children.append(node)
        stack.append((indent, node))
    return root


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


def _node(body: str, number: int) -> AriaNode:
    if body.startswith("text:") or body == "text":
        return AriaNode("text", text=_value(body[5:].strip()))
    match = _NODE.fullmatch(body)
    if match is None:
        raise AriaParseError(f"line {number}: not `role \"name\" [attr]...` in {body[:60]!r}")
    name = match.group("name")
    node = AriaNode(match.group("role"), name=(json.loads(name) if "\\" in name else name[1:-1]) if name else "")
    for attr in _ATTR.findall(match.group("attrs")):
        key, _, value = attr.partition("=")
        if key == "ref":
            node.ref = value
        elif key == "box":
            x, y, w, h = (int(float(v)) for v in value.split(","))
            node.box = (x, y, w, h)
        else:
            node.flags[key] = value
    if match.group("value"):
        node.text = _value(match.group("value").strip())
    return node


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
