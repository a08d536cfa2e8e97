"""Skipping ahead in a flood never changes what the engine ends up showing."""
from __future__ import annotations

import random

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from lookout.terminal.screen.engines import create_engine
from lookout.terminal.screen.skip_ahead import plan_feed

COLS, ROWS, SCROLLBACK = 20, 5, 7
KEEP = ROWS + SCROLLBACK + 1


def _state(engine_name: str, pieces: list[bytes], prelude: bytes) -> tuple:
    e = create_engine(engine_name, COLS, ROWS, SCROLLBACK)
    e.feed(prelude)
    for piece in pieces:
        e.feed(piece)
    e.feed(b"Z")  # shows the pen and the cursor column the stream left behind
    cells = [[(c.char, c.style) for c in e.row_cells(r)] for r in range(ROWS)]
    return e.text_rows(), e.cursor(), cells, e.scrollback(100), e.alt_screen


_words = st.sampled_from(
    [b"word", b"x" * 25, "caf\u00e9 \u2713".encode(), "\u4e2d\u6587".encode(), b"\t", b"ab\x08c", b"\r",
     b"\x1b[1;31m", b"\x1b[0m", b"\x1b[m", b"\x1b[4m", b"\x1b[38;5;100m", b"\x1b[48;2;1;2;3m", b" "]
)
_line = st.lists(_words, max_size=6).map(lambda parts: b"".join(parts) + b"\r\n")
_preludes = st.sampled_from(
    [b"", b"\x1b[3;3H", b"\x1b[7m\x1b[2;10Hx", b"\x1b[?1049h\x1b[5;1Halt", b"\x1b[2;4r\x1b[3;1H", b"\xe2\x9c"]
)


@pytest.mark.parametrize("engine_name", ["avt", "pyte"])
@settings(max_examples=100, deadline=None)
@example(lines=[b"first\r\n", b"\x1b[1;31mred and bold\r\n"] + [b"plain\r\n"] * (KEEP + 3), prelude=b"")
@given(lines=st.lists(_line, min_size=KEEP + 3, max_size=60), prelude=_preludes)
def test_skipping_is_invisible(engine_name: str, lines: list[bytes], prelude: bytes) -> None:
    data = b"".join(lines)
    pieces = plan_feed(data, KEEP, min_skip=1)
    assert len(pieces) == 3 and data.startswith(pieces[0]) and data.endswith(pieces[2])
    assert _state(engine_name, pieces, prelude) == _state(engine_name, [data], prelude)


def test_a_flood_of_plain_lines_is_mostly_skipped() -> None:
    rng = random.Random(1)
    data = b"".join(f"\x1b[3{rng.randrange(8)}mline {i}\x1b[0m tail\r\n".encode() for i in range(20000))
    pieces = plan_feed(data, 2041)
    assert len(pieces) == 3
    head, pen, tail = pieces
    assert len(head) + len(tail) < len(data) // 5
    assert tail.count(b"\n") >= 2041 and data.endswith(tail) and data.startswith(head)
    assert pen == b"\x1b[0m"  # every line ends with a reset, which clears what came before


@pytest.mark.parametrize(
    "poison", [b"\x1b[2J", b"\x1b[5;5H", b"\x1b]0;title\x07", b"\x1b(0", b"\x1b[?25l", b"\x07", b"\xc2\x9b", b"\x1b7"]
)
def test_anything_but_plain_text_and_sgr_is_not_skipped(poison: bytes) -> None:
    lines = [b"plain line of text\r\n"] * 6000
    lines[100] = b"before " + poison + b"after\r\n"
    data = b"".join(lines)
    assert plan_feed(data, 100) == [data]


def test_small_or_short_output_is_fed_whole() -> None:
    data = b"a\r\n" * 50
    assert plan_feed(data, 2041) == [data]
    assert plan_feed(b"x" * (1 << 20), 10) == [b"x" * (1 << 20)]


def test_pen_carries_what_followed_the_last_reset() -> None:
    body = b"".join(b"\x1b[0mn\x1b[1m\x1b[32mline\r\n" for _ in range(30000))
    data = b"head\n" + body + b"tail\r\n" * 50
    _head, pen, _tail = plan_feed(data, 40)
    assert pen == b"\x1b[0m\x1b[1m\x1b[32m"
