"""The colour and style layers of the layered screenshot, built from rows of cells.

Each row is first cut into runs of cells with an equal style (a row has a few runs, not `cols` cells, so
everything after that works per run). A layer gives every cell one symbol:

- `fgColors`, `bgColors`: a colour symbol from the shared palette (see lookout.terminal.screen.palette), "0" for the
  default colour. Reverse video is applied, so the layers show the colours as displayed: foreground and
  background are swapped, and a default colour that moves to the other side becomes the palette colour
  "default-fg" or "default-bg" (plain reverse video, as in a status line, stays visible that way);
- `styles`: one character for the combination of bold, italic and underline (see STYLE_LEGEND);
- `bold`, `italic`, `underline`: "b", "i" or "u" where the attribute is set, "." elsewhere.

Faint, blink and strikethrough are not reported. A row of a layer is encoded either as `cells` (a string
with one symbol per cell, trailing default symbols cut) or as `runs` (a list of `[start_col, end_col,
symbol]`, end exclusive, default symbols left out); columns count cells from the viewport's left edge, so
they line up with the row's text (a wide character takes two cells).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, Literal

from lookout.terminal.screen.engines.base import Cell, Style
from lookout.terminal.screen.palette import (
    DEFAULT_BG,
    DEFAULT_FG,
    DEFAULT_SYMBOL,
    assign_symbols,
    color_hex,
    palette_legend,
)

CELL_LAYERS = ("fgColors", "bgColors", "styles", "bold", "italic", "underline")
"""The layers built from cells (besides `text` and `cursor`)."""
COLOUR_LAYERS = ("fgColors", "bgColors")
PLAIN_STYLE = "."
_STYLE_CHARS = {
    (False, False, False): ".", (True, False, False): "b", (False, True, False): "i", (False, False, True): "u",
    (True, True, False): "I", (True, False, True): "U", (False, True, True): "J", (True, True, True): "X",
}  # fmt: skip
STYLE_LEGEND: dict[str, str | None] = {
    ".": None, "b": "bold", "i": "italic", "u": "underline",
    "I": "bold+italic", "U": "bold+underline", "J": "italic+underline", "X": "bold+italic+underline",
}  # fmt: skip
_SINGLE = {"bold": "b", "italic": "i", "underline": "u"}

Encoding = Literal["auto", "runs", "cells"]
Chooser = Callable[[list[Any], list[Any]], list[Any]]
"""Given a layer encoded as runs and as cells, returns the one to use."""
StyleRun = tuple[int, int, Style]
"""start column, end column (exclusive), style; columns count from the viewport's left edge."""


def style_runs(cells: Sequence[Cell], left: int, width: int) -> list[StyleRun]:
    """The cells `left` to `left + width` of a row as runs of equal style, covering all of them."""
    if width <= 0:
        return []
    runs: list[StyleRun] = []
    start, style = 0, cells[left].style
    for col in range(1, width):
        current = cells[left + col].style
        if current is not style and current != style:
            runs.append((start, col, style))
            start, style = col, current
    runs.append((start, width, style))
    return runs


def displayed_colours(style: Style) -> tuple[str | None, str | None]:
    """The foreground and background a cell shows, as palette colours (None: the default colour)."""
    fg, bg = color_hex(style.fg), color_hex(style.bg)
    if style.inverse:
        return bg or DEFAULT_BG, fg or DEFAULT_FG
    return fg, bg


def _default_symbol(layer: str) -> str:
    return DEFAULT_SYMBOL if layer in COLOUR_LAYERS else PLAIN_STYLE


@dataclass(frozen=True, slots=True)
class EncodedLayers:
    """The encoded cell layers (layer -> one value per row) with their palette and legend."""

    layers: dict[str, list[Any]]
    palette: dict[str, str | None] | None
    """`colorPalette`, when a colour layer was requested."""
    overflow: int
    """How many colours share a symbol with their nearest neighbour because the palette was full."""
    style_legend: dict[str, str | None] | None
    """`styleLegend`, when a style layer was requested."""


