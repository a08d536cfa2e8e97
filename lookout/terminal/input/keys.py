"""tmux-style key names turned into the bytes a terminal sends, and bracketed paste.

Key names:
- Named keys: Enter, Tab, BTab (back tab), Escape, BSpace, Space, Up, Down, Left, Right, Home, End,
  Insert (IC), Delete (DC), PageUp (PPage, PgUp), PageDown (NPage, PgDn), F1-F12. These are matched
  case-insensitively ("enter", "ENTER" and "pageup" work), since no single character collides with them.
- Any single printable character stands for itself ("a", "/", "é") and is case-sensitive.
- Modifier prefixes are case-sensitive, as written by tmux: ``C-`` (Ctrl), ``M-`` or ``A-`` (Meta/Alt),
  ``S-`` (Shift); they combine ("C-M-a", "C-S-Up").
- Ctrl applies to ASCII letters (either case gives 0x01-0x1a), ``@`` and Space (0x00), ``[ \\ ] ^ _``
  (0x1b-0x1f) and ``?`` (0x7f).
- Cursor, editing and function keys take modifiers in xterm style: C-Up is ESC[1;5A, S-F5 is ESC[15;2~,
  M-Up is ESC[1;3A. Unmodified arrows and Home/End use SS3 (ESC O A) in application cursor mode.
- On any other key Meta sends ESC before the key (M-x, M-Enter, M-C-a). Shift is only valid there as
  S-Tab, which is BTab.
"""

from __future__ import annotations

import re

_CTRL, _META, _SHIFT = 4, 2, 1  # xterm modifier bits: the CSI parameter is 1 + their sum
_MODIFIERS = {"C": _CTRL, "M": _META, "A": _META, "S": _SHIFT}

_PLAIN = {
    "Enter": b"\r",
    "Tab": b"\t",
    "BTab": b"\x1b[Z",
    "Escape": b"\x1b",
    "BSpace": b"\x7f",
    "Space": b" ",
}

# Keys that take xterm modifier parameters: name -> (CSI parameter, final character).
_CSI_KEYS = {
    "Up": ("1", "A"),
    "Down": ("1", "B"),
    "Right": ("1", "C"),
    "Left": ("1", "D"),
    "Home": ("1", "H"),
    "End": ("1", "F"),
    "Insert": ("2", "~"),
    "Delete": ("3", "~"),
    "PageUp": ("5", "~"),
    "PageDown": ("6", "~"),
    "F1": ("1", "P"),
    "F2": ("1", "Q"),
    "F3": ("1", "R"),
    "F4": ("1", "S"),
    "F5": ("15", "~"),
    "F6": ("17", "~"),
    "F7": ("18", "~"),
    "F8": ("19", "~"),
    "F9": ("20", "~"),
    "F10": ("21", "~"),
    "F11": ("23", "~"),
    "F12": ("24", "~"),
}
_APP_CURSOR_KEYS = frozenset({"Up", "Down", "Right", "Left", "Home", "End"})
_SS3_KEYS = frozenset({"F1", "F2", "F3", "F4"})

_ALIASES = {
    "IC": "Insert",
    "DC": "Delete",
    "PPage": "PageUp",
    "PgUp": "PageUp",
    "NPage": "PageDown",
    "PgDn": "PageDown",
}
_CANONICAL = {name.lower(): name for name in (*_PLAIN, *_CSI_KEYS)} | {
    alias.lower(): name for alias, name in _ALIASES.items()
}

_CTRL_SYMBOLS = {"@": 0x00, "Space": 0x00, "[": 0x1B, "\\": 0x1C, "]": 0x1D, "^": 0x1E, "_": 0x1F, "?": 0x7F}

