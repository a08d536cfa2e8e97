"""pyte's Screen with its defects fixed: the model behind PyteEngine.

pyte 0.8.2 (reproduced): has no alternate buffer (pyte issue 90), loses the rest of a text run at a
zero-width character that is not a combining mark (ZWJ, ZWSP, VS16), lacks REP, and fails on erase values
and CSI parameters that terminals ignore; PyteScreen fixes each (see its docstring). What pyte gets wrong
before the screen, the engine and the side scanner handle: bytes are decoded incrementally (pyte would
break a character split across reads), and OSC marks are read from the raw bytes (pyte parses OSC by its
first character, so OSC 7, 133 and 633 never reach it intact).
"""

from __future__ import annotations

import copy
import functools
import inspect
from collections import defaultdict, deque
from collections.abc import Callable

import pyte
from pyte import modes as mo
from pyte.charsets import LAT1_MAP
from pyte.screens import Char, Margins, StaticDefaultDict

from .modes import ALT_SCREEN_MODES
from .text import ZWJ, char_width, joined

Line = StaticDefaultDict[int, Char]

# SGR parameters that set one Char field. Cells keep pyte's Char, but `bold` holds the intensity
# (0 normal, 1 bold, 2 faint) and colours are "default", a palette index or an (r, g, b) tuple.
_SGR_FIELDS: dict[int, tuple[str, object]] = {
    1: ("bold", 1),
    2: ("bold", 2),
    22: ("bold", 0),
    3: ("italics", True),
    23: ("italics", False),
    4: ("underscore", True),
    24: ("underscore", False),
    5: ("blink", True),
    6: ("blink", True),
    25: ("blink", False),
    7: ("reverse", True),
    27: ("reverse", False),
    9: ("strikethrough", True),
    29: ("strikethrough", False),
    39: ("fg", "default"),
    49: ("bg", "default"),
}
_SGR_FIELDS.update({p: ("fg", p - 30) for p in range(30, 38)})
_SGR_FIELDS.update({p: ("bg", p - 40) for p in range(40, 48)})
_SGR_FIELDS.update({p: ("fg", p - 82) for p in range(90, 98)})
_SGR_FIELDS.update({p: ("bg", p - 92) for p in range(100, 108)})


def _extended_color(params: tuple[int, ...], i: int) -> tuple[int | tuple[int, int, int] | None, int]:
    """The colour of `38;5;n` or `38;2;r;g;b` whose parameters start at params[i], and the next index."""
    if params[i : i + 1] == (5,) and i + 1 < len(params):
        return min(params[i + 1], 255), i + 2
    if params[i : i + 1] == (2,) and i + 3 < len(params):
        r, g, b = (min(value, 255) for value in params[i + 1 : i + 4])
        return (r, g, b), i + 4
    return None, len(params)


class _Cells(dict[str, Char]):
    """The cells of one style keyed by character, so drawing plain text costs a dict lookup per cell."""

    def __init__(self, attrs: Char) -> None:
        super().__init__()
        self.attrs = attrs

    def __missing__(self, char: str) -> Char:
        cell = self[char] = self.attrs._replace(data=char)
        return cell


