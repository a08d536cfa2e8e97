"""One behaviour suite that every screen engine must pass."""
from __future__ import annotations

import pytest

from lookout.terminal.screen.engines import ENGINE_NAMES, create_engine
from lookout.terminal.screen.engines.base import Cell, Cursor, ScreenEngine, Style


@pytest.fixture(params=ENGINE_NAMES)
def name(request: pytest.FixtureRequest) -> str:
    return request.param


def make(name: str, cols: int = 20, rows: int = 5, scrollback: int = 100, output: str = "") -> ScreenEngine:
    engine = create_engine(name, cols, rows, scrollback)
    engine.feed(output.encode())
    return engine


def screen(engine: ScreenEngine) -> list[str]:
    """Visible rows without the trailing empty ones."""
    rows = engine.text_rows()
    while rows and not rows[-1]:
        rows.pop()
    return rows


def test_unknown_engine_name_lists_valid_names() -> None:
    with pytest.raises(ValueError, match="avt, pyte"):
        create_engine("xterm", 80, 24, 100)


def test_plain_text_and_crlf(name: str) -> None:
    engine = make(name, output="hello\r\nworld")
    assert engine.name == name
    assert (engine.cols, engine.rows) == (20, 5)
    assert engine.text_rows() == ["hello", "world", "", "", ""]
    assert engine.row_text(1) == "world"
    assert engine.cursor() == Cursor(5, 1)
    assert len(engine.row_cells(0)) == 20


def test_bare_lf_keeps_the_column(name: str) -> None:
    # LNM must stay off: the tty's ONLCR already turned "\n" into "\r\n" in real output.
    assert screen(make(name, output="ab\ncd")) == ["ab", "  cd"]


def test_control_character_inside_text_does_not_cut_it(name: str) -> None:
    assert screen(make(name, output="ab\x01cd")) == ["abcd"]


def test_sgr_16_colours(name: str) -> None:
    cells = make(name, output="\x1b[31;42mA\x1b[91;102mB\x1b[39;49mC").row_cells(0)
    assert cells[0].style == Style(fg=1, bg=2)
    assert cells[1].style == Style(fg=9, bg=10)
    assert cells[2].style == Style()


def test_sgr_256_and_truecolor(name: str) -> None:
    cells = make(name, output=(
        "\x1b[38;5;200;48;5;17mA\x1b[38;2;1;2;3;48;2;250;251;252mB\x1b[0;38:2::9:8:7mC\x1b[38:5:100mD\x1b[mE"
    )).row_cells(0)
    assert [cell.style for cell in cells[:5]] == [
        Style(fg=200, bg=17), Style(fg=(1, 2, 3), bg=(250, 251, 252)), Style(fg=(9, 8, 7)), Style(fg=100), Style(),
    ]
    assert "".join(cell.char for cell in cells[:5]) == "ABCDE"


def test_sgr_attributes(name: str) -> None:
    cells = make(name, output=(
        "\x1b[1mB\x1b[22;2mF\x1b[0;3mI\x1b[0;4mU\x1b[0;5mK\x1b[0;7mR\x1b[0;9mS\x1b[0;1;3;4m\x1b[22;23;24mN"
    )).row_cells(0)
    assert [cell.style for cell in cells[:8]] == [
        Style(bold=True), Style(faint=True), Style(italic=True), Style(underline=True), Style(blink=True),
        Style(inverse=True), Style(strikethrough=True), Style(),
    ]


def test_unsupported_csi_forms_are_ignored(name: str) -> None:
    # vim sends CSI > 4 ; 2 m (modifyOtherKeys); neovim sends DCS + q (XTGETTCAP); CSI 2 SP q is DECSCUSR.
    engine = make(name, output="\x1b[>4;1mA\x1bP+q544e\x1b\\B\x1b[2 qC")
    assert screen(engine) == ["ABC"]
    assert engine.row_cells(0)[0].style == Style()


def test_cursor_movement(name: str) -> None:
    engine = make(name, output="\x1b[3;5HX")
    assert engine.row_cells(2)[4].char == "X"
    assert engine.cursor() == Cursor(5, 2)
    moves = [("\x1b[2A", Cursor(5, 0)), ("\x1b[3C", Cursor(8, 0)), ("\x1b[B", Cursor(8, 1)),
             ("\x1b[4D", Cursor(4, 1)), ("\x1b[99A", Cursor(4, 0)), ("\x1b[99C", Cursor(19, 0)),
             ("\x1b[99B", Cursor(19, 4)), ("\x1b[99D", Cursor(0, 4)), ("\x1b[H", Cursor(0, 0))]
    for sequence, expected in moves:
        engine.feed(sequence.encode())
        assert engine.cursor() == expected, repr(sequence)


