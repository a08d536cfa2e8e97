"""Reading a terminal's journal (`output.raw`, `output.idx`): its writer and its format are the holder's
(lookout.terminal.holder.journal)."""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import orjson

from lookout.core.archive import RANGE_SUFFIX
from lookout.core.errors import Gone
from lookout.core.private_files import open_file, read_bytes
from lookout.core.storage import dumps, iter_jsonl, line_blocks
from lookout.terminal.holder.sizes import parse_size


@dataclass(frozen=True, slots=True)
class IndexEntry:
    t: float
    kind: str
    offset: int
    value: Any


def raw_size(directory: Path) -> int:
    try:
        return (directory / "output.raw").lstat().st_size  # a link is refused when read, never followed
    except FileNotFoundError:
        return 0


def read_raw(directory: Path, offset: int, limit: int, stored_from: int = 0) -> bytes:
    """Up to `limit` bytes of `output.raw` from `offset`; Gone for output before `stored_from` (see
    `stored_from`: the journal is a range from an archive)."""
    if offset < stored_from:
        raise Gone(f"the output before offset {stored_from} of terminal {directory.name} is not stored here (its "
                   "journal is a range from an archive)")  # fmt: skip
    try:
        fd = open_file(directory / "output.raw", os.O_RDONLY)
    except FileNotFoundError:
        return b""
    try:
        return os.pread(fd, limit, offset)
    finally:
        os.close(fd)


_PROBE_BYTES = 64 << 10
"""What `index_position` reads at each step of its search; it stops within that of the position it seeks."""


def index_position(fd: int, offset: int) -> int:
    """A line start in the open output.idx `fd` from which every record at journal offset `offset` or later is
    read: the index is read from there instead of from its start, so taking a terminal up from `offset` costs
    the index's tail, not its whole history. The holder writes records in the order their events happened,
    each at the journal's size then, an output record once its bytes are written (later output may be merged
    into it, which moves its end), and an `n` record just before the output it points into; so a record that
    ends at or before `offset` (an output record's bytes, another record's offset below it) comes before every
    record at `offset` or later. The search finds such a record at most _PROBE_BYTES (and a line) before the
    last one; where it finds none it reads from the start (0)."""
    start, lo, hi = 0, 0, os.fstat(fd).st_size
    while offset > 0 and hi - lo > _PROBE_BYTES:
        mid = (lo + hi) // 2
        found = _record_after(fd, mid)
        if found is None or found[1] > offset:
            hi = mid
        else:
            start = lo = found[0]
    return start


def _record_after(fd: int, pos: int) -> tuple[int, int] | None:
    """(where its line starts, where it ends) of the first whole record after `pos` that is not an `n` one,
    within _PROBE_BYTES: an output record ends where its bytes do, another one just past its offset. None when
    there is none (damaged lines, the index's end)."""
    block = os.pread(fd, _PROBE_BYTES, pos)
    first = block.find(b"\n") + 1
    while 0 < first < len(block):
        end = block.find(b"\n", first)
        if end < 0:
            return None
        try:
            rec = orjson.loads(block[first:end])
        except orjson.JSONDecodeError:
            rec = None
        if isinstance(rec, list) and len(rec) == 4 and rec[1] != "n" and _placed(rec):
            output = rec[1] == "o" and type(rec[3]) is int and rec[3] >= 0
            return pos + first, rec[2] + (rec[3] if output else 1)
        first = end + 1
    return None


def read_kind(directory: Path, kind: str, since: int = 0) -> list[IndexEntry]:
    """The complete index records of one kind (only those lines are parsed; the index is read in chunks); with
    `since`, at least those at journal offset `since` or later (the index is read from `index_position`)."""
    marker = dumps(kind)
    entries = []
    start = 0
    if since > 0:
        try:
            fd = open_file(directory / "output.idx", os.O_RDONLY)
        except FileNotFoundError:
            return []
        try:
            start = index_position(fd, since)
        finally:
            os.close(fd)
    for line in (line for lines in line_blocks(directory / "output.idx", start) for line in lines
                 if line and marker in line):  # fmt: skip
        try:
            rec = orjson.loads(line)
        except orjson.JSONDecodeError:
            continue
        if isinstance(rec, list) and len(rec) == 4 and rec[1] == kind and _placed(rec):
            entries.append(IndexEntry(*rec))
    return entries


def _placed(rec: list[Any]) -> bool:
    """Whether a record's time is a number and its offset an integer (a forged index may hold anything)."""
    return type(rec[0]) in (int, float) and type(rec[2]) is int


def resize_of(entry: IndexEntry) -> tuple[int, int]:
    """The size a resize record gives; Gone when no terminal can have it (a damaged or forged index): no screen
    can be replayed through it."""
    try:
        return parse_size(entry.value)
    except ValueError as exc:
        raise Gone(f"output.idx records a resize at offset {entry.offset} that cannot be replayed: {exc}") from None


def indexed_size(directory: Path) -> int:
    """The size of the journal as its index tells it: the end of its last output record (or the offset of
    any later record)."""
    size = 0
    for rec in iter_jsonl(directory / "output.idx"):
        if isinstance(rec, list) and len(rec) == 4 and _placed(rec):
            size = max(size, rec[2] + (rec[3] if rec[1] == "o" and type(rec[3]) is int else 0))
    return size


def stored_from(directory: Path) -> int:
    """Where the stored bytes of `output.raw` start: 0, or for a journal range unpacked from a replay archive
    (lookout.core.archive) the offset its marker gives; the bytes before it are a hole, not output."""
    try:
        text = read_bytes(directory / f"output.raw{RANGE_SUFFIX}", 32)
    except FileNotFoundError:
        return 0
    except (OSError, ValueError):
        text = b""
    return int(text) if text.isdigit() else raw_size(directory)  # an unreadable marker: nothing is trusted


def read_index(directory: Path) -> list[IndexEntry]:
    """Every complete index record (a torn last line is skipped)."""
    entries = []
    for rec in iter_jsonl(directory / "output.idx"):
        if isinstance(rec, list) and len(rec) == 4:
            entries.append(IndexEntry(*rec))
    return entries
