"""Replay archives: one gzip'd tar file that holds part of a data dir (frames, observations, journal ranges), laid
out as a data dir is, so that `lookout replay FILE` serves it with the same code.

Writing takes parts: whole files, byte ranges of files (a journal range is stored with the offset it starts
at, in `<name>.range`, and put back at that offset), or bytes. Opening refuses, before anything is written,
an archive that is truncated or not one, and any member that is not a plain file or directory, whose name
is absolute or climbs out (`..`), or that would make the whole larger than MAX_OPEN_BYTES.
"""

from __future__ import annotations

import io
import os
import tarfile
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path, PurePosixPath

from app.core.errors import BadInput
from app.core.private_files import make_dir, open_file

MAX_OPEN_BYTES = 16 << 30
RANGE_SUFFIX = ".range"
_CHUNK = 1 << 20


@dataclass(frozen=True, slots=True)
class ArchivePart:
    """`name`: the path inside the data dir; `source`: a file (all of it, or `length` bytes from `start`) or
    the bytes themselves."""

    name: str
    source: Path | bytes
    start: int = 0
    length: int | None = None


def write_archive(parts: Iterable[ArchivePart], dest: Path) -> int:
    """Write the parts (each name once: the first wins) to `dest`; returns how many were written."""
    seen: set[str] = set()
    fd = open_file(dest, os.O_WRONLY | os.O_CREAT | os.O_TRUNC)
    with os.fdopen(fd, "wb") as out, tarfile.open(fileobj=out, mode="w:gz") as tar:
        for part in parts:
            if part.name in seen:
                continue
            seen.add(_checked(part.name))
            if isinstance(part.source, bytes):
                _add(tar, part.name, io.BytesIO(part.source), len(part.source))
                continue
            with open(open_file(part.source, os.O_RDONLY), "rb") as f:
                size = os.fstat(f.fileno()).st_size
                start = min(part.start, size)
                length = size - start if part.length is None else min(part.length, size - start)
                f.seek(start)
                if part.length is not None or part.start:
                    _add(tar, part.name + RANGE_SUFFIX, io.BytesIO(str(start).encode()), len(str(start)))
                _add(tar, part.name, f, length)
    return len(seen)


def _add(tar: tarfile.TarFile, name: str, data: io.IOBase, size: int) -> None:
    info = tarfile.TarInfo(name)
    info.size, info.mode = size, 0o600
    tar.addfile(info, data)


def open_archive(src: Path, into: Path) -> None:
    """Unpack the archive at `src` into the (new, empty) directory `into`, journal ranges back at their
    offsets; BadInput saying what is wrong with an archive that cannot be trusted or read."""
    try:
        with tarfile.open(src, mode="r:gz") as tar:
            members = tar.getmembers()  # reads to the end: a truncated archive fails here
            total = 0
            for member in members:
                _checked(member.name)
                if not (member.isfile() or member.isdir()):
                    raise BadInput(f"the archive's member {member.name!r} is a link or device, not a file")
                total += member.size
                if total > MAX_OPEN_BYTES:
                    raise BadInput(f"the archive unpacks to more than {MAX_OPEN_BYTES >> 30} GiB")
            make_dir(into)
            for member in members:
                if member.isfile() and not member.name.endswith(RANGE_SUFFIX):
                    _unpack(tar, member, members, into)
    except (tarfile.TarError, EOFError, OSError, ValueError) as exc:
        if isinstance(exc, BadInput):
            raise
        raise BadInput(f"{src} is not a whole replay archive (truncated or damaged?): {exc}") from exc


def _unpack(tar: tarfile.TarFile, member: tarfile.TarInfo, members: list[tarfile.TarInfo], into: Path) -> None:
    target = into / member.name
    make_dir(target.parent)
    offset = _range_start(tar, member.name, members)
    source = tar.extractfile(member)
    assert source is not None
    fd = open_file(target, os.O_WRONLY | os.O_CREAT | os.O_EXCL)
    with os.fdopen(fd, "wb") as out:
        out.seek(offset)  # a journal range goes back where it was: the bytes before it are a hole
        while chunk := source.read(_CHUNK):
            out.write(chunk)


def _range_start(tar: tarfile.TarFile, name: str, members: list[tarfile.TarInfo]) -> int:
    marker = next((m for m in members if m.name == name + RANGE_SUFFIX and m.isfile()), None)
    if marker is None:
        return 0
    data = tar.extractfile(marker)
    assert data is not None
    try:
        return max(0, int(data.read(32)))
    except ValueError:
        raise BadInput(f"the archive's range marker of {name!r} is not an offset") from None


def _checked(name: str) -> str:
    path = PurePosixPath(name)
    if not name or path.is_absolute() or ".." in path.parts or "\x00" in name or name.startswith("\\"):
        raise BadInput(f"the archive's member {name!r} would land outside the directory it is opened in")
    return name