def test_erase_in_line(name: str) -> None:
    engine = make(name, output="abcdefgh\r\nabcdefgh\r\nabcdefgh\x1b[1;5H\x1b[K\x1b[2;5H\x1b[1K\x1b[3;5H\x1b[2K")
    assert engine.text_rows()[:3] == ["abcd", "     fgh", ""]


@pytest.mark.parametrize(("sequence", "expected"), [
    ("\x1b[J", ["row0", "r"]), ("\x1b[1J", ["", "  w1", "row2"]), ("\x1b[2J", []),
])
def test_erase_in_display(name: str, sequence: str, expected: list[str]) -> None:
    engine = make(name, output=f"row0\r\nrow1\r\nrow2\x1b[2;2H{sequence}")
    assert screen(engine) == expected
    assert engine.cursor() == Cursor(1, 1)


def test_scroll_region(name: str) -> None:
    engine = make(name, output="".join(f"\x1b[{row + 1};1Hl{row}" for row in range(5)))
    engine.feed(b"\x1b[2;4r\x1b[4;1H\n")  # LF on the bottom margin scrolls rows 2-4 only
    assert engine.text_rows() == ["l0", "l2", "l3", "", "l4"]
    engine.feed(b"\x1b[2;1H\x1bM")  # RI on the top margin scrolls them back down
    assert engine.text_rows() == ["l0", "", "l2", "l3", "l4"]
    engine.feed(b"\x1b[3S")  # SU within the region
    assert engine.text_rows() == ["l0", "", "", "", "l4"]
    assert engine.scrollback(10) == []  # a region not at the top saves nothing


def test_scroll_up_sequence_saves_to_scrollback(name: str) -> None:
    engine = make(name, output="a\r\nb\r\nc\x1b[2S")
    assert engine.text_rows() == ["c", "", "", "", ""]
    assert engine.scrollback(10) == ["a", "b"]


def test_wide_characters(name: str) -> None:
    engine = make(name, output="中文ab")
    assert engine.row_text(0) == "中文ab"
    assert engine.row_cells(0)[:5] == [Cell("中", 2), Cell("", 0), Cell("文", 2), Cell("", 0), Cell("a", 1)]
    assert engine.cursor() == Cursor(6, 0)


def test_wide_character_at_the_last_column_wraps(name: str) -> None:
    engine = make(name, cols=5, output="abcd中")
    assert screen(engine) == ["abcd", "中"]
    assert engine.cursor() == Cursor(2, 1)


def test_overwriting_half_of_a_wide_character_blanks_the_other_half(name: str) -> None:
    assert screen(make(name, output="中文\x1b[1;2Hx")) == [" x文"]


FAMILY = "\U0001F468\u200d\U0001F469\u200d\U0001F467"
RAINBOW_FLAG = "\U0001F3F3\ufe0f\u200d\U0001F308"


# What joins a cell, and how wide it is, is what tmux 3.3 shows (checked against tmux in
# tests/integration/test_engine_vs_tmux.py).
@pytest.mark.parametrize(("output", "cell", "width"), [
    ("e\u0301", "e\u0301", 1),  # as written, not normalised
    ("a\u0301\u0302", "a\u0301\u0302", 1),
    ("\u2764\ufe0f", "\u2764\ufe0f", 1),  # VS16 stays; the width is the first character's
    ("\u2764\ufe0e", "\u2764\ufe0e", 1),
    ("\u2b50\ufe0f", "\u2b50\ufe0f", 2),
    ("1\ufe0f\u20e3", "1\ufe0f\u20e3", 1),  # keycap
    ("\u845b\U000E0100", "\u845b\U000E0100", 2),  # ideographic variation selector
    ("a\u200b", "a\u200b", 1),
    (FAMILY, FAMILY, 2),
    (RAINBOW_FLAG, RAINBOW_FLAG, 1),  # after a ZWJ any non-ASCII character joins, whatever its width
])
def test_what_joins_a_cell(name: str, output: str, cell: str, width: int) -> None:
    engine = make(name, output=f"|{output}|ok")
    cells = engine.row_cells(0)
    assert cells[1] == Cell(cell, width)
    assert [c.char for c in cells[1 + width:3 + width]] == ["|", "o"]
    assert engine.row_text(0) == f"|{cell}|ok"
    assert engine.cursor() == Cursor(width + 4, 0)


