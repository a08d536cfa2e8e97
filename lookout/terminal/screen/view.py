"""A screen engine seen as plain data: for the layered view (lookout.terminal.screen.layers) and for snapshots."""

from __future__ import annotations

from collections.abc import Mapping
from collections.abc import Set as AbstractSet
from typing import Any

from lookout.terminal.screen.engines.base import ScreenEngine
from lookout.terminal.screen.layers import ScreenData


def screen_data(
    engine: ScreenEngine,
    *,
    title: str,
    scrollback: int = 0,
    changed_rows: AbstractSet[int] | None = None,
    extra: Mapping[str, Any] | None = None,
) -> ScreenData:
    """The engine's current screen with the newest `scrollback` lines; cells are read only on demand, from
    the screen as it was at this call (so the view can be rendered in another thread while output goes on)."""
    return ScreenData(
        cols=engine.cols,
        rows=engine.rows,
        cursor=engine.cursor(),
        text=engine.text_rows(),
        row_cells=engine.frozen_cells(),
        title=title,
        alt_screen=engine.alt_screen,
        scrollback=engine.scrollback(scrollback),
        changed_rows=changed_rows,
        extra=extra or {},
    )


def snapshot(engine: ScreenEngine, *, title: str, raw_offset: int, ts: float, **ingest: Any) -> dict[str, Any]:
    """The contents of screen.snapshot.json: size, cursor, title, alt-screen flag, text rows, the journal
    offset and time they reflect, and what the ingest needs to take up from that offset after a restart
    (`ingest`: the count of forged shell marks, the block tracker's state, modes, the reported cwd)."""
    cur = engine.cursor()
    return {
        "terminal": {"width": engine.cols, "height": engine.rows},
        "cursor": {"left": cur.col, "top": cur.row, "visible": cur.visible},
        "title": title,
        "alt_screen": engine.alt_screen,
        "text": engine.text_rows(),
        "raw_offset": raw_offset,
        "ts": ts,
        **ingest,
    }


def row_texts(engine: ScreenEngine, dirty: set[int]) -> tuple[tuple[int, str], ...]:
    """(row, text) of each of `dirty` on the screen, in order; many rows are read in one pass over the screen."""
    rows = sorted(row for row in dirty if row < engine.rows)
    if len(rows) > 4:
        texts = engine.text_rows()
        return tuple((row, texts[row]) for row in rows)
    return tuple((row, engine.row_text(row)) for row in rows)
