"""Where a stream of terminal output can be cut so that a screen engine's state there is all of its state: a
checkpoint (an engine's dump, lookout.terminal.screen.replay) is only as good as its offset, and a dump holds the screen,
not a parser in the middle of `ESC[21;42` or of a UTF-8 character.

The grammar is the VT500 parser's (ECMA-48), as both engines follow it: ESC, intermediates (0x20-0x2F) and a
final byte; CSI (`ESC [`, or C1 0x9B) with parameters and intermediates up to a final byte (0x40-0x7E); the
strings OSC (`ESC ]`), DCS (`ESC P`), SOS, PM and APC, ended by ST (`ESC \\` or C1 0x9C) or, for OSC, by
BEL. CAN and SUB abort any sequence, and an ESC inside one starts the next. C1 controls arrive as UTF-8
(U+0080-U+009F: `C2 80` to `C2 9F`). A C0 control inside an escape or control sequence is carried out at
once (a line feed moves the cursor), so no cut before such a sequence can be replayed.

Scanning skips from one sequence to the next with `bytes.find` (plain text costs nothing), and an ESC is a
point where every parser agrees (it starts a sequence whatever came before; only an ESC that is the last
byte may be the first half of the ST of a string that began earlier), so only the stream after the last ESC
before the end needs looking at. It is looked for backwards, TAIL_BYTES at a time, back to the last good
cut at most: what a cut costs to find is the output since the last ESC or the last cut, whichever is
nearer, never more (a checkpoint tried again after more output reads no more than the first try).
"""

from __future__ import annotations

from collections.abc import Callable

TAIL_BYTES = 16 << 10
MAX_SEQUENCES = 4096
"""Sequences scanned at most for one cut (the stream back to the last good cut, when the tail holds no ESC);
past that, the cut is left undecided."""

_ESC, _BEL, _CAN, _SUB, _C1_LEAD = 0x1B, 0x07, 0x18, 0x1A, 0xC2
_STRING_FINALS = frozenset(b"]PX^_")  # OSC, DCS, SOS, PM, APC after ESC
_C1_STRINGS = frozenset({0x9D, 0x90, 0x98, 0x9E, 0x9F})
_C1_CSI, _C1_ST, _C1_OSC = 0x9B, 0x9C, 0x9D


class _Unfinished(Exception):
    """The stream ends inside a sequence that began at `start`; `acted`: a control inside it was carried out."""

    def __init__(self, start: int, acted: bool) -> None:
        self.start, self.acted = start, acted


def _next_introducer(data: bytes, i: int) -> int:
    """The position of the next ESC or UTF-8 C1 control at or after `i`, or len(data)."""
    esc = data.find(b"\x1b", i)
    limit = esc if esc >= 0 else len(data)
    c1 = data.find(b"\xc2", i, limit)
    while c1 >= 0:
        if c1 + 1 == len(data) or 0x80 <= data[c1 + 1] < 0xA0:  # at the end: a C1 control or a character
            return c1
        c1 = data.find(b"\xc2", c1 + 1, limit)
    return limit


def _control_sequence(data: bytes, start: int, i: int) -> int:
    """The end of a CSI whose parameters begin at `i`."""
    acted = False
    while i < len(data):
        byte = data[i]
        if 0x40 <= byte <= 0x7E or byte in (_CAN, _SUB):
            return i + 1
        if byte == _ESC or byte >= 0x80:
            return i  # ESC starts the next sequence; a character ends this one
        acted = acted or (byte < 0x20)
        i += 1
    raise _Unfinished(start, acted)


