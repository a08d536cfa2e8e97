"""The layered screenshot on screens drawn by a real engine from known byte streams."""
from __future__ import annotations

from typing import Any

import orjson
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from lookout.core.errors import BadInput
from lookout.core.tokens import count_tokens
from lookout.terminal.screen.engines import ENGINE_NAMES, create_engine
from lookout.terminal.screen.layers import (
    LAYERS,
    Region,
    ScreenData,
    ViewOptions,
    parse_layers,
    parse_region,
    render,
)
from lookout.terminal.screen.palette import XTERM_256, color_hex
from lookout.terminal.screen.view import screen_data

# One character per style combination, each drawn in the style its character names.
EIGHT_STYLES = "\x1b[0m.\x1b[1mb\x1b[0;3mi\x1b[0;4mu\x1b[0;1;3mI\x1b[0;1;4mU\x1b[0;3;4mJ\x1b[0;1;3;4mX\x1b[0m"


@pytest.fixture(params=ENGINE_NAMES)
def engine_name(request: pytest.FixtureRequest) -> str:
    return request.param


def screen(output: str, cols: int = 20, rows: int = 5, engine: str = "avt", **data: Any) -> ScreenData:
    vt = create_engine(engine, cols, rows, 100)
    vt.feed(output.encode())
    return screen_data(vt, title="t", **data)


def view(output: str, cols: int = 20, rows: int = 5, engine: str = "avt", **options: Any) -> dict[str, Any]:
    result = render(screen(output, cols, rows, engine), ViewOptions(**options))
    assert isinstance(result, dict)
    return result


def own_count(result: dict[str, Any]) -> int:
    return count_tokens(orjson.dumps(result).decode())


# ----------------------------------------------------------------------------- styles


def test_all_eight_style_combinations_as_cells(engine_name: str) -> None:
    v = view(EIGHT_STYLES, engine=engine_name, layers=("styles", "bold", "italic", "underline"), encoding="cells")
    assert v["styles"][0] == ".biuIUJX"
    assert v["bold"][0] == ".b..bb.b"
    assert v["italic"][0] == "..i.i.ii"
    assert v["underline"][0] == "...u.uuu"
    assert v["styleLegend"] == {
        ".": None, "b": "bold", "i": "italic", "u": "underline",
        "I": "bold+italic", "U": "bold+underline", "J": "italic+underline", "X": "bold+italic+underline",
    }  # fmt: skip
    assert "text" not in v and "cursor" not in v


def test_all_eight_style_combinations_as_runs(engine_name: str) -> None:
    v = view(EIGHT_STYLES, engine=engine_name, layers=("text", "styles", "bold"), encoding="runs")
    assert v["text"][0] == ".biuIUJX"
    assert v["styles"][0] == [[i, i + 1, char] for i, char in enumerate(".biuIUJX") if char != "."]
    assert v["bold"][0] == [[1, 2, "b"], [4, 6, "b"], [7, 8, "b"]]  # adjacent bold cells are one run
    assert v["styleLegend"] == {char: v["styleLegend"][char] for char in "biuIUJX"}


def test_cell_layers_stop_at_their_last_row_with_something_to_show() -> None:
    v = view("\x1b[1mB\x1b[0m\r\nplain\r\n\x1b[4mU\x1b[0m", layers=("text", "styles"), encoding="cells")
    assert v["styles"] == ["b", "", "u"]
    assert len(v["text"]) == 5
    assert view("plain", layers=("styles",))["styles"] == []


# ----------------------------------------------------------------------------- colours


def test_colours_in_hex_with_default_zero(engine_name: str) -> None:
    v = view(
        "\x1b[31mR\x1b[38;5;196mI\x1b[38;5;244mG\x1b[38;2;1;2;3mT\x1b[0mD\x1b[44m \x1b[0m",
        engine=engine_name, layers=("fgColors", "bgColors"), encoding="cells",
    )  # fmt: skip
    palette = v["colorPalette"]
    assert palette["0"] is None
    colours = {palette[symbol] for symbol in v["fgColors"][0]}
    assert colours == {"#cd0000", "#ff0000", "#808080", "#010203"}
    assert v["fgColors"][0][4:] == ""  # the default colour at the end is cut
    assert palette[v["bgColors"][0][5]] == "#0000ee"
    assert v["bgColors"][0][:5] == "00000"


