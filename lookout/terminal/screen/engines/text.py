"""Text helpers shared by the screen engines: incremental UTF-8 decoding, character widths, and the rules
for what joins a cell (the same as tmux's, which the engines are tested against).

Widths come from `wcwidth`, so both engines agree with each other and with what most programs assume;
regional indicators (the halves of a flag) take one column each, as in tmux, avt and glibc.

A cell holds a character and what tmux appends to it (screen-write.c, `screen_write_cell`): every
zero-width character after it (combining marks, variation selectors, ZERO WIDTH SPACE, emoji tags), and
after a ZERO WIDTH JOINER the ZWJ and the next non-ASCII character whatever its width (👨‍👩‍👧 is one
cell, as wide as 👨). Nothing is normalised (e + U+0301 stays two code points). A ZWJ before an ASCII
character (in the avt engine also before a control or an escape sequence), and a zero-width character with
nothing to join, are dropped. A cell holds at most CELL_BYTES bytes of UTF-8; what would not fit is
dropped. Two quirks of tmux 3.3 are not copied: a ZWJ before ASCII characters stays pending there until the
next non-ASCII character (which then joins the cell before it), and a ZWJ that ends one of its reads of the
pane is lost.
"""

from __future__ import annotations

import codecs
import functools
import itertools
import re
from typing import NamedTuple

ZWJ = "\u200d"
"""ZERO WIDTH JOINER: appends the next non-ASCII character to the cell before it (emoji ZWJ sequences)."""

CELL_BYTES = 21
"""The most UTF-8 bytes one cell holds (tmux's UTF8_SIZE): a 4-person family emoji loses its last member."""

_REGIONAL_INDICATORS = range(0x1F1E6, 0x1F200)


@functools.lru_cache(maxsize=4096)
def char_width(char: str) -> int:
    """Display width of one character: 0, 1 or 2; -1 for a control character."""
    from wcwidth import wcwidth  # here, not at start-up (its tables take 10 ms to import); cached per character

    return 1 if ord(char) in _REGIONAL_INDICATORS else wcwidth(char)


def joined(cell: str, char: str) -> str:
    """The text of a cell after `char` is appended to it (unchanged if it would pass CELL_BYTES)."""
    text = cell + char
    return text if len(text.encode("utf-8", "surrogatepass")) <= CELL_BYTES else cell


def capped(text: str) -> str:
    """`text` (a character and what joins it) as a cell holds it: within CELL_BYTES."""
    if len(text.encode("utf-8", "surrogatepass")) <= CELL_BYTES:
        return text
    cell = text[0]
    for char in text[1:]:
        cell = joined(cell, char)
    return cell


def utf8_decoder() -> codecs.IncrementalDecoder:
    """A UTF-8 decoder that keeps a character split across two feeds and replaces invalid bytes."""
    return codecs.getincrementaldecoder("utf-8")(errors="replace")


def char_class(codepoints: list[int]) -> str:
    """A regex character class body for the given sorted code points, written as ranges."""
    parts = []
    for _, run in itertools.groupby(enumerate(codepoints), lambda item: item[1] - item[0]):
        first, *rest = (cp for _, cp in run)
        last = rest[-1] if rest else first
        parts.append(re.escape(chr(first)) if first == last else f"{re.escape(chr(first))}-{re.escape(chr(last))}")
    return "".join(parts)


class ZeroWidthClasses(NamedTuple):
    """Character class bodies of the zero-width characters other than ZWJ. They are apart because Python's
    `re` checks a class holding astral ranges range by range, 50x slower than a BMP-only class: test an
    astral character against `astral_hull` (two ranges) before `astral`."""

    bmp: str
    astral: str
    astral_hull: str


@functools.cache
def zero_width_classes() -> ZeroWidthClasses:
    """Built once (about 0.1 s) from `char_width`."""
    bmp: list[int] = []
    astral: list[int] = []
    for cp in itertools.chain(range(0xA0, 0x20000), range(0xE0000, 0xE1000)):
        if cp != ord(ZWJ) and char_width(chr(cp)) == 0:
            (bmp if cp < 0x10000 else astral).append(cp)
    planes = [[cp for cp in astral if cp < 0x20000], [cp for cp in astral if cp >= 0x20000]]
    hull = "".join(f"{re.escape(chr(plane[0]))}-{re.escape(chr(plane[-1]))}" for plane in planes if plane)
    return ZeroWidthClasses(char_class(bmp), char_class(astral), hull)
