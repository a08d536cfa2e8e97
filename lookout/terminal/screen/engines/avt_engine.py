"""The default screen engine: asciinema's Rust `avt` through the pyavt bindings (tens of MB/s)."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

import avt

from lookout.terminal.holder.sizes import check_size

from .avt_clusters import ClusterCodec
from .base import DEFAULT_STYLE, Cell, Color, Cursor, Style
from .escapes import sgr, sgr_semicolons, to_7bit
from .modes import AltScreenTracker
from .text import utf8_decoder


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
        fg=_color(pen.foreground),
        bg=_color(pen.background),
        bold=pen.bold,
        faint=pen.faint,
        italic=pen.italic,
        underline=pen.underline,
        strikethrough=pen.strikethrough,
        blink=pen.blink,
        inverse=pen.inverse,
    )


def _cells(line: avt.Line, cell_text: Callable[[str], str]) -> list[Cell]:
    """The line's cells, each with its whole text (`cell_text` turns a stand-in back into the cluster it
    stands for); neighbours with an equal pen (most of them) share one Style."""
    cells: list[Cell] = []
    pen, style = None, DEFAULT_STYLE
    for cell in line.cells:
        if (cell_pen := cell.pen) != pen:
            pen, style = cell_pen, _style(cell_pen)
        cells.append(Cell(cell_text(cell.char) if cell.width else "", cell.width, style))
    return cells


class AvtEngine:
    """ScreenEngine over `avt.Vt` with a bounded scrollback.

    What avt lacks is added here: the alternate-screen flag (tracked from the output), the primary
    scrollback while the alternate screen is shown (avt's `lines()` then holds only the alternate buffer),
    and cells of more than one code point (a character with combining marks, variation selectors or a ZWJ
    sequence), which avt holds as stand-ins (see avt_clusters.py).
    """

    name = "avt"

    def __init__(self, cols: int, rows: int, scrollback: int) -> None:
        check_size(cols, rows)
        self._vt = avt.Vt(cols, rows, scrollback)
        self._cols, self._rows = cols, rows
        self._decoder = utf8_decoder()
        self._clusters = ClusterCodec(self._vt, lambda pen: sgr(_style(pen)))
        self._alt = AltScreenTracker()
        self._primary_scrollback: list[str] = []  # snapshot taken when the alternate screen was entered

    @property
    def cols(self) -> int:
        return self._cols

    @property
    def rows(self) -> int:
        return self._rows

    def feed(self, data: bytes) -> set[int]:
        text = self._clusters.encode(self._decoder.decode(data))
        entered = self._alt.scan(text)
        if entered is None:
            if not self._alt.active:
                self._primary_scrollback = []
            return self._clusters.feed(text)
        changed = self._clusters.feed(text[:entered])
        self._primary_scrollback = self._scrollback_lines()
        changed.update(self._clusters.feed(text[entered:]))
        return changed

    def resize(self, cols: int, rows: int) -> None:
        check_size(cols, rows)
        self._vt.resize(cols, rows)
        self._clusters.forget_position()
        self._cols, self._rows = cols, rows

    def row_text(self, row: int) -> str:
        return self._clusters.decode(self._vt[row].text.rstrip())

    def text_rows(self) -> list[str]:
        decode = self._clusters.decode
        return [decode(line.text.rstrip()) for line in self._vt.view()]

    def row_cells(self, row: int) -> list[Cell]:
        return _cells(self._vt[row], self._clusters.cell_text)

    def frozen_cells(self) -> Callable[[int], list[Cell]]:
        view = self._vt.view()  # avt's lines are copies: later feeds do not change them
        cell_text = self._clusters.cell_text
        return lambda row: _cells(view[row], cell_text)

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
        return self._clusters.decode(to_7bit(sgr_semicolons(self._vt.dump())))

    def kept_state(self) -> dict[str, Any]:
        return {"unsafe": self._clusters.unsafe}

    def restore(self, dump: str, kept: Mapping[str, Any]) -> None:
        self.feed(dump.encode())
        self._clusters.unsafe = bool(kept.get("unsafe"))  # the dump's own DECSC says nothing of the program's

    def _scrollback_lines(self, limit: int | None = None) -> list[str]:
        lines = self._vt.lines()
        end = len(lines) - self._rows
        start = 0 if limit is None else max(0, end - limit)
        decode = self._clusters.decode
        return [decode(line.text.rstrip()) for line in lines[start:end]]
