"""Cells holding more than one code point, for avt, which keeps one code point a cell.

Before text reaches avt, a character with something joined to it (see text.py: combining marks, variation
selectors, ZWJ sequences) is replaced by a stand-in: a code point from a reserved range that avt gives the
width of that character, one stand-in per distinct cell text. avt moves, scrolls, erases, wraps and dumps
that cell like any other; what is read back is translated to the cell text. A code point of the reserved
ranges that the program printed itself gets a stand-in too (meaning itself), so reading back never takes
output for a stand-in.

A zero-width character at the start of a feed joins the character that ended the previous feed (a PTY read
may cut a cluster anywhere): that cell is drawn again with the longer stand-in. One with no character
before it in the text (after a cursor movement, say: vim writes a flag's tag characters after moving to
the column after it) joins the cell left of the cursor, as in tmux: that cell is drawn again in its own
style between a save and a restore of the cursor (DECSC, DECRC). That is skipped (the characters are
dropped) once the program has used the saved cursor, insert mode or origin mode itself, or while the cursor
waits to wrap at the right edge, which DECRC would forget.
"""

from __future__ import annotations

import functools
import logging
import re
from collections.abc import Callable, Iterator

import avt

from .escapes import partial_escape
from .text import ZWJ, capped, zero_width_classes

log = logging.getLogger(__name__)

NARROW = 0x10E000
"""4,096 code points of Supplementary Private Use Area-B, one column wide in avt: narrow stand-ins."""
WIDE = 0x3E000
"""4,096 unassigned code points of plane 3, two columns wide in avt (East Asian Width W): wide stand-ins."""
POOL = 4096
"""Stand-ins of each width. Past that many distinct cell texts, a new one keeps only its first character."""

_RESERVED = f"\\U{WIDE:08x}-\\U{WIDE + POOL - 1:08x}\\U{NARROW:08x}-\\U{NARROW + POOL - 1:08x}"
_ESCAPE = (
    r"\x1b\[[0-?]*[ -/]*[@-~]|\x9b[0-?]*[ -/]*[@-~]"  # CSI
    r"|[\x1b][\]P_^X][^\x07\x1b\x9c]*|[\x90\x9d\x9e\x9f][^\x07\x1b\x9c]*"  # OSC, DCS, APC, PM, SOS payloads
    r"|\x1b[ -/]*[0-~]"  # other escapes (ESC \ ends a string)
)


ORPHAN = "\ud800"
"""Marks where zero-width characters with nothing before them were, in encoded text (a lone surrogate, which
decoded output never holds)."""
_UNSAFE = re.compile(r"\x1b(?:7|\[s|\[4h|\[\?6h)")
"""DECSC, SCOSC, IRM and DECOM: after them the cursor is not saved and restored around a redraw (see the
module docstring)."""


class _Patterns:
    def __init__(self) -> None:
        bmp, astral, hull = zero_width_classes()
        zero_width = f"(?:[{bmp}]|[{hull}](?<=[{astral}]))"
        extra = f"(?:{zero_width}|{ZWJ}[^\x00-\x9f{ZWJ}])"  # what joins the cell before it
        self.needed = re.compile(f"[{bmp}{ZWJ}]|[\U00010000-\U0010ffff](?<=[{astral}{_RESERVED}])")
        """Finds, in the non-ASCII characters of a text, one that makes encoding needed."""
        self.leading = re.compile(f"(?:{extra})+")
        # what joins a cell, and what to tell from it, matched where `start` finds a character that can begin
        # one: a search for a single class skips plain text in C, an alternation is tried at every character
        self.token = re.compile(
            f"(?P<escape>{_ESCAPE})|(?P<extras>(?:{extra})+)|(?P<reserved>[{_RESERVED}](?:{extra})*)|{ZWJ}"
        )
        self.start = re.compile(f"[\x1b\x90\x9b\x9d-\x9f{bmp}{ZWJ}{hull}{_RESERVED}]")
        self.escape_at_end = re.compile(f"(?:{_ESCAPE})\\Z")