def test_xterm_palette() -> None:
    assert len(XTERM_256) == 256
    assert (XTERM_256[16], XTERM_256[21], XTERM_256[231], XTERM_256[232], XTERM_256[255]) == (
        "#000000", "#0000ff", "#ffffff", "#080808", "#eeeeee",
    )
    assert color_hex(None) is None and color_hex((255, 0, 16)) == "#ff0010"


def test_reverse_video_swaps_the_colours_as_displayed() -> None:
    v = view("\x1b[7mS\x1b[0m \x1b[31;7mR\x1b[0m", layers=("fgColors", "bgColors"), encoding="runs")
    palette = v["colorPalette"]
    (fg_s, fg_r), (bg_s, bg_r) = v["fgColors"][0], v["bgColors"][0]
    assert palette[fg_s[2]] == "default-bg" and palette[bg_s[2]] == "default-fg"
    assert palette[fg_r[2]] == "default-bg" and palette[bg_r[2]] == "#cd0000"
    assert (fg_s[:2], fg_r[:2]) == ([0, 1], [2, 3])


def test_palette_overflow_maps_to_the_nearest_colour() -> None:
    # 61 colours on two cells each get the 61 symbols; 9 more on one cell each are one step away from one of them.
    kept = [(4 * i, 255 - 4 * i, 128) for i in range(61)]
    rare = [(4 * i + 1, 255 - 4 * i, 128) for i in range(0, 61, 7)]
    output = "".join(f"\x1b[38;2;{r};{g};{b}mxx" for r, g, b in kept) + "".join(
        f"\x1b[38;2;{r};{g};{b}my" for r, g, b in rare
    )
    v = view(output, cols=200, rows=2, layers=("text", "fgColors"), encoding="cells")
    palette, cells = v["colorPalette"], v["fgColors"][0]
    assert len(palette) == 62 and len(set(palette)) == 62
    assert v["palette_overflow"] == len(rare) == 9
    for n, i in enumerate(range(0, 61, 7)):
        assert cells[122 + n] == cells[2 * i]  # the rare colour shares its near twin's symbol
        assert palette[cells[122 + n]] == "#{:02x}{:02x}{:02x}".format(*kept[i])
    assert "palette_overflow" not in view("\x1b[31mx", layers=("fgColors",))


# ----------------------------------------------------------------------------- viewport


def test_region_clipped_at_the_bottom_right_edge() -> None:
    rows = "".join(f"\x1b[{r + 1};1H" + "".join(chr(65 + (r + c) % 26) for c in range(20)) for r in range(5))
    v = view(
        rows + "\x1b[31m\x1b[5;19HZZ\x1b[5;20H", region=Region(17, 3, 10, 10), layers=("text", "cursor", "fgColors"),
        encoding="runs",
    )
    assert v["viewport"] == {"mode": "region", "left": 17, "top": 3, "width": 3, "height": 2}
    assert v["text"] == ["UVW", "VZZ"]
    assert v["cursor"] == {"left": 19, "top": 4, "relLeft": 2, "relTop": 1, "visible": True}
    assert v["fgColors"] == [[], [[1, 3, "1"]]]  # columns count from the region's left edge
    outside = view("x", region=Region(30, 10, 5, 5))
    assert outside["viewport"]["width"] == 0 == outside["viewport"]["height"] and outside["text"] == []


def test_region_cuts_wide_characters_into_blanks(engine_name: str) -> None:
    assert view("中文ab", engine=engine_name, region=Region(1, 0, 4, 1))["text"] == [" 文a"]
    assert view("中文ab", engine=engine_name, region=Region(0, 0, 3, 1))["text"] == ["中"]


