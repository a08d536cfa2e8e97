"""The daemon's reading of a journal that a holder writes: output.raw from an offset on, in order, and in
output.idx the records that matter to the reader: where the genuine shell marks' nonces are (with when the
holder journaled them), the resizes (where the terminal took each size: a batch never spans one) and the exit.

The holder masks the shell integration's nonce with `*` (lookout.terminal.holder.nonce) and records where each
genuine one starts (`n`) before it writes the bytes; the follower hands those offsets on with the bytes, and
the ingest trusts exactly the marks whose masked nonce starts there. A masked nonce that a program printed
has no `n` record and stays forged.
"""

from __future__ import annotations

import json
import os
import re
from dataclasses import dataclass
from pathlib import Path

from lookout.core.private_files import open_file
from lookout.terminal.holder.sizes import parse_size
from lookout.terminal.journal.reader import index_position

_KINDS = re.compile(rb'"[nrx]"')
"""What a line of the index the follower takes holds: a mark's (`n`), a resize's (`r`) or the exit's (`x`) kind."""
INDEX_READ = 1 << 20
"""The index is read this much at a time; a shorter read is its end."""


@dataclass(frozen=True, slots=True)
class Batch:
    """Output as the journal holds it, and the genuine marks in it: {journal offset where a masked nonce
    starts: the Unix time the holder journaled it}; `size`: (cols, rows) the terminal took where the batch
    starts, before its bytes (the holder resized the PTY there), if it did."""

    data: bytes
    marks: dict[int, float]
    size: tuple[int, int] | None = None


class JournalFollower:
    """Reads a terminal's journal from `offset` on (blocking reads of the page cache: fast), and its index from
    where the records at `offset` on are (reader.index_position: a terminal taken up after hours of output
    reads the index's tail, not its history). `started_at`: the Unix time of the journal's t = 0 (index times
    are seconds since then)."""

    def __init__(self, directory: Path, offset: int, started_at: float) -> None:
        self.offset = offset
        self.exit_code: int | None = None
        """From the journal's `x` record, once read."""
        self._raw = open_file(directory / "output.raw", os.O_RDONLY | os.O_CREAT)
        self._idx = open_file(directory / "output.idx", os.O_RDONLY | os.O_CREAT)
        self._idx_pos = index_position(self._idx, offset)
        self._idx_tail = b""
        self._started_at = started_at
        self._marks: dict[int, float] = {}
        self._sizes: dict[int, tuple[int, int]] = {}
        """Resizes at or after `offset` not yet handed on: {journal offset: (cols, rows)}, the last one there."""

    @property
    def size(self) -> int:
        """The journal's size now."""
        return os.fstat(self._raw).st_size

    def read(self, upto: int, limit: int) -> Batch:
        """The next bytes up to journal offset `upto` (at most `limit`) with the genuine marks in them; the
        follower's offset moves past them. `upto` must be a size the journal had before this call: the holder
        writes a mark's `n` record before its bytes, so every mark of those bytes is in the index by then."""
        self.refresh()
        start = self.offset
        size = self._sizes.pop(start, None)
        end = min(upto, start + limit, *(at for at in self._sizes if at > start))  # up to the next resize
        data = os.pread(self._raw, end - start, start) if end > start else b""
        self.offset += len(data)
        if not self._marks:
            return Batch(data, {}, size)
        marks = {pos: at for pos, at in self._marks.items() if pos < self.offset}
        for pos in marks:
            del self._marks[pos]
        return Batch(data, {pos: at for pos, at in marks.items() if pos >= start}, size)

    def behind(self, target: int) -> bool:
        """Whether there is more to hand on up to journal offset `target`: bytes, or a resize where the
        follower is (a resize at the journal's end has no byte after it)."""
        if self.offset < target:
            return True
        self.refresh()
        return self.resize_here

    @property
    def resize_here(self) -> bool:
        """Whether a resize read from the index is still to be handed on where the follower is."""
        return self.offset in self._sizes

    def refresh(self) -> None:
        """Take the index records written since the last read (a torn last line waits for its end). Only the
        lines that name a mark, a resize or the exit are parsed, found by one scan in C: a busy terminal's
        index is mostly `o` records (one a write), and a line each in Python made most of a catch-up's time."""
        while chunk := os.pread(self._idx, INDEX_READ, self._idx_pos):
            self._idx_pos += len(chunk)
            data = self._idx_tail + chunk
            whole = data.rfind(b"\n") + 1
            self._idx_tail = data[whole:]
            taken = 0
            for hit in _KINDS.finditer(data, 0, whole):
                if hit.start() >= taken:  # (else in a line taken already)
                    taken = data.index(b"\n", hit.end()) + 1
                    self._take(data[data.rfind(b"\n", 0, hit.start()) + 1 : taken - 1])
            if len(chunk) < INDEX_READ:  # the end as it was: no second read (a syscall per output, for nothing)
                return

    def _take(self, line: bytes) -> None:
        try:
            t, kind, offset, value = json.loads(line)
        except (ValueError, TypeError):
            return
        if kind == "n" and isinstance(offset, int) and offset >= self.offset and isinstance(t, int | float):
            self._marks[offset] = self._started_at + t
        elif kind == "r" and isinstance(offset, int) and offset >= self.offset:
            try:
                self._sizes[offset] = parse_size(value)
            except ValueError:  # the holder checks what it records: a damaged index, which replays refuse
                pass
        elif kind == "x" and isinstance(value, int):
            self.exit_code = value

    def close(self) -> None:
        os.close(self._raw)
        os.close(self._idx)
