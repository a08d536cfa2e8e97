"""The terminal sizes lookout accepts, wherever a size enters: the HTTP API and MCP (app.schemas.terminal), the
holder's socket, the journal's resize records, checkpoints, meta.json and archives, and the screen engines
(one of which aborts the whole process on a zero width)."""

from __future__ import annotations

MIN_SIZE = 2
MAX_COLS = 1000
MAX_ROWS = 500


def size_error(cols: object, rows: object) -> str | None:
    """Why `cols` x `rows` is not a terminal size lookout accepts, or None when it is."""
    for name, value, most in (("cols", cols, MAX_COLS), ("rows", rows, MAX_ROWS)):
        if not isinstance(value, int) or isinstance(value, bool):
            return f"{name} must be an integer, not {type(value).__name__}"
        if not MIN_SIZE <= value <= most:
            return f"{name}={value} is outside {MIN_SIZE}..{most}"
    return None


def parse_size(text: object) -> tuple[int, int] | None:
    """A journal resize record's value `COLSxROWS` as (cols, rows), or None when it is not an accepted size."""
    if not isinstance(text, str) or text.count("x") != 1:
        return None
    cols_text, rows_text = text.split("x")
    if not (cols_text.isascii() and cols_text.isdigit() and rows_text.isascii() and rows_text.isdigit()):
        return None
    if len(cols_text) > 6 or len(rows_text) > 6:
        return None
    cols, rows = int(cols_text), int(rows_text)
    return (cols, rows) if size_error(cols, rows) is None else None