def test_region_over_cells_of_several_code_points(engine_name: str) -> None:
    # a cell keeps its whole text (a ZWJ family, a letter and its accent) and the layers count its columns
    family = "\U0001F468\u200d\U0001F469\u200d\U0001F467"
    output = f"a{family}e\u0301\x1b[31m\u2764\ufe0fx\x1b[0m\U0001F1E9\U0001F1EA"
    v = view(output, engine=engine_name, region=Region(1, 0, 6, 1), layers=("text", "fgColors"), encoding="runs")
    assert v["text"] == [f"{family}e\u0301\u2764\ufe0fx\U0001F1E9"]
    assert v["fgColors"] == [[[3, 5, "1"]]]
    assert view(output, engine=engine_name, region=Region(2, 0, 3, 1))["text"] == [" e\u0301\u2764\ufe0f"]
    assert view(output, engine=engine_name)["text"][0] == f"a{family}e\u0301\u2764\ufe0fx\U0001F1E9\U0001F1EA"


def test_around_cursor_at_the_top_and_bottom_rows() -> None:
    lines = "\r\n".join(f"line {i}" for i in range(10))
    top = view(lines + "\x1b[1;3H", rows=10, around_cursor=2)
    assert top["viewport"] == {"mode": "aroundCursor", "left": 0, "top": 0, "width": 20, "height": 3}
    assert top["text"] == ["line 0", "line 1", "line 2"]
    assert (top["cursor"]["relTop"], top["cursor"]["relLeft"]) == (0, 2)
    bottom = view(lines, rows=10, around_cursor=2)
    assert bottom["viewport"]["top"] == 7 and bottom["text"] == ["line 7", "line 8", "line 9"]
    assert bottom["cursor"]["relTop"] == 2
    assert view(lines, rows=10, around_cursor=0)["text"] == ["line 9"]


def test_full_viewport_is_short() -> None:
    v = view("hi")
    assert v["viewport"] == {"mode": "full"}
    assert v["cursor"] == {"left": 2, "top": 0, "visible": True}
    assert v["terminal"] == {"width": 20, "height": 5} and v["title"] == "t" and v["alt_screen"] is False


def test_compact_keeps_the_row_index_of_every_row() -> None:
    v = view("first\r\n\r\n\r\nfourth\r\n\x1b[44m  \x1b[0m", compact=True, layers=("text", "bgColors"))
    assert v["rows"] == [0, 3, 4]
    assert v["text"] == ["first", "fourth", ""]  # the last row has only a coloured background
    assert "rows" not in view("a\r\nb\r\nc\r\nd\r\ne", compact=True)  # nothing left out: no index needed


# ----------------------------------------------------------------------------- encodings, budget, changes


def test_auto_encoding_picks_the_cheaper_form_per_row() -> None:
    output = "".join(f"{'x' * 50}\x1b[1;{31 + r % 6}m{'y' * 12}\x1b[0m\r\n" for r in range(9))
    output += "".join("\x1b[1mb\x1b[0m." for _ in range(30))  # many short runs: cheaper as cells
    auto = view(output, cols=80, rows=10, layers=LAYERS)
    for layer in ("fgColors", "bgColors", "styles", "bold", "italic", "underline"):
        runs = view(output, cols=80, rows=10, layers=(layer,), encoding="runs")[layer]
        cells = view(output, cols=80, rows=10, layers=(layer,), encoding="cells")[layer]
        cheaper = [min(r, c, key=lambda row: count_tokens(orjson.dumps(row).decode()))
                   for r, c in zip(runs, cells, strict=True)]
        assert auto[layer] == cheaper, layer
    assert isinstance(auto["bold"][0], list) and isinstance(auto["bold"][9], str)


def test_tokens_is_the_count_of_the_response_itself(engine_name: str) -> None:
    for options in ({}, {"layers": LAYERS}, {"layers": LAYERS, "encoding": "cells", "compact": True}):
        v = view(EIGHT_STYLES + "\r\n\x1b[32mgreen", engine=engine_name, **options)
        assert v["tokens"] == own_count(v) > 0
    text = render(screen("hello"), ViewOptions(format="text"))
    assert isinstance(text, str) and f"tokens={count_tokens(text)}" in text.splitlines()[0]


