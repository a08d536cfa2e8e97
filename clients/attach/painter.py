"""Drawing a terminal's screen in a person's window of any size (pure): the screen at the size the agent set,
clipped to a smaller window or padded in a larger one, never reflowed; the window is not the PTY."""

from __future__ import annotations

from app.terminal.engines.base import ScreenEngine, Style
from app.terminal.engines.escapes import sgr

ENTER = "\x1b[?1049h\x1b[H\x1b[2J"
"""The person's alternate screen, cleared: what they had on screen comes back on LEAVE."""
LEAVE = "\x1b[0m\x1b[?25h\x1b[?1049l"


def paint(engine: ScreenEngine, window_cols: int, window_rows: int) -> str:
    """An escape string that draws the top-left of the screen that fits the window, blanks the rest of the
    window, and puts the cursor where the program has it (hidden if it falls outside the window)."""
    cols, rows = min(engine.cols, window_cols), min(engine.rows, window_rows)
    out = ["\x1b[?25l"]
    for row in range(rows):
        out.append(f"\x1b[{row + 1};1H")
        style: Style | None = None
        used = 0
        for cell in engine.row_cells(row):
            if not cell.char and cell.width == 0:  # the right half of a wide character
                continue
            width = max(cell.width, 1)
            if used + width > cols:
                break
            if cell.style != style:
                style = cell.style
                out.append(sgr(style))
            out.append(cell.char or " ")
            used += width
        out.append("\x1b[0m\x1b[K")
    if rows < window_rows:
        out.append(f"\x1b[{rows + 1};1H\x1b[J")
    cursor = engine.cursor()
    if cursor.row < rows and cursor.col < cols:
        out.append(f"\x1b[{cursor.row + 1};{cursor.col + 1}H")
        if cursor.visible:
            out.append("\x1b[?25h")
    return "".join(out)


def parse_key(name: str) -> int:
    """The byte a detach key sends: `C-\\` (the default, as in dtach), `C-a` ... `C-z`, `^X`. ValueError else."""
    spec = name[2:] if name.startswith(("C-", "c-")) else name[1:] if name.startswith("^") and len(name) == 2 else None
    if spec is None or len(spec) != 1 or not 0x40 <= ord(spec.upper()) <= 0x5F:
        raise ValueError(f"a detach key is C-<key> (C-\\\\, C-a ... C-z, C-], C-^, C-_) or ^<key>, not {name!r}")
    return ord(spec.upper()) - 0x40
