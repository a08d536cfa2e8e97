"""Text helpers shared by the screen engines: incremental UTF-8 decoding and character widths.

Widths come from `wcwidth`, so both engines agree with each other and with what most programs assume.
"""
from __future__ import annotations

import codecs
import functools
import itertools
import re
import unicodedata
from typing import NamedTuple

from wcwidth import wcwidth

ZWJ = "\u200d"
"""ZERO WIDTH JOINER: glues the wide character after it to the cell before it (emoji ZWJ sequences)."""

_ASCII = bytes(range(128))

char_width = functools.lru_cache(maxsize=4096)(wcwidth)
"""Display width of one character: 0, 1 or 2; -1 for a control character."""


def utf8_decoder() -> codecs.IncrementalDecoder:
    """A UTF-8 decoder that keeps a character split across two feeds and replaces invalid bytes."""
    return codecs.getincrementaldecoder("utf-8")(errors="replace")


def _char_class(codepoints: list[int]) -> str:
    """A regex character class body for the given sorted code points, written as ranges."""
    parts = []
    for _, run in itertools.groupby(enumerate(codepoints), lambda item: item[1] - item[0]):
        first, *rest = (cp for _, cp in run)
        last = rest[-1] if rest else first
        parts.append(re.escape(chr(first)) if first == last else f"{re.escape(chr(first))}-{re.escape(chr(last))}")
    return "".join(parts)


class _Patterns(NamedTuple):
    bmp: re.Pattern[str]  # a BMP zero-width character, with the wide character after it if it is a ZWJ
    astral: re.Pattern[str]  # an astral zero-width character


@functools.cache
def _patterns() -> _Patterns:
    """Built once (about 0.1 s) from `wcwidth`.

    Python's `re` checks a class holding astral ranges range by range, 50x slower than a BMP-only class, so
    the astral ranges are only tried (by a lookbehind) on characters already known to be astral.
    """
    zero_bmp: list[int] = []
    zero_astral: list[int] = []
    wide: list[int] = []
    for cp in itertools.chain(range(0xA0, 0x20000), range(0xE0000, 0xE1000)):
        width = wcwidth(chr(cp))
        if width == 0:
            (zero_bmp if cp < 0x10000 else zero_astral).append(cp)
        elif width == 2:
            wide.append(cp)
    bmp = _char_class(zero_bmp)
    return _Patterns(
        bmp=re.compile(f"[{bmp}](?:(?<={ZWJ})[{_char_class(wide)}])?"),
        astral=re.compile(f"[\U00010000-\U0010ffff](?<=[{_char_class(zero_astral)}])"),
    )


def fold_zero_width(text: str) -> str:
    """Compose combining marks where Unicode can (NFC), then drop the zero-width characters left, and the
    wide character after each ZWJ.

    For an engine that gives every code point a cell of its own: without this, each combining mark, ZWJ or
    variation selector would push the rest of the row one column right (and wrap full rows).
    """
    if text.isascii():
        return text
    patterns = _patterns()
    # Only the non-ASCII characters can be zero-width: search just them (deleting the ASCII bytes runs at
    # memory speed, the class search over the whole text would not).
    others = text.encode("utf-8", "surrogatepass").translate(None, _ASCII).decode("utf-8", "surrogatepass")
    if patterns.bmp.search(others) is None and patterns.astral.search(others) is None:
        return text
    if not unicodedata.is_normalized("NFC", text):
        text = unicodedata.normalize("NFC", text)
    return patterns.astral.sub("", patterns.bmp.sub("", text))
