"""Skip ahead in a flood: feed a screen engine only the part of a burst of plain output that can still be
seen.

When a program floods the terminal with plain text (a build log, `cat` of a file), every line but the last
`rows + scrollback` is pushed out of the view and out of the scrollback before anyone can look. Such a
stretch can be replaced by the graphic rendition (SGR) it leaves behind without changing the final screen,
scrollback, cursor or pen. The journal keeps every byte; only the emulator is spared the work.

The stretch that is skipped must:
- start right after a line feed and end right after a CR LF (so the cursor is in column 0 at both ends
  and no UTF-8 character or escape sequence is cut);
- hold only printable text, TAB, BS, CR, LF and SGR sequences (no cursor addressing, modes, charsets,
  scrolling regions or OSC);
- be followed by at least `keep_lines` line feeds, each of which scrolls one line of it away.
One case is not covered: a scrolling region set with the cursor below it, where line feeds do not
scroll; programs that set regions also address the cursor, so their output is not plain.
"""

from __future__ import annotations

import re

_SGR = re.compile(rb"\x1b\[[0-9;:]*m")
_NOT_SGR = re.compile(rb"\x1b(?!\[[0-9;:]*m)")
_RESETS = (b"\x1b[0m", b"\x1b[m")
_PLAIN = bytes(range(0x20, 0x7F)) + bytes(range(0x80, 0x100)) + b"\t\x08\r\n"
_C1_IN_UTF8 = re.compile(rb"\xc2[\x80-\x9f]")
_NEAR_END = 4096
MIN_SKIP = 8 << 10
"""Smaller stretches are not worth checking."""


def plan_feed(data: bytes, keep_lines: int, min_skip: int = MIN_SKIP) -> list[bytes]:
    """The pieces to feed in place of `data`: `[data]`, or `[head, pen, tail]` with a plain stretch between
    head and tail replaced by `pen`, the SGR sequences that set the rendition it ended with."""
    if len(data) < min_skip + keep_lines or data.count(b"\n") <= keep_lines + 1:
        return [data]
    start = data.find(b"\n") + 1
    end = len(data.rsplit(b"\n", keep_lines + 1)[0])  # the line feed that keep_lines more follow
    if end < start:
        return [data]
    end = data.rfind(b"\r\n", start, end + 1)
    if end < 0:
        return [data]
    end += 2
    if end - start < min_skip:
        return [data]
    stretch = data[start:end]
    pen = _pen_after(stretch)
    if pen is None:
        return [data]
    return [data[:start], pen, data[end:]]


def _pen_after(stretch: bytes) -> bytes | None:
    """The SGR sequences after the last full reset in `stretch`, or None if `stretch` is not plain."""
    if stretch.translate(None, _PLAIN).strip(b"\x1b") or _NOT_SGR.search(stretch):
        return None  # a control other than ESC, or an ESC that does not start an SGR sequence
    if b"\xc2" in stretch and _C1_IN_UTF8.search(stretch):
        return None
    return b"".join(_SGR.findall(stretch, _last_reset(stretch)))


def _last_reset(stretch: bytes) -> int:
    """Where the last full SGR reset starts (0 if none): looked for near the end first, where it usually is."""
    for start in (max(0, len(stretch) - _NEAR_END), 0):
        found = max(stretch.rfind(reset, start) for reset in _RESETS)
        if found >= 0:
            return found
    return 0
