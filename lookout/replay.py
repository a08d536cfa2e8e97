"""`lookout replay FILE`: a replay archive (GET /v1/timeline/export) served read-only from a private copy.

The archive is not trusted. It is unpacked within bounds (lookout.core.archive: at most `max_bytes`, refused with
the reason before anything is written; every terminal's files checked by lookout.terminal.journal.archived) into a
private temporary directory (under TMPDIR), which is removed however the process ends: at a normal end, an
exception, SIGINT or SIGTERM by this process itself, and otherwise (SIGKILL, an abort, SIGHUP's re-execution)
by a small reaper process that waits for this one to be gone. The lookout that serves it is read-only: it
refuses every change and records nothing, reading included.
"""

from __future__ import annotations

import os
import re
import secrets
import shutil
import signal
import subprocess
import sys
import tempfile
from collections.abc import Callable, Iterator
from contextlib import ExitStack, contextmanager
from fnmatch import fnmatchcase
from pathlib import Path, PurePosixPath
from types import FrameType

from lookout.config import Settings
from lookout.core.archive import open_archive
from lookout.core.errors import BadInput, TooLarge
from lookout.core.printable import printable
from lookout.terminal.journal.archived import TERMINALS, check_range, check_terminal
from lookout.terminal.journal.persistence import MAX_RECORD_BYTES

MAX_FILE_BYTES = 64 << 20
"""The most a file of an archive may hold, but those read a line or a chunk at a time: a file read whole (a
record, a screenshot, a UI dump) must fit in memory with room to spare."""
HELD = {
    "timeline/frames.jsonl": sys.maxsize,
    f"{TERMINALS}/*/output.raw": sys.maxsize,
    f"{TERMINALS}/*/output.idx": sys.maxsize,
    f"{TERMINALS}/*/output.raw.range": MAX_FILE_BYTES,
    f"{TERMINALS}/*/meta.json": MAX_RECORD_BYTES,
    f"{TERMINALS}/*/blocks.jsonl": MAX_FILE_BYTES,
    f"{TERMINALS}/*/checkpoints/*.json": MAX_RECORD_BYTES,
    "devices/*/observations/*": MAX_FILE_BYTES,
    "pages/*/observations/*": MAX_FILE_BYTES,
}
"""What an export writes (lookout.timeline.export and the registries' `exported`), each with the most it may hold:
anything else (the timeline's checkpoints, a token, profiles, holders' sockets) is refused."""
_UNITS = {"": 1, "K": 1 << 10, "M": 1 << 20, "G": 1 << 30, "T": 1 << 40}
_REAPER = "import shutil, sys; sys.stdin.buffer.read(); shutil.rmtree(sys.argv[1], ignore_errors=True)"
"""Blocks until its stdin (a pipe whose only writer is the replaying process, closed on exec) reaches its end,
that is until that process is gone, then removes the copy."""


def parse_bytes(text: str) -> int:
    """A byte count as a person writes it: `1073741824`, `512M`, `4G` (powers of 1024)."""
    match = re.fullmatch(r"\s*(\d+)\s*([KMGT]?)i?B?\s*", text, re.IGNORECASE)
    if match is None:
        raise ValueError(f"{text!r} is not a size such as 512M or 4G")
    return int(match.group(1)) * _UNITS[match.group(2).upper()]


def serve(archive: Path, port: int, token: str | None, max_bytes: int, run: Callable[[Settings], int]) -> int:
    """Unpack `archive` and serve it read-only with `run` (the daemon's own runner) on 127.0.0.1:`port`;
    returns the exit status (2 when the archive is refused, with the reason on stderr)."""
    with private_copy() as folder:
        data = folder / "data"
        try:
            unpack(archive, data, max_bytes)
        except TooLarge as exc:
            print(printable(f"lookout replay: refused (too large, 413): {exc}"), file=sys.stderr)
            return 2
        except BadInput as exc:
            print(printable(f"lookout replay: refused: {exc}"), file=sys.stderr)
            return 2
        token = token or secrets.token_urlsafe(24)
        settings = Settings(host="127.0.0.1", port=port, data_dir=data, token=token, read_only=True)
        print(printable(f"lookout replay: {archive}, read-only, at http://127.0.0.1:{port}/ (token: {token})"),
              file=sys.stderr, flush=True)  # fmt: skip
        return run(settings)


def unpack(archive: Path, data: Path, max_bytes: int) -> None:
    """The archive as the data dir `data`; TooLarge or BadInput with the reason when it cannot be trusted."""
    open_archive(archive, data, max_bytes, file_limit, check_range)
    terminals = data / TERMINALS
    for directory in sorted(terminals.iterdir()) if terminals.is_dir() else []:
        check_terminal(directory)


def file_limit(name: str) -> int | None:
    """(lookout.core.archive.FileLimit) What HELD allows `name`, matched part by part; None for anything else."""
    parts = PurePosixPath(name).parts
    for pattern, limit in HELD.items():
        wanted = PurePosixPath(pattern).parts
        if len(parts) == len(wanted) and all(fnmatchcase(p, w) for p, w in zip(parts, wanted, strict=True)):
            return limit
    return None


@contextmanager
def private_copy() -> Iterator[Path]:
    """A new private directory, removed when the block ends, on SIGTERM (which ends the block) and, by the
    reaper, however this process ends."""
    previous = signal.signal(signal.SIGTERM, _exit_on_signal)  # first: a SIGTERM from here on removes the copy
    with ExitStack() as cleanup:
        cleanup.callback(signal.signal, signal.SIGTERM, previous)
        folder = Path(tempfile.mkdtemp(prefix="lookout-replay-"))
        cleanup.callback(shutil.rmtree, folder, ignore_errors=True)
        reader, writer = os.pipe()  # the writer is not inherited (and closed on exec): its end is this process's
        cleanup.callback(os.close, writer)
        with os.fdopen(reader, "rb") as stdin:
            subprocess.Popen([sys.executable, "-I", "-c", _REAPER, str(folder)], stdin=stdin,
                             stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True)  # fmt: skip
        yield folder


def _exit_on_signal(signum: int, _frame: FrameType | None) -> None:
    """SIGTERM ends the process as an exception does, so that cleanup runs (uvicorn, which handles it while
    it serves, raises it again once it has stopped)."""
    raise SystemExit(128 + signum)
