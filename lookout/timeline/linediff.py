"""A compact line diff of one observation against the previous one of the same resource (pure)."""

from __future__ import annotations

from difflib import SequenceMatcher


def line_diff(old: str, new: str, context_label: str) -> str:
    """What changed from `old` to `new`, line by line: `@@ line N` hunks with `-`/`+` lines.

    `context_label` names what it is compared with ("#41"). Unchanged text gives one line saying so."""
    a, b = old.split("\n"), new.split("\n")
    if a == b:
        return f"unchanged since {context_label}"
    hunks: list[str] = []
    added = removed = 0
    for tag, i1, i2, j1, j2 in SequenceMatcher(None, a, b, autojunk=False).get_opcodes():
        if tag == "equal":
            continue
        hunks.append(f"@@ line {j1 + 1}")
        hunks.extend(f"- {line}" for line in a[i1:i2])
        hunks.extend(f"+ {line}" for line in b[j1:j2])
        removed += i2 - i1
        added += j2 - j1
    return f"changed since {context_label} (+{added} -{removed} lines):\n" + "\n".join(hunks)
