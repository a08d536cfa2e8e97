"""The lossless journal of a terminal, `output.raw` (every byte the program wrote) and `output.idx`, and its
writer. The terminal's holder is the only writer; the daemon reads it (lookout.terminal.journal.reader).

Flush policy: each chunk read from the PTY is written to `output.raw` before anything else sees it, so every
byte read survives a crash of the daemon and of the holder (it is in the kernel's page cache). Index records
are buffered and written at most every `INDEX_FLUSH_S` seconds and at every non-output event; a crash can
lose the timing of the last fraction of a second of output, never the bytes.

Each index line is a JSON array `[t, kind, offset, value]`: `t` seconds since the terminal was opened (its
Unix time is `started_at`, which the daemon gives the holder), `kind` one of "o" (output; value = byte
count), "i" (input; value = base64 of the bytes, or null when redacted), "r" (resize; value = "COLSxROWS"),
"m" (marker; value = label), "x" (exit; value = exit code), "n" (a genuine shell mark's masked nonce starts
at `offset`; value null; written before the bytes it names), and `offset` the size of
`output.raw` when the event happened.
"""

from __future__ import annotations

import base64
import json
import os
import time
from typing import Any

from lookout.terminal.holder.holder_log import log

INDEX_FLUSH_S = 0.25
_MERGE_OUTPUT_S = 0.005
_FLAGS = os.O_WRONLY | os.O_CREAT | os.O_APPEND | os.O_NOFOLLOW | os.O_CLOEXEC


def format_record(entry: list[Any]) -> bytes:
    """One index line (formatted by hand: a holder runs for as long as its program, and every module it puts
    to use costs it private memory; see docs/terminals.md)."""
    t, kind, offset, value = entry
    text = "null" if value is None else str(value) if type(value) is int else json.dumps(value)
    return f'[{t!r},"{kind}",{offset},{text}]\n'.encode()


def open_journal(directory: str | os.PathLike[str]) -> tuple[int, int]:
    """`output.raw` and `output.idx` of `directory`, opened for appending (made 0600 when missing, never
    through a link): what a JournalWriter writes to."""
    raw_fd = os.open(f"{directory}/output.raw", _FLAGS, 0o600)
    try:
        return raw_fd, os.open(f"{directory}/output.idx", _FLAGS, 0o600)
    except OSError:
        os.close(raw_fd)
        raise


class JournalWriter:
    """Appends output and events for a live terminal to the journal's two files (`open_journal`; the writer
    closes them)."""

    def __init__(self, raw_fd: int, idx_fd: int, max_bytes: int, started_at: float | None = None) -> None:
        self._raw_fd, self._idx_fd = raw_fd, idx_fd
        self.size = os.fstat(self._raw_fd).st_size
        self.dropped = 0
        self.failure: str | None = None
        """Why a write failed (a full disk...): the journal then has holes, counted in `dropped`."""
        now = time.time()
        self.started_at = now if started_at is None else min(started_at, now)
        """The Unix time of `t` = 0 (now, or `started_at`: when the daemon opened the terminal)."""
        self._max_bytes = max_bytes
        self._t0 = time.monotonic() - (now - self.started_at)
        self._pending: list[list[Any]] = []
        self._last_flush = self._t0

    def elapsed(self) -> float:
        return round(time.monotonic() - self._t0, 4)

    def write_output(self, data: bytes, genuine: list[int] | tuple[int, ...] = ()) -> int:
        """Store `data`; returns how many bytes were stored (fewer once the size limit is reached, or when
        the disk refuses them: never an exception, the terminal goes on without them). `genuine`: where in
        `data` the shell integration's (masked) nonce starts, recorded before the bytes are written."""
        if genuine:
            now = self.elapsed()
            self._pending.extend([now, "n", self.size + pos, None] for pos in genuine)
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
                os.write(self._idx_fd, b"".join(map(format_record, self._pending)))
            except OSError as exc:
                self._failed("output.idx", exc)
            self._pending.clear()
        self._last_flush = time.monotonic()

    def _failed(self, name: str, exc: OSError) -> None:
        if self.failure is None:
            log(f"writing {name} failed: {exc.strerror}; the terminal goes on, the journal has holes")
        self.failure = f"writing {name} failed: {exc.strerror}"

    def close(self) -> None:
        self.flush()
        os.close(self._raw_fd)
        os.close(self._idx_fd)
