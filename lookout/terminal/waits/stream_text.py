"""The output stream as text for regex waits: escape sequences and carriage returns removed, with a map
from positions in that text back to byte offsets in the raw journal."""

from __future__ import annotations

import bisect
import re
from dataclasses import dataclass

_NOISE = re.compile(
    rb"\x1b\[[0-?]*[ -/]*[@-~]"  # CSI
    rb"|\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)?"  # OSC
    rb"|\x1b[PX^_][^\x1b]*(?:\x1b\\)?"  # DCS, SOS, PM, APC
    rb"|\x1b[ -/]*[0-~]"  # other escapes (charset designation, keypad modes, ...)
    rb"|[\x00-\x08\x0b\x0c\x0d\x0e-\x1a\x1c-\x1f\x7f]"  # controls except TAB and LF
)


@dataclass(frozen=True, slots=True)
class StreamText:
    """`text` is the decoded clean text of raw bytes starting at `base` (undecodable bytes are kept as
    surrogate escapes so positions stay exact)."""

    text: str
    base: int
    _clean_starts: tuple[int, ...]
    _raw_starts: tuple[int, ...]

    def raw_offset(self, char_index: int) -> int:
        """The journal offset of text position `char_index` (a match end maps just past its last byte)."""
        clean = len(self.text[:char_index].encode("utf-8", "surrogateescape"))
        if clean == 0:
            return self.base + (self._raw_starts[0] if self._raw_starts else 0)
        i = bisect.bisect_right(self._clean_starts, clean - 1) - 1
        return self.base + self._raw_starts[i] + (clean - 1 - self._clean_starts[i]) + 1


def clean_stream(raw: bytes, base: int) -> StreamText:
    """Strip terminal noise from `raw` (which starts at journal offset `base`)."""
    parts: list[bytes] = []
    clean_starts: list[int] = []
    raw_starts: list[int] = []
    clean_len = 0
    pos = 0
    for m in _NOISE.finditer(raw):
        if m.start() > pos:
            clean_starts.append(clean_len)
            raw_starts.append(pos)
            parts.append(raw[pos : m.start()])
            clean_len += m.start() - pos
        pos = m.end()
    if pos < len(raw):
        clean_starts.append(clean_len)
        raw_starts.append(pos)
        parts.append(raw[pos:])
    text = b"".join(parts).decode("utf-8", "surrogateescape")
    return StreamText(text, base, tuple(clean_starts), tuple(raw_starts))