_VALID = (
    "Enter",
    "Tab",
    "BTab",
    "Escape",
    "BSpace",
    "Space",
    "Up",
    "Down",
    "Left",
    "Right",
    "Home",
    "End",
    "Insert (IC)",
    "Delete (DC)",
    "PageUp (PPage, PgUp)",
    "PageDown (NPage, PgDn)",
    "F1-F12",
    "C-a..C-z",
    "C-@",
    "C-Space",
    "C-[",
    "C-\\",
    "C-]",
    "C-^",
    "C-_",
    "C-?",
    "S-Tab",
    "M-<key>",
    "A-<key>",
    "C-/S-/M-<arrow, Home, End, Insert, Delete, PageUp, PageDown or F-key>",
    "<any single printable character>",
)

_PASTE_MARKER = re.compile("\x1b\\[20[01]~")


class UnknownKeyError(ValueError):
    """A key name that `encode_keys` does not know; the message lists the valid names."""

    def __init__(self, name: str, valid: list[str]) -> None:
        super().__init__(f"unknown key {name!r}; valid keys: {', '.join(valid)}")
        self.name = name
        self.valid = valid


def valid_key_names() -> list[str]:
    """The valid key names and name patterns, for error messages."""
    return list(_VALID)


def encode_keys(names: list[str], app_cursor: bool = False) -> bytes:
    """The bytes a terminal sends for `names` typed in order; `app_cursor` is DECCKM (ESC[?1h)."""
    out = bytearray()
    for name in names:
        encoded = _encode(name, app_cursor)
        if encoded is None:
            raise UnknownKeyError(name, valid_key_names())
        out += encoded
    return bytes(out)


class NotText(ValueError):
    """Input with a lone surrogate (U+D800-U+DFFF outside a pair), which JSON can carry but is no character."""


def encode_text(text: str) -> bytes:
    """UTF-8, with the surrogate escapes of undecodable bytes (WebSocket binary input) turned back into
    those bytes; any other lone surrogate is NotText."""
    try:
        return text.encode("utf-8", "surrogateescape")
    except UnicodeEncodeError as exc:
        raise NotText(
            f"U+{ord(text[exc.start]):04X} at position {exc.start} is a lone surrogate, not a character"
        ) from exc


def bracketed_paste(text: str, enabled: bool) -> bytes:
    """`text` as a terminal pastes it, wrapped in ESC[200~ ... ESC[201~ when `enabled`.

    Paste markers inside the text are removed (repeatedly, so removing one cannot form another) and
    line ends become CR, as xterm sends them (a CRLF pair becomes one CR).
    """
    count = 1
    while count:
        text, count = _PASTE_MARKER.subn("", text)
    body = encode_text(text.replace("\r\n", "\r").replace("\n", "\r"))
    return b"\x1b[200~" + body + b"\x1b[201~" if enabled else body


def _encode(name: str, app_cursor: bool) -> bytes | None:
    mods = 0
    while len(name) > 2 and name[1] == "-" and name[0] in _MODIFIERS:
        mods |= _MODIFIERS[name[0]]
        name = name[2:]
    if len(name) > 1:
        name = _CANONICAL.get(name.lower(), name)
    if name in _CSI_KEYS:
        return _csi_key(name, mods, app_cursor)
    if mods & _SHIFT:
        if name != "Tab":
            return None
        name = "BTab"
    if mods & _CTRL:
        key = _ctrl_key(name)
    elif name in _PLAIN:
        key = _PLAIN[name]
    else:
        key = name.encode() if len(name) == 1 and name.isprintable() else None
    if key is None or not mods & _META:
        return key
    return b"\x1b" + key


def _ctrl_key(name: str) -> bytes | None:
    if len(name) == 1 and name.isascii() and name.isalpha():
        return bytes([ord(name.upper()) - 0x40])
    code = _CTRL_SYMBOLS.get(name)
    return None if code is None else bytes([code])


def _csi_key(name: str, mods: int, app_cursor: bool) -> bytes:
    param, final = _CSI_KEYS[name]
    if mods:
        return f"\x1b[{param};{mods + 1}{final}".encode()
    if name in _SS3_KEYS or (app_cursor and name in _APP_CURSOR_KEYS):
        return f"\x1bO{final}".encode()
    return f"\x1b[{param}~".encode() if final == "~" else f"\x1b[{final}".encode()
