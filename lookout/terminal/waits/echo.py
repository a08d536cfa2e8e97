"""Where the terminal's echo of an input ends in the output that follows it.

The echo is found in the clean output text (lookout.terminal.waits.stream_text) as the input's visible characters in
order, each within a few characters of the one before: readline's redraws, line wraps, colours and the
kernel's echo all keep them in order, with little in between. Output that does not hold them (a program
that does not echo, a password prompt) ends the search early and nothing, or only what did match, counts
as echo. A wait searches for a stream regex only after the echo, and counts output after it as the
terminal having answered the input (see lookout.terminal.waits.waiting).
"""

from __future__ import annotations

from dataclasses import dataclass

from lookout.terminal.waits.stream_text import clean_stream

FIRST_GAP = 256
"""Characters of other output allowed before the echo starts (a prompt redrawn, output still arriving)."""
GAP = 64
"""Characters allowed between two echoed characters (a wrap, a redraw of the line, a completion hint)."""
MAX_ECHO_CHARS = 8192
"""Only the first this many visible characters of an input are looked for (a large paste's echo beyond
them is not skipped)."""
WINDOW_SLACK = 64 << 10
"""Bytes of output, beyond four per echoed character, within which the echo must be found."""


@dataclass(slots=True)
class EchoTracker:
    """Follows the output after an input at journal offset `since` whose visible characters are `chars`."""

    since: int
    chars: str
    found: int = 0
    """How many of `chars` have been seen."""
    end: int = -1
    """Journal offset just past the last echoed character seen (`since` while none)."""
    settled: bool = False
    """The echo is complete, or the output went on without it."""
    output_after: bool = False
    """Visible output after the settled echo: the terminal answered the input."""
    start: int = -1
    """Journal offset of the first echoed character seen (`since` while none)."""

    def __post_init__(self) -> None:
        self.chars = self.chars[:MAX_ECHO_CHARS]
        self.end = self.start = self.since

    @property
    def window(self) -> int:
        return 4 * len(self.chars.encode("utf-8", "surrogateescape")) + WINDOW_SLACK

    def span(self, raw_offset: int) -> int:
        """Bytes of output `update` reads next (it has nothing left to learn once `output_after` is known)."""
        return 0 if self.output_after else min(raw_offset, self.since + self.window) - self.since

    def update(self, raw: bytes) -> None:
        """Learn from `raw`, the output from `since` on (at most `window` bytes of it: the caller reads it).
        A copy of the echo that follows it on the same line (readline redrawing a paste highlighted) is
        echo too."""
        if self.output_after:
            return
        text = clean_stream(raw, self.since)
        s = text.text
        more = len(raw) < self.window  # output may still come within the window
        found, pos, waiting = _follow(s, self.chars, 0, more)
        while self.chars and found == len(self.chars):
            first = s.find(self.chars[0], pos, pos + FIRST_GAP + 1)
            if first < 0 or "\n" in s[pos:first]:
                break  # no copy on the same line
            again, end, pending = _follow(s, self.chars, pos, more)
            if again < len(self.chars):
                waiting = waiting or pending  # a redraw may be under way
                break
            pos = end
        first = s.find(self.chars[0], 0, FIRST_GAP + 1) if found else -1
        self.start = text.raw_offset(first) if first >= 0 else self.since
        self._progress(found, text.raw_offset(pos) if found else self.since, settled=not waiting)
        if not waiting and s[pos:].strip():
            self.output_after = True

    def _progress(self, found: int, end: int, settled: bool) -> None:
        self.found, self.end, self.settled = found, end, settled


def _follow(text: str, chars: str, start: int, more: bool) -> tuple[int, int, bool]:
    """How many of `chars` appear in order in `text` from `start`, each within the allowed gap; the position
    after the last one; and whether the rest may still come (the text ended within a gap and `more`)."""
    found, pos = 0, start
    for c in chars:
        limit = FIRST_GAP if found == 0 else GAP
        j = text.find(c, pos, pos + limit + 1)
        if j < 0:
            return found, pos, more and len(text) - pos <= limit
        found, pos = found + 1, j + 1
    return found, pos, False
