"""The sizes a terminal may have, declared once, wherever a size enters: the HTTP API and MCP
(lookout.schemas.terminal), the holder's socket, a terminal's files read back (meta.json, a resize record of
output.idx, a checkpoint) and archives, and the screen engines: none is ever made or resized to a size it
cannot take (0 columns aborts one, 65535x65535 is gigabytes). Pure, standard library only (holders use it)."""

from __future__ import annotations

MIN_SIZE = 2
MAX_COLS = 1000
MAX_ROWS = 500


def check_size(cols: object, rows: object) -> tuple[int, int]:
    """(cols, rows) when both are integers within the limits; ValueError saying what is wrong otherwise."""
    if type(cols) is not int or type(rows) is not int:
        raise ValueError(f"size {cols!r}x{rows!r} is not two integers")
    if not (MIN_SIZE <= cols <= MAX_COLS and MIN_SIZE <= rows <= MAX_ROWS):
        raise ValueError(f"size {cols}x{rows} is outside {MIN_SIZE}..{MAX_COLS} columns by {MIN_SIZE}..{MAX_ROWS} rows")
    return cols, rows


def parse_size(text: object) -> tuple[int, int]:
    """A size as a resize record gives it ("COLSxROWS"), checked; ValueError otherwise."""
    if not isinstance(text, str) or len(text) > 16:
        raise ValueError(f"resize {text!r} is not COLSxROWS")
    cols, sep, rows = text.partition("x")
    if not (sep and cols.isdigit() and rows.isdigit()):
        raise ValueError(f"resize {text!r} is not COLSxROWS")
    return check_size(int(cols), int(rows))
