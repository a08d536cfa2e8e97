"""The daemon's reading of a journal that a holder writes: output.raw from an offset on, in order, and in
output.idx the records that matter to the reader (genuine nonces, the exit, a write failure).

The holder masks the shell integration's nonce with `*` (app.terminal.nonce_filter) and records where each
genuine one starts (`n`) before it writes the bytes. The follower puts the daemon's own stand-in for the nonce
(`token`, never written anywhere) at those offsets, so the side scanner and the block tracker, given that
token, trust exactly the shell's marks, in a live session and in one adopted after a restart alike. A masked
nonce that a program printed has no `n` record and stays forged.
"""

from __future__ import annotations

import json
import os
from bisect import bisect_left
from pathlib import Path

from app.core.private_files import open_file

MASK = b"*"


class JournalFollower:
    """Reads a session's journal from `offset` on (blocking file reads of the page cache: fast, see
    `read`). `token`: the stand-in for the nonce (bytes of the nonce's length), or None (no integration)."""

    def __init__(self, directory: Path, offset: int, token: bytes | None) -> None:
        self.offset = offset
        self.exit_code: int | None = None
        """From the journal's `x` record, once read."""
        self._raw = open_file(directory / "output.raw", os.O_RDONLY | os.O_CREAT)
        self._idx = open_file(directory / "output.idx", os.O_RDONLY | os.O_CREAT)
        self._idx_pos = 0
        self._idx_tail = b""
        self._token = token
        self._genuine: list[int] = []

    @property
    def size(self) -> int:
        """The journal's size now."""
        return os.fstat(self._raw).st_size

    def read(self, upto: int, limit: int) -> tuple[bytes, bytes]:
        """The next bytes up to journal offset `upto` (at most about `limit`), as the program wrote them with
        the stand-in nonce in place (for the scanner), and as stored (for everything else); the follower's
        offset moves past them. A masked nonce is never cut in two."""
        self.refresh()
        start = self.offset
        end = min(upto, start + limit)
        if self._token is not None:
            width = len(self._token)
            i = bisect_left(self._genuine, start - width + 1)
            for pos in self._genuine[i:]:
                if pos >= end:
                    break
                if pos + width > end:
                    end = pos if pos > start else pos + width
                    break
        shown = os.pread(self._raw, end - start, start) if end > start else b""
        self.offset += len(shown)
        if self._token is None or not shown:
            return shown, shown
        data = bytearray(shown)
        i = bisect_left(self._genuine, start)
        for pos in self._genuine[i:]:
            if pos + len(self._token) > start + len(shown):
                break
            if data[pos - start : pos - start + len(self._token)] == MASK * len(self._token):
                data[pos - start : pos - start + len(self._token)] = self._token
        del self._genuine[:i]
        return bytes(data), shown

    def refresh(self) -> None:
        """Take the index records written since the last read (a torn last line waits for its end)."""
        while chunk := os.pread(self._idx, 1 << 20, self._idx_pos):
            self._idx_pos += len(chunk)
            lines = (self._idx_tail + chunk).split(b"\n")
            self._idx_tail = lines.pop()
            for line in lines:
                self._take(line)

    def _take(self, line: bytes) -> None:
        if b'"n"' not in line and b'"x"' not in line:
            return
        try:
            _, kind, offset, value = json.loads(line)
        except ValueError:
            return
        if kind == "n" and offset >= self.offset:
            self._genuine.append(offset)
        elif kind == "x":
            self.exit_code = value

    def close(self) -> None:
        os.close(self._raw)
        os.close(self._idx)
