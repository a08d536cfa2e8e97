"""The layered screenshot: a terminal screen as separate layers an agent picks from, within a token budget.

Pure functions over plain data (`ScreenData`, `ViewOptions`); no I/O. The JSON view (compact, never
pretty-printed) is, in this order:

- `terminal` {width, height}; `viewport`: the part of the screen shown, {mode: region|aroundCursor,
  left, top, width, height}, or just {mode: full} for the whole screen (a region is clipped to the
  screen; `around_cursor=N` is N rows above and below the cursor row, as many as there are); `cursor`
  {left, top, relLeft, relTop, visible} with the `cursor` layer (relLeft/relTop, relative to the
  viewport, only when it is not full); `title`, `alt_screen`, then the caller's extra fields;
- `tokens`: o200k_base tokens of this very object serialized as compact JSON (or of the text view);
- `omitted` {rows?, scrollback?}: how many rows (from the middle) and scrollback lines (the oldest) were
  left out to stay within `max_tokens`;
- `rows`: the screen row of each returned row, whenever not every row of the viewport is returned
  (`compact` drops rows that are empty in every requested layer, `changed_since` keeps changed rows only,
  `max_tokens` keeps the head and the tail);
- `colorPalette`, `palette_overflow`, `styleLegend`: see lookout.terminal.screen.cell_layers;
- `scrollback`: lines that scrolled off the top, oldest first, when asked for;
- `text`: the rows' text clipped to the viewport, trailing blanks cut;
- `fgColors`, `bgColors`, `styles`, `bold`, `italic`, `underline`: one value per row, each a string of
  per-cell symbols or a list of `[start_col, end_col, symbol]` runs (see lookout.terminal.screen.cell_layers); a
  list stops at its last row with something to show (rows past its end are all default).

The text view (`format=text`) is the same view for people: a one-line header, then the rows, then each
cell layer in the cells encoding under a line that names it.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping, Sequence
from collections.abc import Set as AbstractSet
from dataclasses import dataclass, field, replace
from itertools import chain
from typing import Any, Literal

import orjson

from lookout.core.budget import fit, self_counted, within
from lookout.core.errors import BadInput
from lookout.core.tokens import count_tokens
from lookout.terminal.screen.cell_layers import CELL_LAYERS, CellLayers, Encoding
from lookout.terminal.screen.engines.base import Cell, Cursor

LAYERS = ("text", "cursor", *CELL_LAYERS)
DEFAULT_LAYERS = ("text", "cursor")
Format = Literal["json", "text"]


@dataclass(frozen=True, slots=True)
class Region:
    """A requested part of the screen, in cells (it may reach outside the screen)."""

    left: int
    top: int
    width: int
    height: int


def parse_layers(spec: str) -> tuple[str, ...]:
    """ "text,cursor,bold" -> ("text", "cursor", "bold"); an unknown name is a BadInput listing the valid
    ones."""
    names = tuple(dict.fromkeys(name.strip() for name in spec.split(",") if name.strip()))
    _check_layers(names)
    return names


def _check_layers(names: Sequence[str]) -> None:
    unknown = [name for name in names if name not in LAYERS]
    if unknown or not names:
        what = f"unknown layer {unknown[0]!r}" if unknown else "no layer given"
        raise BadInput(f"{what}; valid layers: {','.join(LAYERS)}", field="layers")


def parse_region(spec: str) -> Region:
    """ "left,top,width,height" -> Region; anything else (or a negative origin, an empty size) is a
    BadInput. A region that reaches outside the screen is valid: it is clipped when the view is built."""
    try:
        values = [int(part) for part in spec.split(",")]
    except ValueError:
        values = []
    if len(values) != 4 or min(values[:2]) < 0 or min(values[2:]) < 1:
        raise BadInput(
            f"region {spec!r} is not left,top,width,height (left, top >= 0; width, height >= 1)", field="region"
        )
    return Region(*values)


@dataclass(frozen=True, slots=True)
class ViewOptions:
    """What to show: which layers, which part of the screen, how, and within how many tokens."""

    layers: tuple[str, ...] = DEFAULT_LAYERS
    region: Region | None = None
    around_cursor: int | None = None
    compact: bool = False
    encoding: Encoding = "auto"
    """Cell layers as "runs", "cells", or row by row whichever is fewer tokens ("auto", runs on a tie)."""
    max_tokens: int | None = None
    format: Format = "json"

    def __post_init__(self) -> None:
        _check_layers(self.layers)
        if self.region is not None and self.around_cursor is not None:
            raise BadInput("region and around_cursor exclude each other", field="around_cursor")

    def to_json(self) -> dict[str, Any]:
        """The layers, then the options that differ from their defaults, as plain JSON (what a frame records of
        a screen read)."""
        out: dict[str, Any] = {"layers": list(self.layers)}
        if self.region is not None:
            r = self.region
            out["region"] = [r.left, r.top, r.width, r.height]
        defaults = ViewOptions()
        for name in ("around_cursor", "compact", "encoding", "max_tokens", "format"):
            if getattr(self, name) != getattr(defaults, name):
                out[name] = getattr(self, name)
        return out

    @classmethod
    def from_json(cls, value: Any) -> ViewOptions:
        """The options `to_json` gave; anything else is a BadInput that says which field is wrong."""
        if not isinstance(value, dict):
            raise BadInput("view options are not an object", field="view")
        layers, region = value.get("layers", list(DEFAULT_LAYERS)), value.get("region")
        if not isinstance(layers, list) or not all(isinstance(name, str) for name in layers):
            raise BadInput("layers is not a list of names", field="layers")
        if region is not None:
            if not isinstance(region, list) or len(region) != 4 or not all(_is_int(v) for v in region):
                raise BadInput(f"region {region!r} is not [left, top, width, height]", field="region")
            region = parse_region(",".join(str(v) for v in region))
        checks: dict[str, Callable[[Any], bool]] = {
            "around_cursor": lambda v: v is None or (_is_int(v) and v >= 0),
            "compact": lambda v: isinstance(v, bool),
            "encoding": lambda v: v in ("auto", "runs", "cells"),
            "max_tokens": lambda v: v is None or (_is_int(v) and v >= 1),
            "format": lambda v: v in ("json", "text"),
        }
        given = {name: value[name] for name in checks if name in value}
        for name, good in checks.items():
            if name in given and not good(given[name]):
                raise BadInput(f"{name} {given[name]!r} is not a valid value", field=name)
        return cls(layers=tuple(layers), region=region, **given)


def _is_int(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


@dataclass(frozen=True, slots=True)
class ScreenData:
    """One screen as plain data. `row_cells` is called only for rows that need cells (cell layers, or
    text cut by a narrow viewport)."""

    cols: int
    rows: int
    cursor: Cursor
    text: Sequence[str]
    """Each row's text, trailing blanks cut."""
    row_cells: Callable[[int], Sequence[Cell]]
    title: str = ""
    alt_screen: bool = False
    scrollback: Sequence[str] = ()
    changed_rows: AbstractSet[int] | None = None
    """Only these rows are returned (changed_since); None: every row."""
    extra: Mapping[str, Any] = field(default_factory=dict)
    """Further header fields, placed after `alt_screen` (the session's state, raw_offset, ...)."""


