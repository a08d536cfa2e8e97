"""Colours of the layered screenshot: engine colours as "#rrggbb", and a palette of one-character symbols.

Indexed colours (0-255) are mapped through the standard xterm palette, 24-bit colours are written as they
are, and the default colour has no value (symbol "0", mapped to null). A palette has 61 symbols besides
"0" (1-9, a-z, A-Z); the most used colours get them, and any further colour is given the symbol of the
nearest colour already in the palette (the number of colours merged that way is reported).
"""

from __future__ import annotations

from collections.abc import Mapping

from lookout.terminal.screen.engines.base import Color

DEFAULT_SYMBOL = "0"
SYMBOLS = "123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
DEFAULT_FG = "default-fg"
"""The terminal's default foreground used as a background (reverse video of a default-coloured cell)."""
DEFAULT_BG = "default-bg"
"""The terminal's default background used as a foreground (reverse video of a default-coloured cell)."""
_THEME_COLOURS = (DEFAULT_FG, DEFAULT_BG)

_ANSI_16 = (
    "#000000", "#cd0000", "#00cd00", "#cdcd00", "#0000ee", "#cd00cd", "#00cdcd", "#e5e5e5",
    "#7f7f7f", "#ff0000", "#00ff00", "#ffff00", "#5c5cff", "#ff00ff", "#00ffff", "#ffffff",
)  # fmt: skip
_CUBE_LEVELS = (0, 95, 135, 175, 215, 255)


def _rgb_hex(r: int, g: int, b: int) -> str:
    return f"#{r:02x}{g:02x}{b:02x}"


XTERM_256: tuple[str, ...] = (
    _ANSI_16
    + tuple(_rgb_hex(_CUBE_LEVELS[i // 36], _CUBE_LEVELS[i // 6 % 6], _CUBE_LEVELS[i % 6]) for i in range(216))
    + tuple(_rgb_hex(8 + 10 * i, 8 + 10 * i, 8 + 10 * i) for i in range(24))
)
"""xterm's default 256-colour palette as "#rrggbb"."""


def color_hex(color: Color) -> str | None:
    """An engine colour as "#rrggbb"; None for the default colour."""
    if color is None:
        return None
    if isinstance(color, int):
        return XTERM_256[color & 0xFF]
    return _rgb_hex(*color)


def _distance(a: str, b: str) -> int:
    """Perceptual distance between two "#rrggbb" colours ("redmean" weighting), scaled to integers."""
    r1, g1, b1 = int(a[1:3], 16), int(a[3:5], 16), int(a[5:7], 16)
    r2, g2, b2 = int(b[1:3], 16), int(b[3:5], 16), int(b[5:7], 16)
    mean = (r1 + r2) // 2
    dr, dg, db = r1 - r2, g1 - g2, b1 - b2
    return ((512 + mean) * dr * dr >> 8) + 4 * dg * dg + ((767 - mean) * db * db >> 8)


def assign_symbols(usage: Mapping[str, int]) -> tuple[dict[str, str], int]:
    """Symbols for the colours in `usage` (colour -> number of cells): the theme colours first, then by
    use, most used first (ties: first seen). Returns colour -> symbol and how many colours had to share
    the symbol of their nearest neighbour because the palette was full."""
    ordered = sorted(usage, key=lambda colour: (colour not in _THEME_COLOURS, -usage[colour]))
    symbols = dict(zip(ordered, SYMBOLS, strict=False))  # the colours past the palette's end share symbols
    overflow = ordered[len(SYMBOLS) :]
    kept = [colour for colour in symbols if colour not in _THEME_COLOURS]
    for colour in overflow:
        symbols[colour] = symbols[min(kept, key=lambda other: _distance(colour, other))]
    return symbols, len(overflow)


def palette_legend(symbols: Mapping[str, str]) -> dict[str, str | None]:
    """The `colorPalette` object: "0" (the default colour) -> null, then each symbol -> its colour (for a
    symbol shared after an overflow, the colour that owns it)."""
    legend: dict[str, str | None] = {DEFAULT_SYMBOL: None}
    for colour, symbol in symbols.items():
        legend.setdefault(symbol, colour)
    return legend
