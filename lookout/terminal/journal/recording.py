"""Recordings in asciicast format, derived from the journal (which stays the lossless store).

asciicast v3 (the default): a header line, then `[interval, code, data]` events with the interval relative
to the previous event: `o` output, `i` input, `r` resize ("COLSxROWS"), `m` marker (a command block
started or ended), `x` exit status. asciicast v2
(`version=2`, what the asciinema 2.x player reads): absolute times, and no exit event.
Input that was typed at a password prompt was never stored, so it is not in the recording either.
"""

from __future__ import annotations

import base64
import codecs
import json
from collections.abc import Iterator
from pathlib import Path

from lookout.core.errors import Gone
from lookout.terminal.journal.persistence import TerminalMeta
from lookout.terminal.journal.reader import IndexEntry, raw_size, read_index, read_raw, resize_of, stored_from

_CHUNK = 1 << 20
TERM = "xterm-256color"


def asciicast(directory: Path, meta: TerminalMeta, version: int = 3) -> Iterator[str]:
    """The recording as lines of text (each ending in a newline), read from the journal as they are taken.
    Gone, before any line, when it cannot be made whole: the journal is a range whose start is not stored
    (from a replay archive), or its index records a resize no terminal can have."""
    first = stored_from(directory)
    if first:
        raise Gone(f"the output before offset {first} is not stored here (this journal is a range from an archive): "
                   "no recording can be made of it")  # fmt: skip
    entries = [e for e in read_index(directory) if type(e.offset) is int and (e.kind != "o" or type(e.value) is int)]
    for entry in entries:
        if entry.kind == "r":
            resize_of(entry)
    return _lines(directory, meta, entries, version)


def _lines(directory: Path, meta: TerminalMeta, entries: list[IndexEntry], version: int) -> Iterator[str]:
    initial = next((e for e in entries if e.kind == "r"), None)
    cols, rows = resize_of(initial) if initial else (meta.cols, meta.rows)
    yield _header(meta, cols, rows, version) + "\n"
    last = 0.0
    for t, code, data in _events(directory, [e for e in entries if e is not initial]):
        if version == 2 and code == "x":
            continue
        stamp = round(t - last, 6) if version == 3 else round(t, 6)
        last = t
        yield json.dumps([stamp, code, data], ensure_ascii=False) + "\n"


def _header(meta: TerminalMeta, cols: int, rows: int, version: int) -> str:
    if version == 2:
        head = {"version": 2, "width": cols, "height": rows, "env": {"TERM": TERM}}
    else:
        head = {"version": 3, "term": {"cols": cols, "rows": rows, "type": TERM}}
    head.update(timestamp=int(meta.created_at), title=meta.name, command=meta.command)
    return json.dumps(head, ensure_ascii=False)


def _events(directory: Path, entries: list[IndexEntry]) -> Iterator[tuple[float, str, str]]:
    decoder = codecs.getincrementaldecoder("utf-8")(errors="replace")
    stored = 0
    t = 0.0
    for entry in entries:
        t = entry.t
        if entry.kind == "o":
            yield from _output(directory, decoder, t, entry.offset, entry.offset + entry.value)
            stored = max(stored, entry.offset + entry.value)
        elif entry.kind == "i" and entry.value is not None:
            yield t, "i", base64.b64decode(entry.value).decode("utf-8", "replace")
        elif entry.kind in ("r", "m"):
            yield t, entry.kind, entry.value
        elif entry.kind == "x":
            yield t, "x", str(entry.value)
    yield from _output(directory, decoder, t, stored, raw_size(directory))  # output the index missed


def _output(
    directory: Path, decoder: codecs.IncrementalDecoder, t: float, start: int, end: int
) -> Iterator[tuple[float, str, str]]:
    pos = start
    while pos < end:
        data = read_raw(directory, pos, min(_CHUNK, end - pos))
        if not data:
            return
        pos += len(data)
        text = decoder.decode(data)
        if text:
            yield t, "o", text