def test_flag_is_two_regional_indicators_of_one_column(name: str) -> None:
    engine = make(name, output="\U0001F1E9\U0001F1EA\U0001F1EB\U0001F1F7|")
    assert engine.row_text(0) == "\U0001F1E9\U0001F1EA\U0001F1EB\U0001F1F7|"
    assert [cell.width for cell in engine.row_cells(0)[:5]] == [1, 1, 1, 1, 1]
    assert engine.cursor() == Cursor(5, 0)


def test_skin_tone_modifier_takes_a_cell_of_its_own(name: str) -> None:
    engine = make(name, output="\U0001F44D\U0001F3FD|")
    assert engine.row_cells(0)[:5] == [
        Cell("\U0001F44D", 2), Cell("", 0), Cell("\U0001F3FD", 2), Cell("", 0), Cell("|", 1),
    ]


def test_zwj_before_ascii_and_zero_width_with_nothing_to_join_are_dropped(name: str) -> None:
    engine = make(name, output="a\u200db\r\n\u0301x\r\n\x1b[31m\u200by")
    assert screen(engine) == ["ab", "x", "y"]
    assert engine.row_cells(2)[0] == Cell("y", 1, Style(fg=1))


def test_a_cell_holds_at_most_21_bytes(name: str) -> None:
    family4 = FAMILY + "\u200d\U0001F466"  # 25 bytes: the ZWJ fits, the last member does not
    england = "\U0001F3F4\U000E0067\U000E0062\U000E0065\U000E006E\U000E0067\U000E007F"
    marks = "\u0301" * 30
    engine = make(name, output=f"{family4}|\r\n{england}|\r\na{marks}|")
    assert screen(engine) == [FAMILY + "\u200d|", england[:5] + "|", "a" + "\u0301" * 10 + "|"]


@pytest.mark.parametrize(("output", "expected"), [
    ("ab\x1b[31m\u0301c", "ab\u0301c"),  # after an escape sequence
    ("ab\x1b]0;t\x07\u0301c", "ab\u0301c"),
    ("ab\bx\b\u0301", "a\u0301x"),
    ("x\U0001F3F4\x1b[1;4H\U000E0067\U000E0062\U000E007Fz", "x\U0001F3F4\U000E0067\U000E0062\U000E007Fz"),
    ("ab\r\u0301c", "cb"),  # nothing left of the cursor
])
def test_zero_width_character_after_a_cursor_movement_joins_the_cell_left_of_the_cursor(
    name: str, output: str, expected: str
) -> None:
    # as tmux does (vim writes a flag's tag characters after moving the cursor past the flag)
    engine = make(name, output=output)
    assert engine.row_text(0) == expected
    assert engine.row_cells(0)[1].style == Style()


def test_escape_sequence_before_a_zero_width_character_stays_whole(name: str) -> None:
    engine = make(name)
    for part in ("\x1b[1;3", "1m\u0301x", "\x1b]0;caf\u0065\u0301\x07", "y"):
        engine.feed(part.encode())
    assert screen(engine) == ["xy"]
    assert [cell.style for cell in engine.row_cells(0)[:2]] == [Style(fg=1, bold=True)] * 2


def test_cell_split_across_feeds(name: str) -> None:
    engine = make(name)
    for part in ("abc\x1b[31me", "\u0301", "\u0302\r\n\U0001F468\u200d", "\U0001F469", "\u200d\U0001F467", "|\r\n",
                 "\x1b[0mab\U0001F44D\U0001F3FD", "\ufe0f", "Z"):
        engine.feed(part.encode())
    assert screen(engine) == ["abce\u0301\u0302", FAMILY + "|", "ab\U0001F44D\U0001F3FD\ufe0fZ"]
    assert engine.row_cells(0)[3] == Cell("e\u0301\u0302", 1, Style(fg=1))
    assert engine.row_cells(2)[4] == Cell("\U0001F3FD\ufe0f", 2)


def test_cell_split_across_feeds_at_the_last_column(name: str) -> None:
    engine = make(name, cols=5)
    for part in ("abcd\u2764", "\ufe0f", "x\r\nabc\U0001F468", "\u200d", "\U0001F469", "y"):
        engine.feed(part.encode())
    assert screen(engine) == ["abcd\u2764\ufe0f", "x", "abc\U0001F468\u200d\U0001F469", "y"]
    assert engine.cursor() == Cursor(1, 3)


def test_private_use_characters_print_as_themselves(name: str) -> None:
    # the avt engine keeps cells of several code points as private-use stand-ins; these are output
    text = "\U0010E000|\U0003E000|\U000F0001|\ue0b0|\U0010E000\u0301|"
    engine = make(name, output=text)
    assert engine.row_text(0) == text
    assert engine.cursor() == Cursor(11, 0)