@functools.cache
def _patterns() -> _Patterns:
    return _Patterns()


def _tokens(text: str) -> Iterator[re.Match[str]]:
    """The matches of the token pattern in `text`, left to right."""
    patterns = _patterns()
    search, match = patterns.start.search, patterns.token.match
    found = search(text)
    while found is not None:
        token = match(text, found.start())
        if token is None:  # a character of the zero-width hull that is not zero-width
            found = search(text, found.start() + 1)
        else:
            yield token
            found = search(text, token.end())


@functools.lru_cache(maxsize=4096)
def avt_width(char: str) -> int:
    """The columns avt gives `char`."""
    vt = avt.Vt(4, 1, 0)
    vt.feed_str(char)
    return vt.cursor.col


_ASCII = bytes(range(128))


def _drawn(char: str) -> bool:
    """Whether `char` (not part of an escape sequence) is drawn in a cell."""
    return char >= " " and not "\x7f" <= char <= "\x9f"


def _reserved(char: str) -> bool:
    return any(base <= ord(char) < base + POOL for base in (NARROW, WIDE))


class ClusterCodec:
    """Stand-ins for the multi-code-point cells of one avt.Vt (see the module docstring)."""

    def __init__(self, vt: avt.Vt, pen_sgr: Callable[[avt.Pen], str]) -> None:
        self._vt = vt
        self._pen_sgr = pen_sgr
        self._stand_ins: dict[str, str] = {}  # cell text -> stand-in
        self._texts: dict[str, str] = {}  # stand-in -> cell text
        self._by_ord: dict[int, str] = {}  # the same, for str.translate
        self._used = {NARROW: 0, WIDE: 0}
        self._full = False
        self._previous = ""  # the last text given to avt
        self._held = ""  # a ZWJ that ended the last feed: what follows decides whether it joins
        self._orphans: list[str] = []  # zero-width characters where ORPHAN is, to join left of the cursor
        self.unsafe = False
        """The program used one of _UNSAFE (kept with checkpoints: a dump restores the screen, not this)."""

    def encode(self, text: str) -> str:
        """The text to give avt for `text`, the next decoded output."""
        if self._held:
            text, self._held = self._held + text, ""
        if text.isascii():
            self._previous = text
            return text
        patterns = _patterns()
        # Only the non-ASCII characters can need encoding: search just them (deleting the ASCII bytes runs at
        # memory speed, the class search over the whole text would not).
        others = text.encode("utf-8", "surrogatepass").translate(None, _ASCII).decode("utf-8", "surrogatepass")
        if patterns.needed.search(others) is None:
            self._previous = text
            return text
        if text.endswith(ZWJ):
            text, self._held = text[:-1], ZWJ
        prefix = ""
        leading = patterns.leading.match(text)
        if leading is not None:
            prefix = self._redraw_previous(leading.group()) or self._orphan(leading.group())
            text = text[leading.end() :]
        context = "" if prefix else self._previous[partial_escape(self._previous) :]
        encoded = prefix + self._substitute(text, context)
        self._previous = encoded or self._previous
        return encoded

    def feed(self, encoded: str) -> set[int]:
        """Feed avt encoded text; the rows that changed."""
        if not self.unsafe and _UNSAFE.search(encoded):
            self.unsafe = True
        if not self._orphans or ORPHAN not in encoded:
            return set(self._vt.feed_str(encoded)[0])
        *pieces, last = encoded.split(ORPHAN)
        changed: set[int] = set()
        for piece in pieces:
            changed.update(self._vt.feed_str(piece)[0])
            changed.update(self._vt.feed_str(self._join_left(self._orphans.pop(0)))[0])
        changed.update(self._vt.feed_str(last)[0])
        return changed

    def decode(self, text: str) -> str:
        """`text` read from avt with every stand-in replaced by its cell text."""
        return text if not self._by_ord or text.isascii() else text.translate(self._by_ord)

    def cell_text(self, char: str) -> str:
        """The text of a cell whose char avt holds."""
        return self._texts.get(char, char) if char > "\U0003dfff" else char

    def forget_position(self) -> None:
        """The cursor may have moved since the last feed (a resize): do not join what comes to that cell."""
        self._previous = ""

    def _substitute(self, text: str, context: str) -> str:
        """`text` with stand-ins. `context` is an escape sequence the last feed began: parsed with `text`, so
        that its end is not taken for a character to join to (unless it is no sequence after all)."""
        if context:
            encoded = self._stand_ins_in(context + text)
            if encoded.startswith(context):
                return encoded[len(context) :]
        return self._stand_ins_in(text)

    def _stand_ins_in(self, text: str) -> str:
        out: list[str] = []
        stand_ins = self._stand_ins
        pos = floor = 0  # floor: where a character to join to may start (not in an escape sequence)
        for match in _tokens(text):
            kind = match.lastgroup
            if kind == "escape":
                floor = match.end()
                continue
            start, end = match.span()
            if kind == "extras" and start > floor and _drawn(text[start - 1]):
                cell = text[start - 1 : end]
                out += (text[pos : start - 1], stand_ins.get(cell) or self._stand_in(capped(cell)))
            elif kind == "reserved":
                out += (text[pos:start], self._stand_in(capped(match.group())))
            elif kind == "extras":  # no character before it in the text
                out += (text[pos:start], self._orphan(match.group()))
            else:  # a ZWJ before an ASCII character or a control: dropped
                out.append(text[pos:start])
            pos = floor = end
        out.append(text[pos:])
        return "".join(out)

    def _redraw_previous(self, extras: str) -> str:
        """Escapes that draw the cell of the character that ended the last feed again, with `extras` joined;
        "" (the extras are dropped) if no character ended it or that cell no longer holds it."""
        previous = self._previous
        last = previous[-1:]
        if not last or not _drawn(last) or _patterns().escape_at_end.search(previous[-256:]):
            return ""
        cursor, width = self._vt.cursor, avt_width(last)
        col = min(cursor.col, self._vt.size[0]) - width
        if col < 0 or self._vt[cursor.row][col].char != last:
            return ""
        return f"\x1b[{col + 1}G{self._stand_in(capped(self._texts.get(last, last) + extras))}"

    def _orphan(self, extras: str) -> str:
        self._orphans.append(extras)
        return ORPHAN

    def _join_left(self, extras: str) -> str:
        """Escapes that draw the cell left of the cursor again with `extras` joined, keeping the cursor and
        pen; "" (the extras are dropped) where that is not safe (see the module docstring) or no cell is."""
        cursor = self._vt.cursor
        if self.unsafe or not 0 < cursor.col < self._vt.size[0]:
            return ""
        line = self._vt[cursor.row]
        col = cursor.col - 1
        if line[col].width == 0 and col > 0:  # the right half of a wide character
            col -= 1
        cell = line[col]
        stand_in = self._stand_in(capped(self._texts.get(cell.char, cell.char) + extras))
        return f"\x1b7\x1b[{cursor.row + 1};{col + 1}H{self._pen_sgr(cell.pen)}{stand_in}\x1b8"

    def _stand_in(self, text: str) -> str:
        stand_in = self._stand_ins.get(text)
        if stand_in is not None:
            return stand_in
        pool = WIDE if avt_width(text[0]) == 2 else NARROW
        if self._used[pool] == POOL:
            if not self._full:
                self._full = True
                log.warning("over %d distinct multi-code-point cells: new ones keep their first character", POOL)
            return "\ufffd" if _reserved(text[0]) else text[0]
        stand_in = chr(pool + self._used[pool])
        self._used[pool] += 1
        self._stand_ins[text], self._texts[stand_in], self._by_ord[ord(stand_in)] = stand_in, text, text
        return stand_in