@dataclass(frozen=True, slots=True)
class Viewport:
    """The part of the screen a view shows, within the screen."""

    mode: Literal["full", "region", "aroundCursor"]
    left: int
    top: int
    width: int
    height: int


def viewport(screen: ScreenData, options: ViewOptions) -> Viewport:
    """The part of the screen the options select, clipped to the screen."""
    if options.region is not None:
        r = options.region
        left, top = min(r.left, screen.cols), min(r.top, screen.rows)
        right, bottom = min(r.left + r.width, screen.cols), min(r.top + r.height, screen.rows)
        return Viewport("region", left, top, right - left, bottom - top)
    if options.around_cursor is not None:
        row, n = screen.cursor.row, options.around_cursor
        top, bottom = max(0, row - n), min(screen.rows, row + n + 1)
        return Viewport("aroundCursor", 0, top, screen.cols, bottom - top)
    return Viewport("full", 0, 0, screen.cols, screen.rows)


def render(screen: ScreenData, options: ViewOptions) -> dict[str, Any] | str:
    """The layered view of `screen`: a JSON-ready dict, or a string for format=text. Its `tokens` is the
    token count of its own serialization; with `max_tokens`, rows are left out to stay within it."""
    view = _build(screen, options)
    serialize = _serializer(options.format)
    if options.max_tokens is None:
        tokens = _counted(view, serialize)[1]
    else:
        view, tokens = _fit(view, serialize, options.max_tokens)
    return _as_dict(view, tokens) if options.format == "json" else _as_text(view, tokens)