def test_cells_of_several_code_points_in_scrollback_and_after_a_resize(name: str) -> None:
    engine = make(name, cols=10, rows=2, output=f"{FAMILY}1\r\ne\u0301 2\r\n\u2764\ufe0f 3")
    assert engine.scrollback(10) == [f"{FAMILY}1"]
    engine.resize(6, 3)
    assert engine.text_rows() == [f"{FAMILY}1", "e\u0301 2", "\u2764\ufe0f 3"]
    engine.feed(b"\xcc\x81")  # after a resize: joins the cell left of the cursor
    assert engine.row_text(2) == "\u2764\ufe0f 3\u0301"


def test_dec_line_drawing(name: str) -> None:
    assert screen(make(name, output="\x1b(0lqk\x1b(Bq")) == ["\u250c\u2500\u2510q"]


@pytest.mark.parametrize("mode", [1049, 1047, 47])
def test_alternate_screen_enter_and_exit(name: str, mode: int) -> None:
    engine = make(name, output="$ ls\r\nfile\r\n$ ")
    assert not engine.alt_screen
    engine.feed(f"\x1b[?{mode}h\x1b[H\x1b[2J\x1b[3;3HALT".encode())
    assert engine.alt_screen
    assert screen(engine) == ["", "", "  ALT"]
    changed = engine.feed(f"\x1b[?{mode}l".encode())
    assert not engine.alt_screen
    assert changed == {0, 1, 2, 3, 4}
    assert screen(engine) == ["$ ls", "file", "$"]
    if mode == 1049:
        assert engine.cursor() == Cursor(2, 2)


def test_alternate_screen_switch_split_across_feeds(name: str) -> None:
    engine = make(name, output="primary")
    for part in (b"\x1b", b"[?10", b"49", b"hALT"):
        engine.feed(part)
    assert engine.alt_screen
    assert screen(engine) == ["       ALT"]
    engine.feed(b"\x1b[?1049")
    engine.feed(b"l")
    assert not engine.alt_screen
    assert screen(engine) == ["primary"]


def test_reset_leaves_the_alternate_screen(name: str) -> None:
    engine = make(name, output="\x1b[?1049hALT\x1bc")
    assert not engine.alt_screen
    assert screen(engine) == []


def test_resize_rows_keeps_the_cursor_row_and_brings_lines_back(name: str) -> None:
    engine = make(name, output="l1\r\nl2\r\nl3\r\nl4\r\nl5")
    engine.resize(20, 3)
    assert (engine.cols, engine.rows) == (20, 3)
    assert engine.text_rows() == ["l3", "l4", "l5"]
    assert engine.cursor() == Cursor(2, 2)
    assert engine.scrollback(10) == ["l1", "l2"]
    engine.resize(20, 5)
    assert engine.text_rows() == ["l1", "l2", "l3", "l4", "l5"]
    assert engine.cursor() == Cursor(2, 4)


def test_resize_rows_with_the_cursor_at_the_top_keeps_the_top(name: str) -> None:
    engine = make(name, output="l1\r\nl2")
    engine.resize(20, 3)
    assert engine.text_rows() == ["l1", "l2", ""]
    assert engine.scrollback(10) == []


def test_resize_on_the_alternate_screen_also_fits_the_primary(name: str) -> None:
    engine = make(name, output="l1\r\nl2\r\nl3\r\nl4\r\nl5\x1b[?1049h\x1b[HALT")
    engine.resize(20, 3)
    assert screen(engine) == ["ALT"]
    engine.feed(b"\x1b[?1049l")
    assert engine.text_rows() == ["l3", "l4", "l5"]
    assert engine.cursor() == Cursor(2, 2)
    assert engine.scrollback(10) == ["l1", "l2"]


def test_resize_columns(name: str) -> None:
    engine = make(name, cols=10, output="abc\r\nxyz")
    engine.resize(30, 5)
    assert len(engine.row_cells(0)) == 30
    engine.feed(b"\x1b[1;30HZ")
    assert engine.row_cells(0)[29].char == "Z"
    engine.resize(4, 5)
    assert engine.cols == 4 and len(engine.row_cells(0)) == 4
    assert engine.row_text(1) == "xyz"
    assert engine.cursor().col <= 3
    engine.feed(b"\x1b[2;4HQ")
    assert engine.row_text(1) == "xyzQ"


def test_utf8_character_split_across_feeds(name: str) -> None:
    engine = make(name)
    encoded = "中é".encode()
    for i in range(len(encoded)):
        engine.feed(encoded[i:i + 1])
    engine.feed(b"\xff!")
    assert engine.row_text(0) == "中é\ufffd!"