class PyteScreen(pyte.Screen):
    """pyte.Screen plus what pyte lacks: an alternate buffer, a bounded scrollback (only `index()` is
    extended: pyte's HistoryScreen is 2.5-5x slower), zero-width characters and ZWJ sequences joined to
    their cell as tmux joins them (see text.py) without cutting the text run, REP, SU/SD, palette indexes
    and faint in SGR, and a resize that keeps the cursor row visible."""

    def __init__(self, columns: int, lines: int, scrollback: int) -> None:
        self.history: deque[Line] = deque(maxlen=scrollback)
        self.primary: tuple[dict[int, Line], pyte.screens.Cursor] | None = None  # saved while on the alt screen
        self._last_char = ""
        self._zwj = False  # a ZWJ came last: the next non-ASCII character joins the cell before it
        self._cells_by_attrs: dict[Char, _Cells] = {}
        super().__init__(columns, lines)

    def reset(self) -> None:
        self.primary = None
        super().reset()

    def erase_in_line(self, how: int = 0, private: bool = False) -> None:
        if how in (0, 1, 2):  # pyte fails on other values; terminals ignore them
            super().erase_in_line(how, private)

    # Modes -------------------------------------------------------------------------------------------

    def set_mode(self, *modes: int, **kwargs: object) -> None:
        super().set_mode(*modes, **kwargs)
        if kwargs.get("private") and self.primary is None and not ALT_SCREEN_MODES.isdisjoint(modes):
            self.primary = (self.buffer, copy.copy(self.cursor))
            self.buffer = defaultdict(self.blank_line)
            self.dirty.update(range(self.lines))

    def reset_mode(self, *modes: int, **kwargs: object) -> None:
        super().reset_mode(*modes, **kwargs)
        if kwargs.get("private") and self.primary is not None and not ALT_SCREEN_MODES.isdisjoint(modes):
            self.buffer, cursor = self.primary
            self.primary = None
            if 1049 in modes:
                cursor.hidden = self.cursor.hidden
                self.cursor = cursor
                self.ensure_hbounds()
                self.ensure_vbounds()
            self.dirty.update(range(self.lines))

    # Scrolling ---------------------------------------------------------------------------------------

    def index(self) -> None:
        top, bottom = self.margins or Margins(0, self.lines - 1)
        if self.cursor.y == bottom and top == 0 and self.primary is None:
            self.history.append(self.buffer[0])
        super().index()

    def scroll_up(self, count: int | None = None) -> None:
        """SU: scroll the region up; what leaves the top of the screen goes to the scrollback."""
        self._scroll(self.index, (self.margins or Margins(0, self.lines - 1)).bottom, count)

    def scroll_down(self, count: int | None = None) -> None:
        """SD: scroll the region down."""
        self._scroll(self.reverse_index, (self.margins or Margins(0, self.lines - 1)).top, count)

    def _scroll(self, step: Callable[[], None], row: int, count: int | None) -> None:
        y = self.cursor.y
        self.cursor.y = row
        for _ in range(min(count or 1, self.lines)):
            step()
        self.cursor.y = y

    def erase_in_display(self, how: int = 0, *args: object, **kwargs: object) -> None:
        # ED 3 erases the saved lines only; pyte would clear the screen. Scrollback is kept, as avt does.
        # Values beyond 3 are ignored, as terminals do (pyte fails on them).
        if how in (0, 1, 2):
            super().erase_in_display(how, *args, **kwargs)

    def resize(self, lines: int | None = None, columns: int | None = None) -> None:
        lines, columns = lines or self.lines, columns or self.columns
        if (lines, columns) == (self.lines, self.columns):
            return
        buffers = [(self.buffer, self.cursor, self.primary is None)]
        if self.primary is not None:
            buffers.append((*self.primary, True))
        for buffer, cursor, primary in buffers:
            self._fit_rows(buffer, cursor, lines, primary)
            if columns < self.columns:
                for line in buffer.values():
                    for x in [x for x in line if x >= columns]:
                        del line[x]
        self.tabstops = {x for x in self.tabstops if x < columns}
        self.tabstops.update(range((self.columns + 7) // 8 * 8, columns, 8))
        self.lines, self.columns = lines, columns
        self.margins = None
        self.ensure_hbounds()
        self.ensure_vbounds()
        self.dirty.update(range(lines))

    def _fit_rows(self, buffer: dict[int, Line], cursor: pyte.screens.Cursor, lines: int, primary: bool) -> None:
        """Fit a buffer to `lines` rows. Shrinking drops rows from the top only as far as needed to keep the
        cursor row (into the scrollback, for the primary screen); growing the primary screen brings rows back
        from the scrollback."""
        rows: list[Line | None] = [buffer.get(y) for y in range(self.lines)]
        if lines < self.lines:
            count = max(0, cursor.y - lines + 1)
            if primary:
                self.history.extend(row if row is not None else self.blank_line() for row in rows[:count])
            rows = rows[count : lines + count]
        else:
            count = -min(len(self.history), lines - self.lines) if primary else 0
            rows = [*reversed([self.history.pop() for _ in range(-count)]), *rows]
        buffer.clear()
        buffer.update((y, row) for y, row in enumerate(rows) if row is not None)
        cursor.y -= count

    def blank_line(self) -> Line:
        """A new empty row."""
        return StaticDefaultDict(self.default_char)

    # Drawing -----------------------------------------------------------------------------------------

    def draw(self, data: str) -> None:
        if self.charset or self.g0_charset is not LAT1_MAP:
            data = data.translate(self.g1_charset if self.charset else self.g0_charset)
        self._put(data)

    def repeat_last(self, count: int | None = None) -> None:
        """REP: print the last printed character `count` more times."""
        if self._last_char:
            self._put(self._last_char * (count or 1))

    def _put(self, data: str) -> None:
        if data.isascii() and data.isprintable() and mo.IRM not in self.mode:
            self._put_ascii(data)
        else:
            for char in data:
                self._put_char(char)

    def _put_ascii(self, data: str) -> None:
        """Fast path for printable ASCII: whole row segments at once, through the per-style cell cache."""
        cursor = self.cursor
        cells = self._cells(cursor.attrs)
        columns = self.columns
        i, n = 0, len(data)
        while i < n:
            if cursor.x >= columns:
                if mo.DECAWM in self.mode:
                    self.carriage_return()
                    self.linefeed()
                else:  # the rest overwrites the last column: only its last character stays
                    i, cursor.x = n - 1, columns - 1
            x = cursor.x
            take = min(n - i, columns - x)
            line = self.buffer[cursor.y]
            self._split_wide(line, x, x + take)
            line.update(zip(range(x, x + take), map(cells.__getitem__, data[i : i + take]), strict=True))
            cursor.x = x + take
            self.dirty.add(cursor.y)
            i += take
        self._last_char = data[-1]
        self._zwj = False

    def _put_char(self, char: str) -> None:
        width = char_width(char)
        if width < 0:  # a control character inside a text run: pyte would drop the rest of the run
            return
        if char == ZWJ:
            self._zwj = True
            return
        cursor = self.cursor
        line = self.buffer[cursor.y]
        if self._zwj and char > "\x7f":
            self._zwj = False
            self._combine(line, ZWJ)
            self._combine(line, char)
            return
        self._zwj = False
        if width == 0:
            self._combine(line, char)
            return
        if cursor.x + width > self.columns:
            if mo.DECAWM in self.mode:
                self.carriage_return()
                self.linefeed()
                line = self.buffer[cursor.y]
            else:
                cursor.x = self.columns - width
        if mo.IRM in self.mode:
            self.insert_characters(width)
        x = cursor.x
        self._split_wide(line, x, x + width)
        line[x] = cursor.attrs._replace(data=char)
        if width == 2:
            line[x + 1] = cursor.attrs._replace(data="")
        cursor.x = x + width
        self.dirty.add(cursor.y)
        self._last_char = char

    def _previous_cell(self, line: Line) -> tuple[int, Char]:
        """The cell left of the cursor (the left half if it is wide), as (column, cell); column -1 if none."""
        x = min(self.cursor.x, self.columns) - 1
        if x > 0 and line[x].data == "":
            x -= 1
        return x, line[x] if x >= 0 else self.default_char

    def _combine(self, line: Line, char: str) -> None:
        """Append a character to the cell left of the cursor (see text.py for the rules); at the left edge
        it is dropped."""
        x, cell = self._previous_cell(line)
        if x >= 0:
            line[x] = cell._replace(data=joined(cell.data, char))
            self.dirty.add(self.cursor.y)

    def _split_wide(self, line: Line, start: int, end: int) -> None:
        """Blank the other half of any wide character that writing columns [start, end) cuts in two."""
        if start > 0 and line[start].data == "":
            line[start - 1] = line[start - 1]._replace(data=" ")
        if end < self.columns and line[end].data == "":
            line[end] = line[end]._replace(data=" ")

    def _cells(self, attrs: Char) -> _Cells:
        cells = self._cells_by_attrs.get(attrs)
        if cells is None:
            if len(self._cells_by_attrs) > 256:
                self._cells_by_attrs.clear()
            cells = self._cells_by_attrs[attrs] = _Cells(attrs)
        return cells

    # SGR ---------------------------------------------------------------------------------------------

    def select_graphic_rendition(self, *params: int) -> None:
        fields = self.cursor.attrs._asdict()
        params = params or (0,)
        i = 0
        while i < len(params):
            param = params[i]
            i += 1
            if param == 0:
                fields = self.default_char._asdict()
            elif param in _SGR_FIELDS:
                name, value = _SGR_FIELDS[param]
                fields[name] = value
            elif param in (38, 48, 58):
                color, i = _extended_color(params, i)
                if color is not None and param != 58:
                    fields["fg" if param == 38 else "bg"] = color
        self.cursor.attrs = Char(**fields)


def _lenient(method: Callable[..., None]) -> Callable[..., None]:
    """A CSI handler that ignores what it cannot take, as terminals do: parameters beyond its own, and the
    `private` flag that pyte passes for `CSI ? ...` to handlers that mostly do not accept it (both raised
    TypeError, which ended pyte's parser)."""
    params = list(inspect.signature(method).parameters.values())[1:]
    varargs = any(p.kind is p.VAR_POSITIONAL for p in params)
    positional = sum(p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD) for p in params)
    keywords = {p.name for p in params if p.kind is not p.VAR_POSITIONAL}
    any_keyword = any(p.kind is p.VAR_KEYWORD for p in params)

    @functools.wraps(method)
    def handler(self: PyteScreen, *args: object, **kwargs: object) -> None:
        taken = {k: v for k, v in kwargs.items() if any_keyword or k in keywords}
        method(self, *(args if varargs else args[:positional]), **taken)

    return handler


CSI_HANDLERS = set(pyte.Stream.csi.values()) | {"repeat_last", "scroll_up", "scroll_down", "cursor_to_column"}
for _name in sorted(CSI_HANDLERS):
    setattr(PyteScreen, _name, _lenient(getattr(PyteScreen, _name)))
