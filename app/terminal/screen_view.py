"""The plain view of a screen (text rows, cursor, title, scrollback), built from an engine."""
from __future__ import annotations

from typing import Any

from app.terminal.engines.base import ScreenEngine


def screen_view(engine: ScreenEngine, *, title: str, scrollback: int = 0) -> dict[str, Any]:
    """What GET /screen returns: `terminal` size, full `viewport`, `cursor`, `text` rows, and on request
    the newest `scrollback` lines that scrolled off the top (oldest first)."""
    cur = engine.cursor()
    view: dict[str, Any] = {
        "terminal": {"width": engine.cols, "height": engine.rows},
        "viewport": {"mode": "full", "left": 0, "top": 0, "width": engine.cols, "height": engine.rows},
        "cursor": {"left": cur.col, "top": cur.row, "relLeft": cur.col, "relTop": cur.row, "visible": cur.visible},
        "title": title,
        "alt_screen": engine.alt_screen,
        "text": engine.text_rows(),
    }
    if scrollback > 0:
        view["scrollback"] = engine.scrollback(scrollback)
    return view


def snapshot_from_view(view: dict[str, Any], raw_offset: int, ts: float) -> dict[str, Any]:
    """The contents of screen.snapshot.json: the view plus the journal offset it reflects."""
    return {**view, "raw_offset": raw_offset, "ts": ts}
