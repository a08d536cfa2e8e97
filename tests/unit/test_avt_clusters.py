"""The avt engine's stand-ins for cells of several code points, where the shared suite cannot reach."""
from __future__ import annotations

import logging

import pytest

from lookout.terminal.screen.engines import avt_clusters, create_engine


def test_past_the_pool_new_cells_keep_their_first_character(
    monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    monkeypatch.setattr(avt_clusters, "POOL", 2)
    engine = create_engine("avt", 40, 3, 10)
    with caplog.at_level(logging.WARNING, logger=avt_clusters.__name__):
        engine.feed("a\u0301 b\u0301 c\u0301 a\u0301 \U0010E000 \U0001F468\u200d\U0001F469".encode())
    # the two narrow stand-ins are taken: c + U+0301 loses its mark, a printed stand-in code point shows as
    # U+FFFD (never as another cell's text); the wide pool still has room
    assert engine.row_text(0) == "a\u0301 b\u0301 c a\u0301 \ufffd \U0001F468\u200d\U0001F469"
    assert engine.cursor().col == 12
    assert "keep their first character" in caplog.text


def test_a_cell_redrawn_across_feeds_keeps_its_style_and_the_cursor() -> None:
    engine = create_engine("avt", 10, 3, 10)
    engine.feed(b"\x1b[4;1m\xe2\x9d\xa4")
    engine.feed("\ufe0f\x1b[0m|".encode())
    cells = engine.row_cells(0)
    assert (cells[0].char, cells[0].style.bold, cells[0].style.underline) == ("\u2764\ufe0f", True, True)
    assert (cells[1].char, cells[1].style.bold) == ("|", False)


@pytest.mark.parametrize("before", ["\x1b7", "\x1b[s", "\x1b[4h\x1b[4l", "\x1b[?6h\x1b[?6l"])
def test_no_join_left_of_the_cursor_once_the_program_used_the_saved_cursor_insert_or_origin_mode(
    before: str,
) -> None:
    # the cell would be drawn again between DECSC and DECRC, which would lose the program's saved cursor (or
    # insert, or address the wrong cell): the zero-width character is dropped instead
    engine = create_engine("avt", 10, 3, 10)
    engine.feed(f"{before}\x1b[Hab\x1b[1;3H\u0301c".encode())
    assert engine.row_text(0) == "abc"
    assert engine.cursor().col == 3


def test_join_left_of_the_cursor_keeps_the_cursor_and_the_pen() -> None:
    engine = create_engine("avt", 10, 3, 10)
    engine.feed("\x1b[1mab\x1b[0;32m\x1b[1;3H\u0301c\x1b[2;1H\u0301".encode())
    cells = engine.row_cells(0)
    assert [(cell.char, cell.style.bold, cell.style.fg) for cell in cells[:3]] == [
        ("a", True, None), ("b\u0301", True, None), ("c", False, 2),
    ]
    assert engine.cursor().col == 0 and engine.cursor().row == 1