def _string(data: bytes, start: int, i: int, osc: bool) -> int:
    """The end of a string sequence (OSC, DCS, SOS, PM, APC) whose content begins at `i`."""
    ends = [e + 1 for needle in ((b"\x07",) if osc else ()) + (b"\x18", b"\x1a") if (e := data.find(needle, i)) >= 0]
    if (st := data.find(b"\xc2\x9c", i)) >= 0:
        ends.append(st + 2)
    esc = data.find(b"\x1b", i)
    if esc >= 0 and (not ends or esc < min(ends)):
        if esc + 1 == len(data):
            raise _Unfinished(start, False)  # the ST may be on its way
        return esc + 2 if data[esc + 1] == ord("\\") else esc  # ST, or an ESC that aborts the string
    if not ends:
        raise _Unfinished(start, False)
    return min(ends)


def _escape_sequence(data: bytes, start: int) -> int:
    """The end of the sequence that begins with the ESC at `start`."""
    i = start + 1
    acted = False
    while i < len(data):
        byte = data[i]
        if i == start + 1 and byte == ord("["):
            return _control_sequence(data, start, i + 1)
        if i == start + 1 and byte in _STRING_FINALS:
            return _string(data, start, i + 1, osc=byte == ord("]"))
        if 0x20 <= byte <= 0x2F:
            i += 1
            continue
        if byte in (_CAN, _SUB):
            return i + 1
        if byte == _ESC or byte >= 0x80:
            return i
        if byte >= 0x30:
            return i + 1
        acted = True  # a C0 control, carried out inside the sequence
        i += 1
    raise _Unfinished(start, acted)


def _sequence(data: bytes, start: int) -> int:
    if data[start] == _ESC:
        return _escape_sequence(data, start)
    if start + 1 == len(data):
        raise _Unfinished(start, False)  # C2 at the end: a C1 control or a character, not known yet
    kind = data[start + 1]
    if kind == _C1_CSI:
        return _control_sequence(data, start, start + 2)
    if kind in _C1_STRINGS:
        return _string(data, start, start + 2, osc=kind == _C1_OSC)
    return start + 2


def _partial_utf8(data: bytes) -> int:
    """How many bytes at the end of `data` begin a UTF-8 character that is not complete."""
    for back in range(1, min(4, len(data)) + 1):
        byte = data[-back]
        if byte & 0xC0 != 0x80:  # a lead byte, or ASCII
            need = 2 if byte & 0xE0 == 0xC0 else 3 if byte & 0xF0 == 0xE0 else 4 if byte & 0xF8 == 0xF0 else 1
            return back if need > back else 0
    return 0


def cut_before(read: Callable[[int, int], bytes], end: int, good: int) -> int | None:
    """The journal offset to record for an engine's state after the first `end` bytes of output (`read(offset,
    size)` reads the journal), given `good`, an earlier offset where the stream is known to be cut cleanly (0,
    or the last checkpoint's): `end` when the stream is between sequences and characters there, else where the
    unfinished sequence or character begins (the screen shows nothing of it yet, so the state there is the
    same, and a replay from there feeds it whole). None when it cannot be told (too many sequences to scan,
    or a control carried out inside an unfinished sequence): take the checkpoint later."""
    stop = max(good, end - 1)  # an ESC that is the last byte may end a string: not a point to start from
    after = [read(stop, end - stop)]  # what follows `stop`, last part first
    while stop > good:
        base = max(good, stop - TAIL_BYTES)
        chunk = read(base, stop - base)
        sync = chunk.rfind(b"\x1b")  # every parser starts a sequence there, whatever came before
        if sync >= 0:
            return _cut(b"".join([chunk[sync:], *reversed(after)]), base + sync, 0)
        after.append(chunk)
        stop = base
    return _cut(b"".join(reversed(after)), good, 0)  # no ESC since the last good cut: from there


def _cut(data: bytes, base: int, i: int) -> int | None:
    """`cut_before` of `data` (from journal offset `base`), scanned from index `i`, where the parser is known
    to be at rest or to start a sequence."""
    end = base + len(data)
    try:
        for _ in range(MAX_SEQUENCES):
            i = _next_introducer(data, i)
            if i >= len(data):
                return end - _partial_utf8(data)
            i = _sequence(data, i)
        return None
    except _Unfinished as unfinished:
        return None if unfinished.acted else base + unfinished.start