# ----------------------------------------------------------------------------- building


@dataclass(frozen=True, slots=True)
class _View:
    """A built view before serialization; `subset` is what the token budget works with."""

    head: dict[str, Any]
    legends: dict[str, Any]
    rows: list[int]
    """The screen row of each selected row."""
    layers: dict[str, list[Any]]
    """Requested row layers, in LAYERS order -> one value per selected row."""
    scrollback: list[str]
    complete: bool
    """Every row of the viewport is selected."""
    omitted: dict[str, int] = field(default_factory=dict)
    gap: int | None = None
    """Where the rows left out by the budget were: the index in `rows` of the first row after them."""

    def subset(self, head: int, tail: int, scrollback: int) -> _View:
        """The first `head` and last `tail` rows and the newest `scrollback` lines; the rest is omitted."""
        keep = list(range(head)) + list(range(len(self.rows) - tail, len(self.rows)))
        omitted = {"rows": len(self.rows) - len(keep), "scrollback": len(self.scrollback) - scrollback}
        return replace(
            self,
            rows=[self.rows[i] for i in keep],
            layers={name: [values[i] for i in keep] for name, values in self.layers.items()},
            scrollback=self.scrollback[len(self.scrollback) - scrollback :],
            omitted={key: n for key, n in omitted.items() if n},
            gap=head if omitted["rows"] else None,
        )


def _build(screen: ScreenData, options: ViewOptions) -> _View:
    vp = viewport(screen, options)
    wanted = set(options.layers)
    cell_layers = CellLayers(options.layers) if wanted & set(CELL_LAYERS) else None
    rows: list[int] = []
    texts: list[str] = []
    for row in range(vp.top, vp.top + vp.height):
        if screen.changed_rows is not None and row not in screen.changed_rows:
            continue
        rows.append(row)
        cells: Sequence[Cell] | None = None
        if cell_layers is not None:
            cells = screen.row_cells(row)
            cell_layers.add_row(cells, vp.left, vp.width)
        if "text" in wanted:
            texts.append(_row_text(screen, row, vp, cells))
    layers: dict[str, list[Any]] = {"text": texts} if "text" in wanted else {}
    legends: dict[str, Any] = {}
    if cell_layers is not None:
        encoded = cell_layers.encode("cells" if options.format == "text" else options.encoding, _fewer_tokens)
        layers.update(encoded.layers)
        if encoded.palette is not None:
            legends["colorPalette"] = encoded.palette
        if encoded.overflow:
            legends["palette_overflow"] = encoded.overflow
        if encoded.style_legend is not None:
            legends["styleLegend"] = encoded.style_legend
    if options.compact and layers:
        keep = [i for i in range(len(rows)) if any(values[i] for values in layers.values())]
        rows = [rows[i] for i in keep]
        layers = {name: [values[i] for i in keep] for name, values in layers.items()}
    return _View(
        head=_head(screen, vp, "cursor" in wanted),
        legends=legends,
        rows=rows,
        layers=layers,
        scrollback=list(screen.scrollback),
        complete=len(rows) == vp.height,
    )