def test_max_tokens_keeps_the_head_and_tail() -> None:
    lines = "\r\n".join(f"row {i} " + "lorem ipsum dolor sit amet " * 3 for i in range(40))
    full = view(lines, cols=100, rows=40)
    assert "omitted" not in full and "rows" not in full
    v = view(lines, cols=100, rows=40, max_tokens=400)
    assert v["tokens"] == own_count(v) <= 400
    assert v["omitted"]["rows"] == 40 - len(v["rows"]) > 0
    assert v["rows"][0] == 0 and v["rows"][-1] == 39
    gap = next(i for i in range(len(v["rows"]) - 1) if v["rows"][i + 1] != v["rows"][i] + 1)
    assert v["rows"] == list(range(gap + 1)) + list(range(40 - len(v["rows"]) + gap + 1, 40))
    assert abs((gap + 1) - (len(v["rows"]) - gap - 1)) <= 1  # as many from the head as from the tail
    assert v["text"][0] == full["text"][0] and v["text"][-1] == full["text"][-1]
    assert view(lines, cols=100, rows=40, max_tokens=full["tokens"]) == full


def test_max_tokens_drops_the_oldest_scrollback_first() -> None:
    lines = "\r\n".join(f"line {i} with some words" for i in range(30))
    data = screen(lines, cols=40, rows=5, scrollback=25)
    whole = render(data, ViewOptions())
    assert isinstance(whole, dict) and len(whole["scrollback"]) == 25
    v = render(data, ViewOptions(max_tokens=whole["tokens"] - 30))
    assert isinstance(v, dict) and v["tokens"] == own_count(v) <= whole["tokens"] - 30
    assert v["text"] == whole["text"] and "rows" not in v
    assert v["omitted"] == {"scrollback": 25 - len(v["scrollback"])}
    assert v["scrollback"][-1] == "line 24 with some words"  # the newest lines stay


def test_changed_rows_only() -> None:
    data = screen("a\r\nb\r\nc\r\nd", changed_rows={1, 3, 17})
    v = render(data, ViewOptions(layers=("text", "bold")))
    assert isinstance(v, dict) and v["rows"] == [1, 3] and v["text"] == ["b", "d"]


def test_extra_fields_follow_the_header() -> None:
    data = screen("x", extra={"state": "idle", "raw_offset": 7})
    v = render(data, ViewOptions())
    assert isinstance(v, dict)
    assert list(v)[:7] == ["terminal", "viewport", "cursor", "title", "alt_screen", "state", "raw_offset"]


# ----------------------------------------------------------------------------- text format


def test_text_format_header_rows_and_layers() -> None:
    data = screen("plain\r\n\r\n\x1b[1;31mbold red\x1b[0m", extra={"state": "idle"})
    text = render(data, ViewOptions(layers=("text", "cursor", "fgColors", "bold"), compact=True, format="text"))
    assert isinstance(text, str)
    lines = text.splitlines()
    assert lines[0].startswith("# screen 20x5 viewport=full cursor=8,2 title=\"t\" alt_screen=false state=\"idle\"")
    assert lines[1:] == [
        "0: plain", "2: bold red",
        "# fgColors: 0=default 1=#cd0000", "0: ", "2: 11111111",
        "# bold: b=bold", "0: ", "2: bbbbbbbb",
    ]
    plain = render(screen("one\r\ntwo", rows=2), ViewOptions(format="text"))
    assert isinstance(plain, str) and plain.splitlines()[1:] == ["one", "two"]


def test_text_format_marks_the_rows_left_out() -> None:
    lines = "\r\n".join(f"row {i} " + "words " * 12 for i in range(30))
    text = render(screen(lines, cols=90, rows=30), ViewOptions(format="text", max_tokens=200))
    assert isinstance(text, str) and count_tokens(text) <= 200
    marker = next(line for line in text.splitlines() if "rows omitted" in line)
    assert marker.startswith("# ... ") and text.splitlines()[1].startswith(" 0: row 0")


