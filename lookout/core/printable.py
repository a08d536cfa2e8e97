"""Text from outside (terminal names, commands, titles, agent names, archive members, error texts) made safe
to print to a person's terminal, the way tmux shows session names: every control character becomes a visible
escape, so no name can move the cursor, clear the screen, retitle or resize the window, or put text on the
clipboard (OSC 52).

- C0 controls (U+0000..U+001F), DEL (U+007F) and C1 controls (U+0080..U+009F): a backslash and three octal
  digits of the code point (ESC is `\\033`, DEL `\\177`, the one-character CSI U+009B `\\233`), except tab,
  newline and carriage return, shown C-style (`\\t`, `\\n`, `\\r`);
- a backslash is doubled, so an escape in the output always came from a control character;
- a lone surrogate (which no terminal encoding can carry), a line or paragraph separator (U+2028, U+2029) and a
  bidirectional control (which reorders the text around it on the screen: U+061C, U+200E, U+200F,
  U+202A..U+202E, U+2066..U+2069) is `\\uXXXX`.

Everything else, other scripts and emoji included, is kept as it is.
"""

from __future__ import annotations

import re

_CONTROLS = r"\x00-\x1f\x7f-\x9f\ud800-\udfff"
_REORDERING = r"\u061c\u200e\u200f\u2028\u2029\u202a-\u202e\u2066-\u2069"
_HAS_CONTROL = re.compile(f"[{_CONTROLS}]")
_UNSAFE = re.compile(rf"[{_CONTROLS}{_REORDERING}\\]")
_C_STYLE = {"\t": "\\t", "\n": "\\n", "\r": "\\r", "\\": "\\\\"}


def _escape(match: re.Match[str]) -> str:
    char = match.group()
    if char in _C_STYLE:
        return _C_STYLE[char]
    code = ord(char)
    return f"\\u{code:04x}" if code >= 0x100 else f"\\{code:03o}"


def printable(text: str) -> str:
    """`text` with its control characters (and backslashes) escaped: safe to write to a terminal."""
    return _UNSAFE.sub(_escape, text)


def has_controls(text: str) -> bool:
    """Whether `text` holds a control character (C0, DEL, C1) or a lone surrogate."""
    return _HAS_CONTROL.search(text) is not None


def without_controls(text: str) -> str:
    """`text` less its control characters and lone surrogates (for labels that are cleaned, not refused)."""
    return _HAS_CONTROL.sub("", text)