class CellLayers:
    """Collects the style runs of the selected rows, then encodes the requested cell layers."""

    def __init__(self, layers: Sequence[str]) -> None:
        self.layers = [layer for layer in CELL_LAYERS if layer in layers]
        self._colour_layers = [layer for layer in COLOUR_LAYERS if layer in layers]
        self._rows: list[list[StyleRun]] = []
        self._usage: dict[str, int] = {}
        self._colours: dict[Style, tuple[str | None, str | None]] = {}

    def add_row(self, cells: Sequence[Cell], left: int, width: int) -> None:
        runs = style_runs(cells, left, width)
        self._rows.append(runs)
        if not self._colour_layers:
            return
        usage = self._usage
        for start, end, style in runs:
            if style not in self._colours:
                self._colours[style] = displayed_colours(style)
            fg, bg = self._colours[style]
            if fg is not None and "fgColors" in self._colour_layers:
                usage[fg] = usage.get(fg, 0) + end - start
            if bg is not None and "bgColors" in self._colour_layers:
                usage[bg] = usage.get(bg, 0) + end - start

    def encode(self, encoding: Encoding, choose: Chooser) -> EncodedLayers:
        """Every requested layer, each row as runs or cells. With "auto", `choose(runs, cells)` returns the
        rows to use, taking each from one list or the other (the daemon picks the one with fewer tokens)."""
        symbols, overflow = assign_symbols(self._usage)
        per_style: dict[Style, tuple[str, ...]] = {}
        symbol_runs: dict[str, list[list[tuple[int, int, str]]]] = {layer: [] for layer in self.layers}
        for styled in self._rows:
            for layer in self.layers:
                symbol_runs[layer].append([])
            for start, end, style in styled:
                row_symbols = per_style.get(style)
                if row_symbols is None:
                    row_symbols = per_style[style] = self._symbols(style, symbols)
                for layer, symbol in zip(self.layers, row_symbols, strict=True):
                    merged = symbol_runs[layer][-1]
                    if merged and merged[-1][2] == symbol:  # the style changed, not this layer's symbol
                        merged[-1] = (merged[-1][0], end, symbol)
                    else:
                        merged.append((start, end, symbol))
        layers: dict[str, list[Any]] = {}
        for layer, rows in symbol_runs.items():
            default = _default_symbol(layer)
            runs = [_runs(row, default) for row in rows] if encoding != "cells" else []
            cells = [_cells(row, default) for row in rows] if encoding != "runs" else []
            layers[layer] = runs if encoding == "runs" else cells if encoding == "cells" else choose(runs, cells)
        legend = palette_legend(symbols) if self._colour_layers else None
        return EncodedLayers(layers, legend, overflow, self._style_legend(layers) if self._uses_styles else None)

    @property
    def _uses_styles(self) -> bool:
        return any(layer not in COLOUR_LAYERS for layer in self.layers)

    def _symbols(self, style: Style, symbols: dict[str, str]) -> tuple[str, ...]:
        """The symbol of `style` in each requested layer."""
        fg, bg = self._colours.get(style) or displayed_colours(style)
        out = []
        for layer in self.layers:
            if layer == "fgColors":
                out.append(symbols[fg] if fg is not None else DEFAULT_SYMBOL)
            elif layer == "bgColors":
                out.append(symbols[bg] if bg is not None else DEFAULT_SYMBOL)
            elif layer == "styles":
                out.append(_STYLE_CHARS[style.bold, style.italic, style.underline])
            else:
                out.append(_SINGLE[layer] if getattr(style, layer) else PLAIN_STYLE)
        return tuple(out)

    def _style_legend(self, layers: dict[str, list[Any]]) -> dict[str, str | None]:
        """The `styleLegend` object: the style characters that appear in the layers."""
        used: set[str] = set()
        for layer, rows in layers.items():
            if layer in COLOUR_LAYERS:
                continue
            for row in rows:
                used.update(row if isinstance(row, str) else (run[2] for run in row))
        return {char: meaning for char, meaning in STYLE_LEGEND.items() if char in used}


def _runs(row: list[tuple[int, int, str]], default: str) -> list[list[Any]]:
    return [[start, end, symbol] for start, end, symbol in row if symbol != default]


def _cells(row: list[tuple[int, int, str]], default: str) -> str:
    return "".join([symbol * (end - start) for start, end, symbol in row]).rstrip(default)
