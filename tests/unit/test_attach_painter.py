"""The attach painter draws the screen at the PTY's size in any window: clipped, padded, never reflowed."""
from __future__ import annotations

import pytest

from app.terminal.engines import create_engine
from clients.attach.painter import paint, parse_key


def _shown(cols: int, rows: int, text: bytes, window: tuple[int, int]) -> list[str]:
    """What a person sees: the painter's output replayed on a terminal of the window's size."""
    engine = create_engine("avt", cols, rows, 0)
    engine.feed(text)
    person = create_engine("avt", *window, 0)
    person.feed(paint(engine, *window).encode())
    return person.text_rows()


def test_a_smaller_window_shows_the_top_left_clipped_not_wrapped() -> None:
    shown = _shown(20, 4, b"abcdefghijklmnopqrst\r\nline two\r\nline three", (10, 2))
    assert shown == ["abcdefghij", "line two"]


def test_a_larger_window_shows_the_screen_padded() -> None:
    shown = _shown(6, 2, b"\x1b[31mred\x1b[0m\r\nok", (12, 4))
    assert shown == ["red", "ok", "", ""]


def test_colours_and_the_cursor_come_through() -> None:
    engine = create_engine("avt", 10, 3, 0)
    engine.feed(b"\x1b[1;32mgo\x1b[0m\r\n  x")
    drawn = paint(engine, 10, 3)
    assert "\x1b[0;1;32mgo" in drawn and drawn.endswith("\x1b[2;4H\x1b[?25h")
    assert "\x1b[?25h" not in paint(engine, 2, 1), "a cursor outside the window stays hidden"


def test_wide_characters_take_two_columns_and_are_not_cut() -> None:
    assert _shown(6, 1, "a漢字".encode(), (4, 1)) == ["a漢"]


@pytest.mark.parametrize(("name", "byte"), [("C-\\", 0x1C), ("C-a", 1), ("c-Z", 26), ("^]", 0x1D), ("C-_", 0x1F)])
def test_detach_keys(name: str, byte: int) -> None:
    assert parse_key(name) == byte


@pytest.mark.parametrize("name", ["", "x", "C-", "C-ab", "C-1", "^^^", "M-x"])
def test_bad_detach_keys_are_refused(name: str) -> None:
    with pytest.raises(ValueError, match="detach key"):
        parse_key(name)