# ----------------------------------------------------------------------------- options


def test_parse_layers_and_region() -> None:
    assert parse_layers(" text, bold ,text") == ("text", "bold")
    with pytest.raises(BadInput, match="unknown layer 'colour'; valid layers: text,cursor,fgColors"):
        parse_layers("text,colour")
    with pytest.raises(BadInput, match="no layer"):
        parse_layers(",")
    assert parse_region("1,2,30,4") == Region(1, 2, 30, 4)
    for bad in ("1,2,3", "a,b,c,d", "-1,0,5,5", "0,0,0,5", "1,2,3,4,5"):
        with pytest.raises(BadInput, match="left,top,width,height"):
            parse_region(bad)
    with pytest.raises(BadInput, match="exclude each other"):
        ViewOptions(region=Region(0, 0, 1, 1), around_cursor=1)


# ----------------------------------------------------------------------------- properties (hypothesis)

SGR = st.sampled_from(["\x1b[0m", "\x1b[1m", "\x1b[3m", "\x1b[4m", "\x1b[7m", "\x1b[31m", "\x1b[42m", "\x1b[38;5;200m",
                       "\x1b[48;2;10;20;30m", "\x1b[38;2;1;2;3m", "\r\n", "\x1b[2;5H", "\x1b[K"])  # fmt: skip
OUTPUT = st.lists(st.one_of(SGR, st.text("ab xy─█中é", min_size=1, max_size=8)), max_size=60).map("".join)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    output=OUTPUT,
    layers=st.lists(st.sampled_from(LAYERS), min_size=1, unique=True),
    compact=st.booleans(),
    encoding=st.sampled_from(["auto", "runs", "cells"]),
    around=st.one_of(st.none(), st.integers(0, 6)),
    max_tokens=st.one_of(st.none(), st.integers(1, 400)),
)
def test_any_screen_and_options_render_within_their_budget(
    output: str, layers: list[str], compact: bool, encoding: str, around: int | None, max_tokens: int | None
) -> None:
    result = view(output, cols=12, rows=6, layers=tuple(layers), compact=compact, encoding=encoding,
                  around_cursor=around, max_tokens=max_tokens)  # fmt: skip
    assert result["tokens"] == own_count(result)
    shown = result.get("text", [])
    if max_tokens is not None and result["tokens"] > max_tokens:
        assert not shown, "over budget only when not even the header fits"
    for layer in set(layers) - {"text", "cursor"}:
        rows = result.get(layer)
        if rows is None or not isinstance(rows, list):
            continue
        for row in rows:
            if isinstance(row, list):  # runs: [start, end, symbol], in order, inside the row
                starts = [run[0] for run in row if isinstance(run, list)]
                assert starts == sorted(starts) and all(0 <= s < 12 for s in starts)


def test_view_options_round_trip_through_json_and_refuse_what_is_not_theirs() -> None:
    """A frame records the options of a screen read as JSON (`to_json`: the defaults left out) and shows the
    screen again with `from_json` of it."""
    assert ViewOptions().to_json() == {"layers": ["text", "cursor"]}
    for options in (
        ViewOptions(),
        ViewOptions(layers=("text", "fgColors", "bgColors", "styles"), region=Region(3, 1, 40, 10), compact=True,
                    encoding="cells", max_tokens=400, format="text"),  # fmt: skip
        ViewOptions(layers=("bold",), around_cursor=0),
    ):
        assert ViewOptions.from_json(orjson.loads(orjson.dumps(options.to_json()))) == options
    for bad in ([], {"layers": "text"}, {"layers": ["colour"]}, {"layers": []}, {"region": [1, 2, 3]},
                {"region": [0, 0, 0, 1]}, {"around_cursor": -1}, {"around_cursor": True}, {"compact": 1},
                {"encoding": "rle"}, {"max_tokens": 0}, {"format": "html"},
                {"region": [0, 0, 5, 5], "around_cursor": 2}):  # fmt: skip
        with pytest.raises(BadInput):
            ViewOptions.from_json(bad)
