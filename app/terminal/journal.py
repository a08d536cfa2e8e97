"""Reading a terminal's journal (`output.raw`, `output.idx`): its writer and its format are the holder's
(app.terminal.holder.journal).

Every index record is checked where it is read: a line that is not JSON is a torn write and is skipped, as
the format says; a record of a known kind whose time, offset or value its holder never writes (a resize
to 0x0 or 65535x65535, a negative offset, a count that is not one) means the journal was damaged or written
by something else, and whatever depends on it (a past screen, a recording, an adoption) is refused with
DamagedJournal, never built from it.
"""

from __future__ import annotations

import math
import os
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import orjson

from app.core.errors import Gone
from app.core.private_files import open_file, read_bytes
from app.core.storage import dumps, iter_jsonl
from app.terminal.holder.sizes import parse_size


class DamagedJournal(Gone):
    """output.idx holds a record its holder never writes: what depends on it cannot be rebuilt (410)."""


@dataclass(frozen=True, slots=True)
class IndexEntry:
    t: float
    kind: str
    offset: int
    value: Any

    @property
    def size(self) -> tuple[int, int]:
        """A resize record's (cols, rows) (checked when it was read)."""
        size = parse_size(self.value)
        assert size is not None
        return size


_BASE64 = re.compile(r"(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?")


def _is_count(value: object) -> bool:
    return type(value) is int and value >= 0


_VALUES = {
    "o": _is_count,
    "r": lambda value: parse_size(value) is not None,
    "x": lambda value: type(value) is int,
    "i": lambda value: value is None or (isinstance(value, str) and _BASE64.fullmatch(value) is not None),
    "m": lambda value: isinstance(value, str),
    "n": lambda value: value is None,
}
"""What the value of each kind of record the holder writes may be (app.terminal.holder.journal)."""


def _entry(record: object) -> IndexEntry | None:
    """The record as an entry; None for what is not a record (a torn line); DamagedJournal for a record that
    its holder never writes."""
    if not isinstance(record, list) or len(record) != 4:
        return None
    t, kind, offset, value = record
    if not isinstance(kind, str):
        return None
    valid = _VALUES.get(kind, lambda _: True)
    if type(t) not in (int, float) or not math.isfinite(t) or t < 0 or not _is_count(offset) or not valid(value):
        shown = orjson.dumps(record)[:120].decode(errors="replace")
        raise DamagedJournal(f"the journal's index (output.idx) holds a record its holder never writes: {shown}")
    return IndexEntry(float(t), kind, offset, value)


def raw_size(directory: Path) -> int:
    try:
        return (directory / "output.raw").lstat().st_size  # a link is refused when read, never followed
    except FileNotFoundError:
        return 0


def read_raw(directory: Path, offset: int, limit: int) -> bytes:
    """Up to `limit` bytes of `output.raw` from `offset`."""
    try:
        fd = open_file(directory / "output.raw", os.O_RDONLY)
    except FileNotFoundError:
        return b""
    try:
        return os.pread(fd, limit, offset)
    finally:
        os.close(fd)


def read_kind(directory: Path, kind: str) -> list[IndexEntry]:
    """The complete index records of one kind (only those lines are parsed, and checked)."""
    marker = dumps(kind)
    try:
        data = read_bytes(directory / "output.idx")
    except FileNotFoundError:
        return []
    entries = []
    for line in data.split(b"\n"):
        if marker not in line:
            continue
        try:
            rec = orjson.loads(line)
        except orjson.JSONDecodeError:
            continue
        if isinstance(rec, list) and len(rec) == 4 and rec[1] == kind and (entry := _entry(rec)) is not None:
            entries.append(entry)
    return entries


def read_index(directory: Path) -> list[IndexEntry]:
    """Every complete index record (a torn last line is skipped)."""
    return [entry for rec in iter_jsonl(directory / "output.idx") if (entry := _entry(rec)) is not None]
