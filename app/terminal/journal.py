"""The lossless journal of a terminal: `output.raw` (every byte the program wrote) and `output.idx`.

The terminal's holder (app.terminal.holder) is the only writer. Flush policy: each chunk read from the PTY
is written to `output.raw` before anything else sees it, so every byte read survives a crash of the daemon
and of the holder (it is in the kernel's page cache). Index records are buffered and written at most every `INDEX_FLUSH_S` seconds and at every
non-output event; a crash can lose the timing of the last fraction of a second of output, never the bytes.

Each index line is a JSON array `[t, kind, offset, value]`: `t` seconds since the session started, `kind`
one of "o" (output; value = byte count), "i" (input; value = base64 of the bytes, or null when redacted),
"r" (resize; value = "COLSxROWS"), "m" (marker; value = label), "x" (exit; value = exit code), "n" (a
genuine shell mark's masked nonce starts at `offset`; value null; written before the bytes it names), and
`offset` the size of `output.raw` when the event happened.
"""

from __future__ import annotations

import base64
import logging
import os
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import orjson

from app.core.archive import RANGE_SUFFIX
from app.core.errors import Gone
from app.core.private_files import open_file, read_bytes
from app.core.storage import dumps, iter_jsonl, line_blocks
from app.terminal.sizes import parse_size

log = logging.getLogger(__name__)

INDEX_FLUSH_S = 0.25
_MERGE_OUTPUT_S = 0.005


@dataclass(frozen=True, slots=True)
class IndexEntry:
    t: float
    kind: str
    offset: int
    value: Any


class JournalWriter:
    """Appends output and events for a live session."""

    def __init__(self, directory: Path, max_bytes: int, started_at: float | None = None) -> None:
        self.raw_path = directory / "output.raw"
        self.idx_path = directory / "output.idx"
        self._raw_fd = open_file(self.raw_path, os.O_WRONLY | os.O_CREAT | os.O_APPEND)
        try:
            self._idx_fd = open_file(self.idx_path, os.O_WRONLY | os.O_CREAT | os.O_APPEND)
        except OSError:
            os.close(self._raw_fd)
            raise
        self.size = os.fstat(self._raw_fd).st_size
        self.dropped = 0
        self.failure: str | None = None
        """Why a write failed (a full disk...): the journal then has holes, counted in `dropped`."""
        self._max_bytes = max_bytes
        self._t0 = started_at if started_at is not None else time.monotonic()
        self._pending: list[list[Any]] = []
        self._last_flush = time.monotonic()

    def elapsed(self) -> float:
        return round(time.monotonic() - self._t0, 4)

    def write_output(self, data: bytes, genuine: list[int] | tuple[int, ...] = ()) -> int:
        """Store `data`; returns how many bytes were stored (fewer once the size limit is reached, or when
        the disk refuses them: never an exception, the session goes on without them). `genuine`: where in
        `data` the shell integration's (masked) nonce starts, recorded before the bytes are written."""
        if genuine:
            for pos in genuine:
                self._pending.append([self.elapsed(), "n", self.size + pos, None])
            self.flush()
        room = self._max_bytes - self.size
        stored = data if len(data) <= room else data[: max(room, 0)]
        if stored:
            view = memoryview(stored)
            try:
                while view:
                    view = view[os.write(self._raw_fd, view) :]
            except OSError as exc:
                self._failed("output.raw", exc)
                stored = stored[: len(stored) - len(view)]
        self.dropped += len(data) - len(stored)
        if stored:
            offset = self.size
            self.size += len(stored)
            t = self.elapsed()
            last = self._pending[-1] if self._pending else None
            if last and last[1] == "o" and t - last[0] < _MERGE_OUTPUT_S and last[2] + last[3] == offset:
                last[3] += len(stored)
            else:
                self._pending.append([t, "o", offset, len(stored)])
        self.flush_if_due()
        return len(stored)

    def flush_if_due(self) -> None:
        if self._pending and time.monotonic() - self._last_flush >= INDEX_FLUSH_S:
            self.flush()

    def record(self, kind: str, value: Any) -> None:
        """Record a non-output event and flush the index."""
        self._pending.append([self.elapsed(), kind, self.size, value])
        self.flush()

    def record_input(self, data: bytes, redact: bool) -> None:
        self.record("i", None if redact else base64.b64encode(data).decode("ascii"))

    def flush(self) -> None:
        """Write the pending index records; when the disk refuses them they are dropped (a torn line is
        skipped on read), so memory never grows."""
        if self._pending:
            try:
                os.write(self._idx_fd, b"".join(dumps(e) + b"\n" for e in self._pending))
            except OSError as exc:
                self._failed("output.idx", exc)
            self._pending.clear()
        self._last_flush = time.monotonic()

    def _failed(self, name: str, exc: OSError) -> None:
        if self.failure is None:
            log.error("%s: writing %s failed: %s; the session goes on, the journal has holes", self.raw_path.parent.name,
                      name, exc.strerror)  # fmt: skip
        self.failure = f"writing {name} failed: {exc.strerror}"

    def close(self) -> None:
        self.flush()
        os.close(self._raw_fd)
        os.close(self._idx_fd)


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
    """The complete index records of one kind (only those lines are parsed; the index is read in chunks)."""
    marker = dumps(kind)
    entries = []
    for line in (line for lines in line_blocks(directory / "output.idx") for line in lines if line and marker in line):
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
    (app.core.archive) the offset its marker gives; the bytes before it are a hole, not output."""
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
