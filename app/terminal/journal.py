"""Reading a terminal's journal (`output.raw`, `output.idx`): its writer and its format are the holder's
(app.terminal.holder.journal)."""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import orjson

from app.core.private_files import open_file, read_bytes
from app.core.storage import dumps, iter_jsonl


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
    """The complete index records of one kind (only those lines are parsed)."""
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
        if isinstance(rec, list) and len(rec) == 4 and rec[1] == kind:
            entries.append(IndexEntry(*rec))
    return entries


def read_index(directory: Path) -> list[IndexEntry]:
    """Every complete index record (a torn last line is skipped)."""
    entries = []
    for rec in iter_jsonl(directory / "output.idx"):
        if isinstance(rec, list) and len(rec) == 4:
            entries.append(IndexEntry(*rec))
    return entries
