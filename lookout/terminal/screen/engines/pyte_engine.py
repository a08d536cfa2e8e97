"""The pure-Python fallback screen engine: pyte 0.8.2 with its known defects worked around."""

from __future__ import annotations

import copy
import itertools
import logging
import re
from collections.abc import Callable, Mapping
from typing import Any, cast

import pyte
import pyte.charsets
from pyte.screens import Char

from lookout.terminal.holder.sizes import check_size

from .base import Cell, Color, Cursor, Style
from .escapes import partial_escape, sgr, sgr_semicolons
from .modes import DECCKM
from .pyte_screen import Line, PyteScreen
from .text import char_width, utf8_decoder

log = logging.getLogger(__name__)

_CHARSETS: dict[str, str] = dict(pyte.charsets.MAPS)
"""pyte's character sets by their designation letter (B: ASCII/Latin-1, 0: DEC line drawing...)."""
_STRING_START = re.compile(r"\x1b[P_^X]")  # DCS, APC, PM, SOS
_STRING_END = re.compile(r"\x07|\x1b\\|(?=\x1b)")  # BEL, ST, or any other escape, which aborts the string
_UNSUPPORTED_CSI = re.compile(r"\x1b\[(?:[<=>][0-?]*[ -/]*|[0-?]*[ -/]+|[0-9;?]*:[0-?]*)[@-~]")


class _Sanitizer:
    """Rewrites decoded output into what pyte parses right: drops DCS/APC/PM/SOS strings (pyte prints their
    payload) and CSI sequences with private markers or intermediates it misreads (`CSI > 4 ; 1 m` would set
    bold and underline), and turns `:` SGR forms into `;`. An unfinished sequence at the end of one text is
    held back for the next."""

    def __init__(self) -> None:
        self._pending = ""
        self._in_string = False

    def __call__(self, text: str) -> str:
        text = self._strip_strings(self._pending + text)
        cut = partial_escape(text)
        self._pending = text[cut:]
        text = text[:cut]
        return _UNSUPPORTED_CSI.sub("", sgr_semicolons(text)) if "\x1b[" in text else text

    def _strip_strings(self, text: str) -> str:
        kept: list[str] = []
        pos = 0
        while True:
            if self._in_string:
                end = _STRING_END.search(text, pos)
                if end is None:
                    return "".join(kept)
                pos = end.end()
                self._in_string = False
            start = _STRING_START.search(text, pos)
            if start is None:
                kept.append(text[pos:])
                return "".join(kept)
            kept.append(text[pos : start.start()])
            pos = start.end()
            self._in_string = True


class _Stream(pyte.Stream):
    """pyte.Stream that also dispatches REP, SU, SD and HPA (pyte maps HPA to `'`), and honours G0/G1
    charset designations (DEC line drawing), which pyte ignores in its UTF-8 mode."""

    csi = {  # noqa: RUF012 (pyte reads it from the instance; its base declares it so)
        **pyte.Stream.csi,
        "b": "repeat_last",
        "S": "scroll_up",
        "T": "scroll_down",
        "`": "cursor_to_column",
    }
    events = pyte.Stream.events | {"repeat_last", "scroll_up", "scroll_down"}

    def __init__(self, screen: PyteScreen) -> None:
        super().__init__(screen)
        self.use_utf8 = False  # input is already decoded text


def _charset_name(charset: str) -> str | None:
    """The designation letter of one of pyte's character sets (what `kept_state` stores)."""
    return next((name for name, known in _CHARSETS.items() if known is charset), None)


