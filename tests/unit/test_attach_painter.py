"""The attach painter draws the screen at the PTY's size in any window: padded in a larger one; in a smaller
one, clipped (never wrapped) to the part that holds the cursor, as tmux pans a smaller client, with a status
line that says so and prints names with their control characters escaped."""
from __future__ import annotations

import pytest

from lookout.clients.attach.painter import View, follow, key_name, paint, parse_key
from lookout.clients.attach.status import status_line
from lookout.core.printable import printable
from lookout.terminal.screen.engines import create_engine
from lookout.terminal.screen.engines.base import Cursor, ScreenEngine


def _engine(cols: int, rows: int, text: bytes) -> ScreenEngine:
    engine = create_engine("avt", cols, rows, 0)
    engine.feed(text)
    return engine


def _person(engine: ScreenEngine, window: tuple[int, int], view: View, status: str = "") -> ScreenEngine:
    """What a person sees: the painter's output replayed on a terminal of the window's size."""
    person = create_engine("avt", *window, 0)
    person.feed(paint(engine, *window, view, status).encode())
    return person


def _shown(cols: int, rows: int, text: bytes, window: tuple[int, int]) -> list[str]:
    engine = _engine(cols, rows, text)
    return _person(engine, window, follow((cols, rows), window, engine.cursor())).text_rows()


def test_a_smaller_window_is_clipped_not_wrapped_and_keeps_a_row_for_the_status() -> None:
    shown = _shown(20, 4, b"\x1b[Habcdefghijklmnopqrst\r\nline two\r\nline three\x1b[H", (10, 3))
    assert shown == ["abcdefghij", "line two", ""]


def test_a_smaller_window_follows_the_cursor_to_the_prompt() -> None:
    """A shell on a 120x40 terminal that printed many lines has its prompt on the last row: an 80x24 window
    shows the rows above it and the prompt (the last row of the window is the status line)."""
    engine = _engine(120, 40, b"".join(b"line %d\r\n" % n for n in range(300)) + b"$ typed")
    view = follow((120, 40), (80, 24), engine.cursor())
    assert view == View(left=0, top=17, cols=80, rows=23, clipped=True)
    person = _person(engine, (80, 24), view, "STATUS")
    assert person.text_rows()[22] == "$ typed" and person.text_rows()[23] == "STATUS"
    assert (person.cursor().row, person.cursor().col) == (22, 7) and person.cursor().visible


def test_the_view_stays_while_the_cursor_is_in_it_and_centres_it_when_it_leaves() -> None:
    screen, window = (120, 40), (80, 24)
    view = follow(screen, window, Cursor(col=5, row=30))
    assert (view.left, view.top) == (0, 17)
    assert follow(screen, window, Cursor(col=70, row=18), view) == view, "still in sight: no move"
    right = follow(screen, window, Cursor(col=90, row=18), view)
    assert (right.left, right.top) == (40, 17), "90 - 80 // 2 = 50, within the screen: 40"
    up = follow(screen, window, Cursor(col=90, row=3), right)
    assert (up.left, up.top) == (40, 0)
    middle = follow((200, 100), window, Cursor(col=100, row=50))
    assert (middle.left, middle.top) == (60, 39), "the cursor in the middle"
    assert follow(screen, window, Cursor(col=0, row=0, visible=False), right) == right, "a hidden cursor moves nothing"
    assert follow(screen, (120, 40), Cursor(col=90, row=3), right) == View(0, 0, 120, 40, clipped=False)


def test_a_wide_character_cut_by_an_edge_of_the_view_is_a_blank() -> None:
    engine = _engine(8, 2, "ab漢字cd".encode())  # 漢 at columns 2-3, 字 at 4-5 (engines have 2 rows at least)
    assert _person(engine, (3, 2), View(3, 0, 3, 1, clipped=True)).text_rows()[0] == " 字"
    assert _person(engine, (3, 2), View(0, 0, 3, 1, clipped=True)).text_rows()[0] == "ab"


def test_the_status_line_says_what_is_shown_and_escapes_names_and_titles() -> None:
    view = View(left=0, top=17, cols=80, rows=23, clipped=True)
    line = status_line("t_1", "build", "vim main.py", (120, 40), view, "C-\\", 200)
    assert line.startswith("\x1b[0;7m") and len(line) == len("\x1b[0;7m") + 200
    text = line.removeprefix("\x1b[0;7m").rstrip()
    assert text == (' clipped: t_1 "build" is 120x40, this window shows cols 1-80, rows 18-40 (it follows the '
                    "cursor) · --resize takes it over · C-\\ detaches · title vim main.py")  # fmt: skip
    hostile = status_line("t_1", "x\x1b[2J\x07", "\x1b]0;evil\x07\u202eabc\x9b", (120, 40), view, "C-a", 300)
    assert not any(ord(c) < 32 or 0x7F <= ord(c) < 0xA0 for c in hostile.removeprefix("\x1b[0;7m"))
    assert '"x\\033[2J\\007"' in hostile and "title \\033]0;evil\\007\\u202eabc\\233" in hostile
    short = status_line("t_1", "漢字" * 20, "", (120, 40), view, "C-a", 30).removeprefix("\x1b[0;7m")
    assert short.endswith("…") and sum(2 if "\u4e00" <= c <= "\u9fff" else 1 for c in short) == 30


def test_printable_escapes_what_a_terminal_would_act_on_and_nothing_else() -> None:
    assert printable("plain 漢字 ✓ e\u0301") == "plain 漢字 ✓ e\u0301"
    assert printable("a\\b\x1b\x7f\x85\u2028\u202e\ud800") == "a\\\\b\\033\\177\\205\\u2028\\u202e\\ud800"


def test_detach_key_names_round_trip() -> None:
    for byte in (0x1C, 1, 26, 0x1D, 0x1F):
        assert parse_key(key_name(byte)) == byte
    assert key_name(0x1C) == "C-\\" and key_name(1) == "C-a"


def test_a_larger_window_shows_the_screen_padded() -> None:
    shown = _shown(6, 2, b"\x1b[31mred\x1b[0m\r\nok", (12, 4))
    assert shown == ["red", "ok", "", ""]


def test_colours_and_the_cursor_come_through() -> None:
    engine = _engine(10, 3, b"\x1b[1;32mgo\x1b[0m\r\n  x")
    drawn = paint(engine, 10, 3, follow((10, 3), (10, 3), engine.cursor()))
    assert "\x1b[0;1;32mgo" in drawn and drawn.endswith("\x1b[2;4H\x1b[?25h")
    outside = paint(engine, 2, 2, View(0, 0, 2, 1, clipped=True))
    assert "\x1b[?25h" not in outside, "a cursor outside the view stays hidden"


def test_wide_characters_take_two_columns_and_are_not_cut() -> None:
    assert _shown(6, 2, "a漢字\x1b[H".encode(), (4, 2))[0] == "a漢"


@pytest.mark.parametrize(("name", "byte"), [("C-\\", 0x1C), ("C-a", 1), ("c-Z", 26), ("^]", 0x1D), ("C-_", 0x1F)])
def test_detach_keys(name: str, byte: int) -> None:
    assert parse_key(name) == byte


@pytest.mark.parametrize("name", ["", "x", "C-", "C-ab", "C-1", "^^^", "M-x"])
def test_bad_detach_keys_are_refused(name: str) -> None:
    with pytest.raises(ValueError, match="detach key"):
        parse_key(name)
