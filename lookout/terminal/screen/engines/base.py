"""The screen engine protocol shared by every terminal emulator lookout can use.

An engine turns the bytes a program wrote into a grid of cells. It decodes UTF-8 itself, incrementally,
so a character split across two feeds is never broken. Rows are indexed from 0 (top of the view).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, Protocol

Color = int | tuple[int, int, int] | None
"""None is the default colour; an int is an indexed colour (0-255); a tuple is 24-bit RGB."""


@dataclass(frozen=True, slots=True)
class Style:
    """Graphic rendition of one cell."""

    fg: Color = None
    bg: Color = None
    bold: bool = False
    faint: bool = False
    italic: bool = False
    underline: bool = False
    strikethrough: bool = False
    blink: bool = False
    inverse: bool = False


DEFAULT_STYLE = Style()


@dataclass(frozen=True, slots=True)
class Cell:
    """One grid cell: its text (a grapheme, possibly with combining marks; "" for the right half of a wide
    character), its display width (0, 1 or 2) and its style."""

    char: str
    width: int
    style: Style = DEFAULT_STYLE


@dataclass(frozen=True, slots=True)
class Cursor:
    col: int
    row: int
    visible: bool = True


class ScreenEngine(Protocol):
    """What the terminal session needs from an emulator."""

    name: str

    @property
    def cols(self) -> int: ...

    @property
    def rows(self) -> int: ...

    def feed(self, data: bytes) -> set[int]:
        """Feed raw PTY bytes; return the indices of the view rows that changed."""

    def resize(self, cols: int, rows: int) -> None: ...

    def row_text(self, row: int) -> str:
        """The text of one view row, trailing blanks stripped."""

    def text_rows(self) -> list[str]:
        """Every view row, trailing blanks stripped."""

    def row_cells(self, row: int) -> list[Cell]:
        """The cells of one view row, exactly `cols` of them."""

    def frozen_cells(self) -> Callable[[int], list[Cell]]:
        """`row_cells` of the view as it is now: safe to call from another thread while the engine is fed,
        and cheap to take (the cells are made when asked for)."""

    def cursor(self) -> Cursor: ...

    @property
    def alt_screen(self) -> bool:
        """True while the alternate screen buffer is active."""

    @property
    def app_cursor_keys(self) -> bool:
        """True while DECCKM (application cursor keys) is set."""

    def scrollback(self, limit: int) -> list[str]:
        """Up to `limit` most recent lines that scrolled off the top of the primary screen, oldest first."""

    def dump(self) -> str:
        """An escape string that rebuilds this screen (text, styles, cursor) when fed to a fresh engine of
        the same size."""

    def kept_state(self) -> dict[str, Any]:
        """What the engine holds besides what `dump` repaints and that changes what later output does (the
        character set in use, its own decoding modes), as plain JSON data: stored with a checkpoint."""

    def restore(self, dump: str, kept: Mapping[str, Any]) -> None:
        """Become (a fresh engine of the same size) the engine whose `dump()` and `kept_state()` these are."""
