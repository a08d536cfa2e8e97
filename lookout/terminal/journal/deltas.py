"""Screen deltas: the rows that changed, as JSON lines in `screen.jsonl`, read back by byte cursor.

A delta is a frozen `Delta`; each line is its JSON form (`Delta.to_json`): `{"t", "cols", "rows", "changed":
[[row, text], ...], "cursor": {"left", "top", "visible"}, "title", "alt_screen", "raw_offset"}`, plus
`"resized": true` after a resize (every row is then in `changed`). A read cursor is a byte offset in the
file that must sit on a line boundary; every read returns `resume_cursor`, where the next read starts.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import orjson

from lookout.core.errors import BadInput
from lookout.core.private_files import open_file
from lookout.core.storage import dumps

SCREEN_DELTAS = "screen.jsonl"
_READ_CHUNK = 1 << 16
MIN_INTERVAL_S = 0.1
"""At most 10 deltas a second per session while a client streams them (mode=deltas)."""
UNWATCHED_INTERVAL_S = 0.5
"""At most 2 a second while nobody does: each delta brings the screen model up to date, which in a flood is
the daemon's largest cost, and readers of the file or of `changed_since` lose nothing (a delta names every
row changed since the one before, and `changed_since` adds the changes not yet written)."""


class Throttle:
    """Leading and trailing edge rate limit: the first change goes out at once, later ones wait until
    `interval` has passed since the last emission, and the last change always goes out."""

    def __init__(self, interval: float, clock: Callable[[], float]) -> None:
        self.interval = interval
        self.clock = clock
        self._last = float("-inf")

    def delay(self) -> float:
        """Seconds to wait before the next emission may happen (0: now)."""
        return max(0.0, self._last + self.interval - self.clock())

    def emitted(self) -> None:
        self._last = self.clock()


@dataclass(frozen=True, slots=True, kw_only=True)
class Delta:
    """The rows of the screen that changed (`changed`: (row, text) pairs), with the screen's size, cursor,
    title and alternate-screen flag, and the journal offset it reflects. `resized`: every row changed with
    the size; `full`: every row, sent as the first delta of a stream."""

    t: float
    cols: int
    rows: int
    changed: tuple[tuple[int, str], ...]
    cursor: tuple[int, int, bool]
    """(left, top, visible)"""
    title: str
    alt_screen: bool
    raw_offset: int
    resized: bool = False
    full: bool = False

    def to_json(self) -> dict[str, Any]:
        left, top, visible = self.cursor
        out: dict[str, Any] = {
            "t": self.t,
            "cols": self.cols,
            "rows": self.rows,
            "changed": [[row, text] for row, text in self.changed],
            "cursor": {"left": left, "top": top, "visible": visible},
            "title": self.title,
            "alt_screen": self.alt_screen,
            "raw_offset": self.raw_offset,
        }
        if self.resized:
            out["resized"] = True
        if self.full:
            out["full"] = True
        return out


@dataclass(frozen=True, slots=True)
class DeltaPage:
    cursor: int
    resume_cursor: int
    file_size: int
    deltas: list[dict[str, Any]]
    """As stored: each the JSON form of a Delta, parsed afresh for this page."""


class DeltaLog:
    """Append and read `screen.jsonl`. The file stays open for appending while the session runs (opening
    it for each delta cost a flooding session a path lookup and a close several times a second)."""

    def __init__(self, directory: Path) -> None:
        self.path = directory / SCREEN_DELTAS
        self._fd: int | None = None
        self._closed = False

    def open(self) -> None:
        """Open the file for appending ahead of the first delta (blocking: a worker's, so that the loop does
        not wait for the path's lookup when the delta comes)."""
        if self._fd is None and not self._closed:
            self._fd = open_file(self.path, os.O_WRONLY | os.O_CREAT | os.O_APPEND)

    def append(self, delta: Delta) -> None:
        fd = self._fd if self._fd is not None else open_file(self.path, os.O_WRONLY | os.O_CREAT | os.O_APPEND)
        try:
            os.write(fd, dumps(delta.to_json()) + b"\n")
        finally:
            if self._closed:  # a late delta after the session ended: the file is not kept open
                os.close(fd)
            else:
                self._fd = fd

    def close(self) -> None:
        """Close the file (the session ended); later appends open it for themselves."""
        self._closed = True
        if self._fd is not None:
            os.close(self._fd)
            self._fd = None

    def size(self) -> int:
        try:
            return self.path.lstat().st_size  # a link is refused when read, never followed
        except FileNotFoundError:
            return 0

    def read(self, cursor: int, limit: int, max_bytes: int | None = None) -> DeltaPage:
        """Up to `limit` deltas from byte `cursor`, and no more than `max_bytes` of them (but at least one):
        `resume_cursor` is where the next read goes on. A cursor off a line boundary or past the end is a
        400. A torn last line (a crash mid-write) is not returned and not consumed."""
        try:
            fd = open_file(self.path, os.O_RDONLY)
        except FileNotFoundError:
            fd = None
        try:
            size = os.fstat(fd).st_size if fd is not None else 0
            if cursor < 0 or cursor > size or (cursor > 0 and fd is not None and os.pread(fd, 1, cursor - 1) != b"\n"):
                raise BadInput(
                    f"cursor {cursor} is not the start of a delta (file is {size} bytes; use a resume_cursor)",
                    field="cursor",
                )
            deltas: list[dict[str, Any]] = []
            pos = cursor
            buf = b""
            while len(deltas) < limit and fd is not None:
                end = buf.find(b"\n")
                if end < 0:
                    more = os.pread(fd, _READ_CHUNK, pos + len(buf))
                    if not more:
                        break
                    buf += more
                    continue
                if max_bytes is not None and deltas and pos + end + 1 - cursor > max_bytes:
                    break
                try:
                    deltas.append(orjson.loads(buf[:end]))
                except orjson.JSONDecodeError:
                    pass
                pos += end + 1
                buf = buf[end + 1 :]
            return DeltaPage(cursor, pos, size, deltas)
        finally:
            if fd is not None:
                os.close(fd)

    def rows_changed_since(self, cursor: int) -> set[int] | None:
        """The rows changed by the deltas after `cursor`; None after a resize (every row changed)."""
        page = self.read(cursor, limit=1 << 30)
        if any(d.get("resized") for d in page.deltas):
            return None
        return {row for delta in page.deltas for row, _ in delta["changed"]}
