"""Drawing a terminal's screen in a person's window of any size (pure): the screen at the size the agent set,
never reflowed; the window is not the PTY. A larger window shows all of it, padded. A smaller one shows the
part that holds the cursor, as tmux pans a client smaller than its window (`View`): the part stays put while
the cursor is in it (or hidden), and when the cursor leaves it, it moves to put the cursor in its middle, within
the screen; the window's last row is then a status line that says so (lookout.clients.attach.status)."""

from __future__ import annotations

from dataclasses import dataclass

from lookout.terminal.screen.engines.base import Cell, Cursor, ScreenEngine, Style
from lookout.terminal.screen.engines.escapes import sgr

ENTER = "\x1b[?1049h\x1b[H\x1b[2J"
"""The person's alternate screen, cleared: what they had on screen comes back on LEAVE."""
LEAVE = "\x1b[0m\x1b[?25h\x1b[?1049l"


@dataclass(frozen=True, slots=True)
class View:
    """The part of the screen a window shows: `cols` x `rows` cells from column `left` and row `top`; `clipped`
    when that is not all of the screen (the window's last row, if it has two, is then the status line)."""

    left: int
    top: int
    cols: int
    rows: int
    clipped: bool


def follow(screen: tuple[int, int], window: tuple[int, int], cursor: Cursor, previous: View | None = None) -> View:
    """The view of a screen of `screen` (cols, rows) in a window of `window` (cols, rows) that keeps the cursor
    in sight, moving from `previous` (the view painted last) only when the cursor left it."""
    (cols, rows), (window_cols, window_rows) = screen, window
    if window_cols >= cols and window_rows >= rows:
        return View(0, 0, cols, rows, clipped=False)
    shown_cols, shown_rows = min(cols, window_cols), min(rows, window_rows - 1 if window_rows > 1 else 1)
    left = _pan(previous.left if previous else 0, cursor.col, cursor.visible, shown_cols, cols)
    top = _pan(previous.top if previous else 0, cursor.row, cursor.visible, shown_rows, rows)
    return View(left, top, shown_cols, shown_rows, clipped=True)


def _pan(start: int, at: int, visible: bool, shown: int, total: int) -> int:
    """The first of the `shown` of `total` cells of one axis: `start`, or, if the cursor (at `at`) is visible and
    outside `start .. start + shown`, the one that puts it in the middle; always within the screen."""
    if visible and not start <= at < start + shown:
        start = at - shown // 2
    return max(0, min(start, total - shown))


def paint(engine: ScreenEngine, window_cols: int, window_rows: int, view: View, status: str = "") -> str:
    """An escape string that draws the `view` of the screen, blanks the rest of the window but for its last row,
    which shows `status` (an escape string one row wide) when given, and puts the cursor where the program has
    it (hidden if it falls outside the view)."""
    out = ["\x1b[?25l"]
    for row in range(view.rows):
        out.append(f"\x1b[{row + 1};1H")
        _row(out, engine.row_cells(view.top + row), view.left, view.cols)
        out.append("\x1b[0m\x1b[K")
    if view.rows < window_rows:
        out.append(f"\x1b[{view.rows + 1};1H\x1b[J")
    if status and window_rows > view.rows:
        out.append(f"\x1b[{window_rows};1H{status}\x1b[0m")
    cursor = engine.cursor()
    row, col = cursor.row - view.top, cursor.col - view.left
    if 0 <= row < view.rows and 0 <= col < view.cols:
        out.append(f"\x1b[{row + 1};{col + 1}H")
        if cursor.visible:
            out.append("\x1b[?25h")
    return "".join(out)


def _row(out: list[str], cells: list[Cell], left: int, width: int) -> None:
    """The cells `left .. left + width` of a row; a wide character cut by an edge of the view is a blank."""
    style: Style | None = None
    for col in range(left, min(left + width, len(cells))):
        cell = cells[col]
        if not cell.char and cell.width == 0:  # the right half of a wide character
            if col > left:
                continue
            char = " "  # its left half is outside the view
        elif cell.width == 2 and col + 1 >= left + width:
            char = " "  # its right half would be outside the view
        else:
            char = cell.char or " "
        if cell.style != style:
            style = cell.style
            out.append(sgr(style))
        out.append(char)


def parse_key(name: str) -> int:
    """The byte a detach key sends: `C-\\` (the default, as in dtach), `C-a` ... `C-z`, `^X`. ValueError else."""
    spec = name[2:] if name.startswith(("C-", "c-")) else name[1:] if name.startswith("^") and len(name) == 2 else None
    if spec is None or len(spec) != 1 or not 0x40 <= ord(spec.upper()) <= 0x5F:
        raise ValueError(f"a detach key is C-<key> (C-\\\\, C-a ... C-z, C-], C-^, C-_) or ^<key>, not {name!r}")
    return ord(spec.upper()) - 0x40


def key_name(byte: int) -> str:
    """The name `parse_key` takes for a detach key's byte: 0x1C -> "C-\\", 1 -> "C-a"."""
    char = chr(byte + 0x40)
    return f"C-{char.lower() if char.isalpha() else char}"
