"""A side scanner over raw PTY output: titles, cwd, shell marks, mode switches and terminal queries.

It is not an emulator: it looks only at the few sequences lookout acts on, and skips everything else at
C speed (a chunk without ESC costs one `bytes.find`). It keeps state across feeds, so a sequence split at
any byte gives the same events as the whole stream.

OSC strings end with BEL or ST (ESC \\). As in the VT500 parser, ESC, CAN or SUB inside an OSC string
abort it (the ESC then starts the next sequence), so an unterminated OSC never hides later sequences. A
payload longer than `MAX_OSC_PAYLOAD` bytes is dropped, and at most that much is ever carried between
feeds.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Literal
from urllib.parse import unquote_to_bytes

MAX_OSC_PAYLOAD = 4096
_MAX_CSI_PARAMS = 64  # longer CSI parameter strings are not ours, and are not carried between feeds

QueryKind = Literal["da1", "da2", "dsr", "cpr"]
Mode = Literal["alt_screen", "bracketed_paste", "app_cursor"]


@dataclass(frozen=True, slots=True)
class TitleChanged:
    """OSC 0 or OSC 2 set the window title."""

    end: int
    title: str


@dataclass(frozen=True, slots=True)
class CwdChanged:
    """OSC 7 (file://host/path) or OSC 633;P;Cwd=path reported the working directory; `nonce_at`: where the
    value of the mark's last parameter starts when it is a `nonce=` option (which a session with shell
    integration requires: the holder recorded where the genuine ones are)."""

    end: int
    path: str
    nonce_at: int | None = None


@dataclass(frozen=True, slots=True)
class ShellMark:
    """An OSC 133 (A-D) or OSC 633 (A-E, P) shell integration mark; `params` follow the code; `nonce_at`:
    where the value of its last parameter starts when that is a `nonce=` option."""

    end: int
    code: str
    params: tuple[str, ...]
    nonce_at: int | None = None


@dataclass(frozen=True, slots=True)
class ModeChanged:
    """DECSET (on) or DECRST (off) of a private mode lookout tracks."""

    end: int
    mode: Mode
    on: bool


@dataclass(frozen=True, slots=True)
class Query:
    """A terminal query the host must answer (see `query_reply`)."""

    end: int
    kind: QueryKind


ScanEvent = TitleChanged | CwdChanged | ShellMark | ModeChanged | Query
"""Every event has `end`: the offset in the fed chunk just past the sequence (offsets before the chunk, of a
sequence that began in an earlier one, are negative)."""

_OSC_TEXT = rb"[^\x07\x18\x1a\x1b]{0,%d}" % MAX_OSC_PAYLOAD
_CSI_PARAMS = rb"[0-9;]{0,%d}" % _MAX_CSI_PARAMS

# Complete sequences that produce events. The shared ESC prefix lets the regex engine skip to each ESC.
_SEQUENCE = re.compile(
    rb"\x1b(?:\](?P<osc>" + _OSC_TEXT + rb")(?:\x07|\x1b\\)"
    rb"|\[(?:\?(?P<modes>" + _CSI_PARAMS + rb")(?P<set>[hl])|(?P<da>>?)0?c|(?P<dsr>[56])n))"
)
# An unfinished sequence at the very end of a chunk that may still become one of the above.
_UNFINISHED = re.compile(rb"\x1b(?:\]" + _OSC_TEXT + rb"\x1b?|\[[?>]?" + _CSI_PARAMS + rb")?\Z")

_MODES: dict[int, Mode] = {
    1049: "alt_screen",
    1047: "alt_screen",
    47: "alt_screen",
    2004: "bracketed_paste",
    1: "app_cursor",
}
_SHELL_CODES = {b"133": frozenset(b"A B C D".split()), b"633": frozenset(b"A B C D E P".split())}
_VSCODE_ESCAPE = re.compile(rb"\\(?:\\|x([0-9a-fA-F]{2}))")
_CONTROLS = re.compile("[\x00-\x1f\x7f-\x9f]")

_REPLIES: dict[str, bytes] = {
    "da1": b"\x1b[?62;22c",  # VT220 with ANSI colour
    "da2": b"\x1b[>1;10;0c",
    "dsr": b"\x1b[0n",
}


class SideScanner:
    """Finds the sequences lookout acts on in a stream of PTY output chunks."""

    __slots__ = ("_carry",)

    def __init__(self) -> None:
        self._carry = b""  # an unfinished sequence from the end of the previous chunk

    def feed(self, data: bytes) -> list[ScanEvent]:
        """Scan the next chunk of output; return its events in stream order."""
        carry = self._carry
        if not carry:
            if b"\x1b" not in data:
                return []
            buf = data
        else:
            buf = carry + data
        shift = len(carry)
        events: list[ScanEvent] = []
        for match in _SEQUENCE.finditer(buf):
            _decode(match, shift, events)
        self._carry = _unfinished_tail(buf)
        return events


def query_reply(kind: str, cursor_row: int, cursor_col: int) -> bytes:
    """What an xterm-like VT220 answers to the query `kind`; the cursor position is 0-based."""
    if kind == "cpr":
        return f"\x1b[{cursor_row + 1};{cursor_col + 1}R".encode()
    try:
        return _REPLIES[kind]
    except KeyError:
        raise ValueError(f"unknown query kind {kind!r}") from None


def _unfinished_tail(buf: bytes) -> bytes:
    last = buf.rfind(b"\x1b")
    if last < 0:
        return b""
    start = last
    if last == len(buf) - 1:  # a lone ESC at the end may begin the ST of an OSC that started earlier
        earlier = buf.rfind(b"\x1b", 0, last)
        start = last if earlier < 0 else earlier
    match = _UNFINISHED.search(buf, start)
    return buf[match.start() :] if match else b""


def _decode(match: re.Match[bytes], shift: int, events: list[ScanEvent]) -> None:
    kind = match.lastgroup
    end = match.end() - shift
    if kind == "osc":
        _decode_osc(match["osc"], match.start("osc") - shift, end, events)
    elif kind == "set":
        on = match["set"] == b"h"
        modes = (_MODES.get(int(param)) for param in match["modes"].split(b";") if param)
        events.extend(ModeChanged(end, mode, on) for mode in modes if mode)
    elif kind == "da":
        events.append(Query(end, "da2" if match["da"] else "da1"))
    else:
        events.append(Query(end, "dsr" if match["dsr"] == b"5" else "cpr"))


def _decode_osc(payload: bytes, start: int, end: int, events: list[ScanEvent]) -> None:
    """`payload` (what is between OSC and its terminator) begins at offset `start` and the sequence ends at
    `end`."""
    command, sep, rest = payload.partition(b";")
    if not sep:
        return
    if command in (b"0", b"2"):
        events.append(TitleChanged(end, _clean(rest)))
    elif command == b"7":
        if rest.startswith(b"file://"):
            slash = rest.find(b"/", 7)
            if slash >= 0:
                _add_cwd(unquote_to_bytes(rest[slash:]), end, events)
    elif command in _SHELL_CODES:
        code, *params = rest.split(b";")
        if code not in _SHELL_CODES[command]:
            return
        last = payload.rfind(b";") + 1
        nonce_at = start + last + 6 if params and payload.startswith(b"nonce=", last) else None
        if command == b"633":
            params = [_VSCODE_ESCAPE.sub(_unescape, p) for p in params]
        events.append(ShellMark(end, code.decode(), tuple(p.decode("utf-8", "replace") for p in params), nonce_at))
        if code == b"P" and params and params[0].startswith(b"Cwd="):
            _add_cwd(params[0][4:], end, events, nonce_at if len(params) > 1 else None)


def _add_cwd(path: bytes, end: int, events: list[ScanEvent], nonce_at: int | None = None) -> None:
    cleaned = _clean(path)
    if cleaned:
        events.append(CwdChanged(end, cleaned, nonce_at))


def _clean(raw: bytes) -> str:
    return _CONTROLS.sub("", raw.decode("utf-8", "replace"))


def _unescape(match: re.Match[bytes]) -> bytes:
    return bytes([int(match[1], 16)]) if match[1] else b"\\"