class PyteEngine:
    """ScreenEngine over pyte (about 3 MB/s, avt 30x more: only for when avt is unavailable)."""

    name = "pyte"

    def __init__(self, cols: int, rows: int, scrollback: int) -> None:
        check_size(cols, rows)
        self._screen = PyteScreen(cols, rows, scrollback)
        self._stream = _Stream(self._screen)
        self._decoder = utf8_decoder()
        self._sanitize = _Sanitizer()
        self._styles: dict[tuple[object, ...], Style] = {}

    @property
    def cols(self) -> int:
        return self._screen.columns

    @property
    def rows(self) -> int:
        return self._screen.lines

    def feed(self, data: bytes) -> set[int]:
        try:
            self._stream.feed(self._sanitize(self._decoder.decode(data)))
        except Exception as exc:  # noqa: BLE001 (pyte's parser must never take a session down with it)
            # an exception ends pyte's parser (a generator): start a new one on the same screen; the rest of
            # this chunk is lost to the screen (never to the journal), as a sequence torn by a glitch would be
            log.warning("pyte could not take a sequence (%s: %s); its parser restarts", type(exc).__name__, exc)
            self._stream = _Stream(self._screen)
        dirty = self._screen.dirty
        changed = {row for row in dirty if row < self._screen.lines}
        dirty.clear()
        return changed

    def resize(self, cols: int, rows: int) -> None:
        check_size(cols, rows)
        self._screen.resize(rows, cols)

    def row_text(self, row: int) -> str:
        return self._line_text(self._screen.buffer.get(row))

    def text_rows(self) -> list[str]:
        return [self.row_text(row) for row in range(self.rows)]

    def row_cells(self, row: int) -> list[Cell]:
        return self._line_cells(self._screen.buffer.get(row))

    def frozen_cells(self) -> Callable[[int], list[Cell]]:
        buffer = self._screen.buffer
        lines = {row: copy.copy(buffer[row]) for row in range(self.rows) if row in buffer}
        return lambda row: self._line_cells(lines.get(row))

    def cursor(self) -> Cursor:
        cursor = self._screen.cursor
        return Cursor(min(cursor.x, self.cols - 1), cursor.y, not cursor.hidden)

    @property
    def alt_screen(self) -> bool:
        return self._screen.primary is not None

    @property
    def app_cursor_keys(self) -> bool:
        return DECCKM << 5 in self._screen.mode

    def scrollback(self, limit: int) -> list[str]:
        if limit <= 0:
            return []
        history = self._screen.history
        return [self._line_text(line) for line in itertools.islice(history, max(0, len(history) - limit), None)]

    def kept_state(self) -> dict[str, Any]:
        screen = self._screen
        return {
            "charset": screen.charset,
            "g0": _charset_name(screen.g0_charset),
            "g1": _charset_name(screen.g1_charset),
        }

    def restore(self, dump: str, kept: Mapping[str, Any]) -> None:
        self.feed(dump.encode())
        screen = self._screen
        screen.charset = 1 if kept.get("charset") == 1 else 0
        screen.g0_charset = _CHARSETS.get(str(kept.get("g0")), screen.g0_charset)
        screen.g1_charset = _CHARSETS.get(str(kept.get("g1")), screen.g1_charset)

    def dump(self) -> str:
        screen = self._screen
        parts = []
        if screen.primary is not None:
            buffer, saved = screen.primary
            parts += self._dump_rows(buffer)
            parts.append(f"\x1b[{saved.y + 1};{min(saved.x, self.cols - 1) + 1}H\x1b[?1049h")
        parts += self._dump_rows(screen.buffer)
        if screen.margins is not None:
            parts.append(f"\x1b[{screen.margins.top + 1};{screen.margins.bottom + 1}r")
        cursor = self.cursor()
        parts.append(f"\x1b[{cursor.row + 1};{cursor.col + 1}H{sgr(self._style(screen.cursor.attrs))}")
        if not cursor.visible:
            parts.append("\x1b[?25l")
        if self.app_cursor_keys:
            parts.append("\x1b[?1h")
        return "".join(parts)

    def _dump_rows(self, buffer: dict[int, Line]) -> list[str]:
        parts = []
        for y in range(self.rows):
            cells = self._line_cells(buffer.get(y))
            while cells and cells[-1] == Cell(" ", 1):
                cells.pop()
            if not cells:
                continue
            parts.append(f"\x1b[{y + 1}H")
            style = None
            for cell in cells:
                if cell.width:
                    if cell.style != style:
                        style = cell.style
                        parts.append(sgr(style))
                    parts.append(cell.char)
        parts.append("\x1b[0m")
        return parts

    def _line_text(self, line: Line | None) -> str:
        if not line:
            return ""
        return "".join([line[x].data for x in range(self.cols)]).rstrip()

    def _line_cells(self, line: Line | None) -> list[Cell]:
        if line is None:
            line = self._screen.blank_line()
        cells = []
        for x in range(self.cols):
            char = line[x]
            cells.append(Cell(char.data, char_width(char.data[0]) if char.data else 0, self._style(char)))
        return cells

    def _style(self, char: Char) -> Style:
        """The Style of a cell, decoded from PyteScreen's use of Char fields (cached)."""
        key = tuple(char[1:])
        style = self._styles.get(key)
        if style is None:
            if len(self._styles) > 1024:
                self._styles.clear()
            fg, bg, intensity, italics, underscore, strikethrough, reverse, blink = key
            style = self._styles[key] = Style(
                fg=None if fg == "default" else cast(Color, fg),
                bg=None if bg == "default" else cast(Color, bg),
                bold=intensity == 1,
                faint=intensity == 2,
                italic=bool(italics),
                underline=bool(underscore),
                strikethrough=bool(strikethrough),
                blink=bool(blink),
                inverse=bool(reverse),
            )
        return style