def test_escape_sequences_split_across_feeds(name: str) -> None:
    engine = make(name)
    for part in ("\x1b[38:5:", "100mX\x1b", "P+q54", "63\x1b", "\\Y\x1b[", ">4;", "1mZ\x1b[0", ";1mB"):
        engine.feed(part.encode())
    assert screen(engine) == ["XYZB"]
    assert [cell.style for cell in engine.row_cells(0)[:4]] == [Style(fg=100)] * 3 + [Style(bold=True)]


def test_scrollback_is_bounded(name: str) -> None:
    engine = make(name, scrollback=10, output="".join(f"line {i}\r\n" for i in range(30)))
    assert screen(engine) == ["line 26", "line 27", "line 28", "line 29"]
    assert engine.scrollback(100) == [f"line {i}" for i in range(16, 26)]
    assert engine.scrollback(3) == ["line 23", "line 24", "line 25"]
    assert engine.scrollback(0) == []


def test_scrollback_survives_the_alternate_screen(name: str) -> None:
    engine = make(name, output="".join(f"line {i}\r\n" for i in range(8)))
    before = engine.scrollback(100)
    assert before == ["line 0", "line 1", "line 2", "line 3"]
    engine.feed(b"\x1b[?1049h" + b"alt\r\n" * 20)
    assert engine.scrollback(100) == before
    engine.feed(b"\x1b[?1049l")
    assert engine.scrollback(100) == before


def test_scrollback_of_lines_scrolled_in_the_same_feed_as_entering_the_alternate_screen(name: str) -> None:
    engine = make(name, output="".join(f"line {i}\r\n" for i in range(8)) + "\x1b[?1049halt")
    assert engine.alt_screen
    assert engine.scrollback(2) == ["line 2", "line 3"]


def test_rep_repeats_the_last_character(name: str) -> None:
    assert screen(make(name, output="ab\x1b[3b|\r\n\x1b[31m-\x1b[b.")) == ["abbbb|", "--."]


def test_decckm(name: str) -> None:
    engine = make(name)
    assert not engine.app_cursor_keys
    engine.feed(b"\x1b[?1h")
    assert engine.app_cursor_keys
    engine.feed(b"\x1b[?1l")
    assert not engine.app_cursor_keys


def test_cursor_visibility(name: str) -> None:
    engine = make(name, output="\x1b[?25l")
    assert not engine.cursor().visible
    engine.feed(b"\x1b[?25h")
    assert engine.cursor().visible


def test_feed_returns_the_changed_rows(name: str) -> None:
    engine = make(name, output="start")
    assert engine.feed(b"\x1b[3;1Hx") == {2}
    assert engine.feed(b"\x1b[1;1Ha\x1b[5;1Hb") == {0, 4}
    assert engine.feed(b"\x1b[2;2H") == set()
    assert engine.feed(b"\x1b[5;1H\r\n") == {0, 1, 2, 3, 4}


SCENE = (
    "$ ls --color\r\n\x1b[01;34mdir\x1b[0m  \x1b[38;5;208mwarm\x1b[0m  \x1b[38;2;10;200;30mrgb\x1b[0m\r\n"
    "中文 \x1b[1;3;4;7mstyled\x1b[0m \x1b[9;2mold\x1b[0m\r\n\x1b[44m" + " " * 20 + "\x1b[0m\r\n"
    f"$ \x1b[32m{FAMILY}e\u0301\u2764\ufe0f\U0001F1E9\U0001F1EA\x1b[0m vim"
)


@pytest.mark.parametrize("target", ENGINE_NAMES)
@pytest.mark.parametrize("alt", [False, True], ids=["primary", "alt"])
def test_dump_round_trip(name: str, target: str, alt: bool) -> None:
    source = make(name, output=SCENE + ("\x1b[?1049h\x1b[2;3H\x1b[31mhello\x1b[4;7H" if alt else "\x1b[2;5H"))
    source.feed(b"\x1b[?1h\x1b[?25l")
    dump = source.dump()
    assert not any("\x80" <= char <= "\x9f" for char in dump)  # 7-bit controls only
    copy = make(name=target, output=dump)
    assert copy.text_rows() == source.text_rows()
    assert copy.cursor() == source.cursor()
    assert [copy.row_cells(row) for row in range(5)] == [source.row_cells(row) for row in range(5)]
    assert (copy.alt_screen, copy.app_cursor_keys) == (alt, True)
    if alt:
        assert copy.row_cells(1)[2] == Cell("h", 1, Style(fg=1))
        for engine in (source, copy):
            engine.feed(b"\x1b[?1049l")
        assert copy.text_rows() == source.text_rows()
        assert copy.row_text(1) == "dir  warm  rgb"
