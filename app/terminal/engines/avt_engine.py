"""The default screen engine: asciinema's Rust `avt` through the pyavt bindings (tens of MB/s)."""
from __future__ import annotations

from collections.abc import Callable

import avt

from .base import DEFAULT_STYLE, Cell, Color, Cursor, Style
from .escapes import sgr_semicolons, to_7bit
from .modes import AltScreenTracker
from .text import fold_zero_width, utf8_decoder


def _color(color: avt.Color | None) -> Color:
    if isinstance(color, avt.Color.Indexed):
        return color[0]
    if isinstance(color, avt.Color.RGB):
        return (color[0], color[1], color[2])
    return None


def _style(pen: avt.Pen) -> Style:
    if pen.is_default():
        return DEFAULT_STYLE
    return Style(
        fg=_color(pen.foreground), bg=_color(pen.background), bold=pen.bold, faint=pen.faint,
        italic=pen.italic, underline=pen.underline, strikethrough=pen.strikethrough, blink=pen.blink,
        inverse=pen.inverse,
    )


def _cells(line: avt.Line) -> list[Cell]:
    """The line's cells; neighbours with an equal pen (most of them) share one Style."""
    cells: list[Cell] = []
    pen, style = None, DEFAULT_STYLE
    for cell in line.cells:
        if (cell_pen := cell.pen) != pen:
            pen, style = cell_pen, _style(cell_pen)
        cells.append(Cell(cell.char if cell.width else "", cell.width, style))
    return cells


class AvtEngine:
    """ScreenEngine over `avt.Vt` with a bounded scrollback.

    What avt lacks is added here: the alternate-screen flag (tracked from the output), the primary
    scrollback while the alternate screen is shown (avt's `lines()` then holds only the alternate buffer),
    and zero-width characters, which avt would give a cell each (they are folded away before feeding).
    """

    name = "avt"

    def __init__(self, cols: int, rows: int, scrollback: int) -> None:
        self._vt = avt.Vt(cols, rows, scrollback)
        self._cols, self._rows = cols, rows
        self._decoder = utf8_decoder()
        self._alt = AltScreenTracker()
        self._primary_scrollback: list[str] = []  # snapshot taken when the alternate screen was entered

    @property
    def cols(self) -> int:
        return self._cols

    @property
    def rows(self) -> int:
        return self._rows

    def feed(self, data: bytes) -> set[int]:
        text = fold_zero_width(self._decoder.decode(data))
        entered = self._alt.scan(text)
        if entered is None:
            if not self._alt.active:
                self._primary_scrollback = []
            return set(self._vt.feed_str(text)[0])
        changed = set(self._vt.feed_str(text[:entered])[0])
        self._primary_scrollback = self._scrollback_lines()
        changed.update(self._vt.feed_str(text[entered:])[0])
        return changed

    def resize(self, cols: int, rows: int) -> None:
        self._vt.resize(cols, rows)
        self._cols, self._rows = cols, rows

    def row_text(self, row: int) -> str:
        return self._vt.view()[row].text.rstrip()

    def text_rows(self) -> list[str]:
        return [line.text.rstrip() for line in self._vt.view()]

    def row_cells(self, row: int) -> list[Cell]:
        return _cells(self._vt.view()[row])

    def frozen_cells(self) -> Callable[[int], list[Cell]]:
        view = self._vt.view()  # avt's lines are copies: later feeds do not change them
        return lambda row: _cells(view[row])

    def cursor(self) -> Cursor:
        cursor = self._vt.cursor
        return Cursor(min(cursor.col, self._cols - 1), cursor.row, cursor.visible)

    @property
    def alt_screen(self) -> bool:
        return self._alt.active

    @property
    def app_cursor_keys(self) -> bool:
        return self._vt.cursor_key_app_mode

    def scrollback(self, limit: int) -> list[str]:
        if limit <= 0:
            return []
        if self._alt.active:
            return self._primary_scrollback[-limit:]
        return self._scrollback_lines(limit)

    def dump(self) -> str:
        return to_7bit(sgr_semicolons(self._vt.dump()))

    def _scrollback_lines(self, limit: int | None = None) -> list[str]:
        lines = self._vt.lines()
        end = len(lines) - self._rows
        start = 0 if limit is None else max(0, end - limit)
        return [line.text.rstrip() for line in lines[start:end]]
