"""Crash-safe files: atomic rewrites, append-only JSON lines whose torn last line is skipped on read. Every
file is private and opened without following links (lookout.core.private_files)."""

from __future__ import annotations

import os
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import orjson

from lookout.core.private_files import open_file, read_bytes


def dumps(obj: Any) -> bytes:
    """Compact JSON bytes (orjson; non-str keys allowed)."""
    return orjson.dumps(obj, option=orjson.OPT_NON_STR_KEYS)


def write_all(fd: int, data: bytes) -> None:
    """Write all of `data` to `fd` (os.write may write less than it is given)."""
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view) :]


def atomic_write_bytes(path: Path, data: bytes, durable: bool = False) -> None:
    """Write through a new temp file in the same directory and rename it over `path` (the rename replaces a
    link at `path`, it does not follow it). Readers see the old or the new content, never a mix; `durable`
    also fsyncs (survives power loss, not just a crash)."""
    tmp = path.with_name(f".{path.name}.{os.getpid()}.{threading.get_ident()}.tmp")
    try:
        fd = open_file(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL)
    except FileExistsError:  # left by a crashed run with the same pid and thread id
        tmp.unlink()
        fd = open_file(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL)
    try:
        try:
            write_all(fd, data)
            if durable:
                os.fsync(fd)
        finally:
            os.close(fd)
    except OSError:
        tmp.unlink(missing_ok=True)  # a full disk must not also fill up with half-written temp files
        raise
    os.replace(tmp, path)


def atomic_write_json(path: Path, obj: Any) -> None:
    atomic_write_bytes(path, dumps(obj))


def read_json(path: Path, limit: int | None = None) -> Any:
    """The JSON document in `path`; ValueError when it is not JSON or is larger than `limit` bytes."""
    return orjson.loads(read_bytes(path, limit))


def jsonl_line(obj: Any) -> bytes:
    """One line of a JSON-lines file."""
    return dumps(obj) + b"\n"


def append_jsonl(path: Path, obj: Any) -> int:
    """Append one JSON line with a single write; returns the file size after it."""
    line = jsonl_line(obj)
    fd = open_file(path, os.O_WRONLY | os.O_CREAT | os.O_APPEND)
    try:
        os.write(fd, line)
        return os.fstat(fd).st_size
    finally:
        os.close(fd)


def cut_torn_tail(path: Path) -> int:
    """Cut a last line that has no newline (a write torn by a crash), so the next append starts a clean
    line instead of joining it. Returns the bytes cut."""
    try:
        with open(open_file(path, os.O_RDWR), "rb+") as f:
            size = f.seek(0, os.SEEK_END)
            if size == 0:
                return 0
            position = size
            while position > 0:
                step = min(4096, position)
                f.seek(position - step)
                chunk = f.read(step)
                newline = chunk.rfind(b"\n")
                if newline != -1:
                    end = position - step + newline + 1
                    break
                position -= step
            else:
                end = 0
            if end < size:
                f.truncate(end)
            return size - end
    except FileNotFoundError:
        return 0


MAX_LINE_BYTES = 64 << 20
"""A line longer than this is not kept in memory by `line_blocks` (records are far shorter: a frame with a
whole 1000x500 screen at three levels is a few MB)."""
_CHUNK = 1 << 20


def line_blocks(path: Path, start: int = 0, max_line: int = MAX_LINE_BYTES) -> Iterator[list[bytes | None]]:
    """The lines of the file from offset `start` on, without their newlines, a chunk's worth at a time, so
    that memory holds a chunk and a line, never the file: None stands for a line longer than `max_line`. A
    last line without a newline is given too (its reader tells a torn one by its length)."""
    try:
        fd = open_file(path, os.O_RDONLY)
    except FileNotFoundError:
        return
    with os.fdopen(fd, "rb") as f:
        f.seek(start)
        pending: list[bytes] = []
        pending_len = 0
        while chunk := f.read(_CHUNK):
            pieces = chunk.split(b"\n")
            if len(pieces) > 1:
                lines: list[bytes | None] = list(pieces[:-1])
                head = pending_len + len(pieces[0])
                lines[0] = None if head > max_line else b"".join((*pending, pieces[0])) if pending else pieces[0]
                if max_line < _CHUNK:  # (only then can a line within one chunk be too long)
                    lines = [line if line is None or len(line) <= max_line else None for line in lines]
                yield lines
                pending, pending_len = [], 0
            pending_len += len(pieces[-1])
            pending = [*pending, pieces[-1]] if pending_len <= max_line else []
        if pending_len:
            yield [b"".join(pending) if pending_len <= max_line else None]


def iter_jsonl(path: Path) -> Iterator[Any]:
    """Every complete, parseable line of a JSON-lines file; a torn, corrupt or overlong line is skipped.
    Memory holds a chunk of the file at a time."""
    for lines in line_blocks(path):
        for line in lines:
            if not line:
                continue
            try:
                yield orjson.loads(line)
            except orjson.JSONDecodeError:
                continue
