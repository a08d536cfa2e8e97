"""Replay archives: one gzip'd tar file that holds part of a data dir (frames, observations, journal ranges), laid
out as a data dir is, so that `lookout replay FILE` serves it with the same code.

Writing takes parts: whole files, byte ranges of files (a journal range is stored with the offset it starts
at, in `<name>.range`, and put back at that offset), or bytes.

Opening trusts nothing in the archive (as the `data` extraction filter of Python's tarfile, and stricter: a
replay archive only ever holds plain files). It reads every member's header first and writes nothing until
all are known good; it refuses:
- more than `max_bytes` unpacked, a file larger than `file_limit(name)`, more than MAX_MEMBERS members, or
  more than the free space where it unpacks (TooLarge, 413), counting what each header claims, before any
  of it is decompressed; a file whose `file_limit` is None (no archive of this kind holds it);
- an archive that is truncated, damaged or not one; a member that is not a plain file or directory (links,
  devices, FIFOs); a name that is absolute, climbs out (`..`), holds a NUL or a backslash, is longer than
  MAX_NAME_CHARS or deeper than MAX_NAME_PARTS; a name given twice; an extended header (pax, GNU long
  name) larger than MAX_HEADER_BYTES (tarfile would read it whole); a range marker that is not an offset;
- a range the caller's `check_range` refuses (it is called before the range is written, with every member
  before it in the archive already on disk).
Members are then written in one pass in archive order: linear in their number and size.
"""

from __future__ import annotations

import io
import os
import shutil
import tarfile
import zlib
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path, PurePosixPath
from typing import Self

from lookout.core.errors import BadInput, TooLarge
from lookout.core.private_files import make_dir, open_file

RANGE_SUFFIX = ".range"
MAX_MEMBERS = 100_000
MAX_NAME_CHARS = 512
MAX_NAME_PARTS = 8
MAX_HEADER_BYTES = 64 << 10
_MAX_MARKER_BYTES = 18
"""A range marker holds the offset in decimal digits: up to 10^18, more than any file can hold."""
_CHUNK = 1 << 20
_EXTENDED = frozenset({tarfile.XHDTYPE, tarfile.XGLTYPE, tarfile.SOLARIS_XHDTYPE, tarfile.GNUTYPE_LONGNAME,
                       tarfile.GNUTYPE_LONGLINK})  # fmt: skip

RangeCheck = Callable[[Path, str, int, int], None]
"""check_range(into, name, start, length): BadInput unless member `name` may be written `length` bytes from
offset `start` (the bytes before it a hole), given what is already unpacked in `into`."""
FileLimit = Callable[[str], int | None]
"""file_limit(name): the most bytes member `name` may hold (what its readers can take), or None when no archive
of the kind being opened holds such a file."""


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


class _Header(tarfile.TarInfo):
    """A member header, refused when its size is negative or an extended header's is too large to be read
    whole (tarfile reads pax and GNU long-name blocks into memory in one piece)."""

    @classmethod
    def frombuf(cls, buf: bytes | bytearray, encoding: str, errors: str) -> Self:
        info = super().frombuf(buf, encoding, errors)
        if info.size < 0:
            raise BadInput(f"the archive's member {info.name!r} has a negative size")
        if info.type in _EXTENDED and info.size > MAX_HEADER_BYTES:
            raise BadInput(f"the archive has an extended header of {info.size} bytes (at most {MAX_HEADER_BYTES})")
        return info


def open_archive(src: Path, into: Path, max_bytes: int, file_limit: FileLimit, check_range: RangeCheck) -> None:
    """Unpack the archive at `src` into the new directory `into` (see the module's docstring): TooLarge or
    BadInput saying what is wrong, before anything is written when the headers show it."""
    try:
        with tarfile.open(src, mode="r:gz", tarinfo=_Header) as tar:
            files, starts = _survey(tar, max_bytes, file_limit, into.parent)
            make_dir(into)
            for member in files:
                start = starts.get(member.name, 0)
                if member.name in starts:
                    check_range(into, member.name, start, member.size)
                _unpack(tar, member, into / member.name, start)
    except (tarfile.TarError, EOFError, OSError, ValueError, zlib.error) as exc:
        raise BadInput(f"{src} is not a whole replay archive (truncated or damaged?): {exc}") from exc


def _survey(
    tar: tarfile.TarFile, max_bytes: int, file_limit: FileLimit, where: Path
) -> tuple[list[tarfile.TarInfo], dict[str, int]]:
    """Every member read and checked, nothing written: the files to write, in archive order, and the start
    of each journal range."""
    files: list[tarfile.TarInfo] = []
    names: set[str] = set()
    starts: dict[str, int] = {}
    total = 0
    for count, member in enumerate(tar, start=1):
        if count > MAX_MEMBERS:
            raise TooLarge(f"the archive holds more than {MAX_MEMBERS} members; a replay archive holds far fewer")
        _checked(member.name)
        if member.isdir():
            continue
        if not member.isfile():
            raise BadInput(f"the archive's member {member.name!r} is a link or device, not a file")
        if member.name in names:
            raise BadInput(f"the archive holds {member.name!r} twice")
        names.add(member.name)
        if (limit := file_limit(member.name)) is None:
            raise BadInput(f"the archive holds {member.name[:100]!r}, which no replay archive holds")
        if member.size > limit:
            raise TooLarge(f"the archive's {member.name!r} holds {_size(member.size)}, more than a file of its kind "
                           f"may ({_size(limit)})")  # fmt: skip
        total += member.size
        if total > max_bytes:
            raise TooLarge(f"the archive unpacks to more than {_size(max_bytes)} (its members claim {_size(total)} "
                           "so far); allow more with --max-bytes if you trust it")  # fmt: skip
        if member.name.endswith(RANGE_SUFFIX):
            starts[member.name.removesuffix(RANGE_SUFFIX)] = _range_start(tar, member)
        files.append(member)
    free = shutil.disk_usage(where).free
    if total > free:
        raise TooLarge(f"the archive unpacks to {_size(total)} and {where} has {_size(free)} free "
                       "(TMPDIR chooses where it is unpacked)")  # fmt: skip
    return files, starts


def _range_start(tar: tarfile.TarFile, marker: tarfile.TarInfo) -> int:
    source = tar.extractfile(marker) if marker.size <= _MAX_MARKER_BYTES else None
    text = source.read() if source is not None else b""
    if not text.isdigit():
        raise BadInput(f"the archive's range marker {marker.name!r} is not an offset")
    return int(text)


def _unpack(tar: tarfile.TarFile, member: tarfile.TarInfo, target: Path, offset: int) -> None:
    make_dir(target.parent)
    source = tar.extractfile(member)
    assert source is not None
    fd = open_file(target, os.O_WRONLY | os.O_CREAT | os.O_EXCL)
    with os.fdopen(fd, "wb") as out:
        out.seek(offset)  # a journal range goes back where it was: the bytes before it are a hole
        while chunk := source.read(_CHUNK):
            out.write(chunk)


def _checked(name: str) -> str:
    path = PurePosixPath(name)
    if (not name or path.is_absolute() or ".." in path.parts or "\x00" in name or "\\" in name
            or len(name) > MAX_NAME_CHARS or len(path.parts) > MAX_NAME_PARTS):  # fmt: skip
        raise BadInput(f"the archive's member {name[:100]!r} would land outside the directory it is opened in, "
                       f"or is not a name a replay archive holds")  # fmt: skip
    return name


def _size(n: int) -> str:
    return f"{n / (1 << 30):.1f} GiB" if n >= 1 << 30 else f"{n / (1 << 20):.1f} MiB"