def _head(screen: ScreenData, vp: Viewport, with_cursor: bool) -> dict[str, Any]:
    """terminal, viewport, cursor, title, alt_screen, extra. A full viewport is just {"mode": "full"}, and
    the cursor's relLeft/relTop are given only when the viewport is not full (they equal left/top)."""
    full = vp.mode == "full"
    head: dict[str, Any] = {
        "terminal": {"width": screen.cols, "height": screen.rows},
        "viewport": {"mode": "full"} if full else
        {"mode": vp.mode, "left": vp.left, "top": vp.top, "width": vp.width, "height": vp.height},
    }  # fmt: skip
    if with_cursor:
        cur = screen.cursor
        head["cursor"] = {"left": cur.col, "top": cur.row}
        if not full:
            head["cursor"].update(relLeft=cur.col - vp.left, relTop=cur.row - vp.top)
        head["cursor"]["visible"] = cur.visible
    head["title"] = screen.title
    head["alt_screen"] = screen.alt_screen
    head.update(screen.extra)
    return head


def _row_text(screen: ScreenData, row: int, vp: Viewport, cells: Sequence[Cell] | None) -> str:
    """The text of `row` within the viewport's columns; a wide character cut by an edge becomes a blank."""
    text = screen.text[row]
    if vp.width == screen.cols:
        return text
    if text.isascii():
        return text[vp.left : vp.left + vp.width].rstrip()
    cells = cells if cells is not None else screen.row_cells(row)
    chars = [cell.char for cell in cells[vp.left : vp.left + vp.width]]
    if chars and not chars[0]:  # the right half of a wide character whose left half is outside
        chars[0] = " "
    if chars and cells[vp.left + len(chars) - 1].width == 2:  # a wide character whose right half is outside
        chars[-1] = " "
    return "".join(chars).rstrip()


def _fewer_tokens(runs: list[Any], cells: list[Any]) -> list[Any]:
    """Row by row, the runs (a list) or the cells (a string), whichever costs fewer tokens. Rows repeat
    (empty rows, and `bold` often equals `styles`), so each serialization is counted once."""
    counted: dict[str, int] = {}

    def cost(value: Any) -> int:
        text = _dumps(value)
        n = counted.get(text)
        if n is None:
            n = counted[text] = count_tokens(text)
        return n

    return [c if c == "" or cost(r) > cost(c) else r for r, c in zip(runs, cells, strict=True)]


def _dumps(value: Any) -> str:
    return orjson.dumps(value).decode()


# ----------------------------------------------------------------------------- tokens


Serializer = Callable[[_View, int], str]


def _serializer(fmt: Format) -> Serializer:
    if fmt == "json":
        return lambda view, tokens: _dumps(_as_dict(view, tokens))
    return _as_text


def _counted(view: _View, serialize: Serializer) -> tuple[_View, int]:
    """The view and its `tokens`: the count of the view serialized with it."""
    return view, self_counted(lambda tokens: serialize(view, tokens))[1]


def _fit(view: _View, serialize: Serializer, max_tokens: int) -> tuple[_View, int]:
    """The view within `max_tokens`, and its count: the oldest scrollback lines go first, then rows from the
    middle of the screen (the head and the tail stay; the tail has the extra row of an odd number). Costs are
    estimated per row, then checked on the whole."""
    n, lines = len(view.rows), len(view.scrollback)
    order = [n - 1 - i // 2 if i % 2 == 0 else i // 2 for i in range(n)]  # the last row, the first, ...

    def part(k: int) -> _View:
        """The first k of the rows in `order`, then of the scrollback lines, newest first."""
        rows = min(k, n)
        return view.subset(rows // 2, rows - rows // 2, k - rows)

    def estimate() -> int:
        row_costs = (1 + sum(count_tokens(_dumps(values[i])) + 1 for values in view.layers.values()) for i in order)
        line_costs = (count_tokens(_dumps(line)) + 1 for line in reversed(view.scrollback))
        return within(chain(row_costs, line_costs), max_tokens - count_tokens(serialize(part(0), max_tokens)))

    def measure(k: int) -> tuple[_View, int]:
        """The part and its count with `max_tokens` in place of its own count (which has no more digits: a
        part within the budget so is with its own count), so a check counts once."""
        view = part(k)
        return view, count_tokens(serialize(view, max_tokens))

    return _counted(fit(measure, max_tokens, n + lines, estimate).value, serialize)


# ----------------------------------------------------------------------------- serialization


def _as_dict(view: _View, tokens: int) -> dict[str, Any]:
    out = {**view.head, "tokens": tokens}
    if view.omitted:
        out["omitted"] = view.omitted
    if view.layers and (not view.complete or view.omitted.get("rows")):
        out["rows"] = view.rows
    out.update(view.legends)
    if view.scrollback or "scrollback" in view.omitted:
        out["scrollback"] = view.scrollback
    for name, values in view.layers.items():
        out[name] = values if name == "text" else _without_trailing_empty(values)
    return out


def _without_trailing_empty(values: list[Any]) -> list[Any]:
    """A cell layer's list stops at its last row with something to show."""
    end = len(values)
    while end and not values[end - 1]:
        end -= 1
    return values[:end]


def _as_text(view: _View, tokens: int) -> str:
    """The text view: a one-line header, then the rows (each with its screen row when not every row of
    the viewport is shown), then each cell layer in the cells encoding under a line that names it and
    its symbols."""
    lines = [_text_header(view, tokens)]
    if view.scrollback or view.omitted.get("scrollback"):
        lines.append(f"# scrollback ({len(view.scrollback)} lines{_omitted_note(view, 'scrollback')})")
        lines += view.scrollback
    numbered = not view.complete or bool(view.omitted.get("rows"))
    width = len(str(view.rows[-1])) if view.rows else 1
    gap_line = f"# ... {view.omitted.get('rows')} rows omitted ..."
    for name, values in view.layers.items():
        if name != "text" or len(lines) > 1:
            lines.append(f"# {name}{_legend_note(view, name)}")
        if name != "text":
            values = _without_trailing_empty(values)
        for i, (row, value) in enumerate(zip(view.rows, values, strict=False)):  # values: trailing empties dropped
            if i == view.gap:
                lines.append(gap_line)
            lines.append(f"{row:>{width}}: {value}" if numbered else value)
        if view.gap == len(values):
            lines.append(gap_line)
    return "\n".join(lines)


def _text_header(view: _View, tokens: int) -> str:
    head = dict(view.head)
    term, vp = head.pop("terminal"), head.pop("viewport")
    parts = [f"# screen {term['width']}x{term['height']}", f"viewport={vp['mode']}"]
    if vp["mode"] != "full":
        parts[-1] += f":{vp['left']},{vp['top']},{vp['width']}x{vp['height']}"
    cursor = head.pop("cursor", None)
    if cursor is not None:
        parts.append(f"cursor={cursor['left']},{cursor['top']}{'' if cursor['visible'] else ',hidden'}")
    parts += [f"{key}={json.dumps(value, ensure_ascii=False)}" for key, value in head.items()]
    parts.append(f"tokens={tokens}")
    return " ".join(parts)


def _omitted_note(view: _View, key: str) -> str:
    n = view.omitted.get(key)
    return f", {n} older omitted" if n else ""


def _legend_note(view: _View, layer: str) -> str:
    if layer in ("fgColors", "bgColors"):
        palette = view.legends["colorPalette"]
        return ": " + " ".join(f"{symbol}={colour or 'default'}" for symbol, colour in palette.items())
    if layer == "text":
        return ""
    legend = view.legends["styleLegend"]
    return ": " + " ".join(f"{char}={meaning or 'plain'}" for char, meaning in legend.items())
