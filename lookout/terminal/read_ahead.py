"""Exited terminals' records read ahead of a start, by a daemon that waits to take over (a standby, or the new
daemon of a hot restart: lookout.daemon.serve), so that its start reads only what changed since.

A record (lookout.terminal.dormant.recorded) is read from four files; one read ahead is used at start only if
none of them has changed since: the same inode, size and modification time (`stamp`, by lstat). Only files
that had not changed for QUIET_S when they were read are read ahead, so a later change cannot leave the stamp as
it was: it gives a later modification time (the file system's clock is coarse, a few milliseconds, and a file
rewritten within one tick, to the same size, in a reused inode, would otherwise look the same).
"""

from __future__ import annotations

import contextlib
import logging
import time
from dataclasses import dataclass
from pathlib import Path

from lookout.terminal.blocks.blocks import BLOCKS_FILE
from lookout.terminal.dormant import Dormant, recorded
from lookout.terminal.journal.persistence import load_meta

log = logging.getLogger(__name__)

RECORDED_FROM = ("meta.json", "screen.snapshot.json", BLOCKS_FILE, "output.raw")
"""The files an exited terminal's record is read from."""
QUIET_S = 2.0
"""How long a terminal's files must have been unchanged for its record to be read ahead."""

Stamp = tuple[tuple[int, int, int] | None, ...]


@dataclass(frozen=True, slots=True)
class Ahead:
    """An exited terminal's record, and the stamp of the files it was read from."""

    stamp: Stamp
    record: Dormant


def stamp(directory: Path) -> Stamp:
    """(inode, size, modification time in ns) of each of RECORDED_FROM, None for one that is not there."""
    out: list[tuple[int, int, int] | None] = []
    for name in RECORDED_FROM:
        try:
            st = (directory / name).lstat()
        except FileNotFoundError:
            out.append(None)
        else:
            out.append((st.st_ino, st.st_size, st.st_mtime_ns))
    return tuple(out)


def read_ahead(root: Path, before: dict[str, Ahead]) -> dict[str, Ahead]:
    """The records of the exited terminals under `root` whose files are quiet, by terminal id; those of
    `before` whose files have not changed are kept as they are. What cannot be read is left to the start.
    Blocking: call it in a thread."""
    out: dict[str, Ahead] = {}
    try:
        directories = list(root.iterdir())
    except OSError:  # (no terminal yet; or none readable: the start says why)
        return out
    for directory in directories:
        with contextlib.suppress(OSError):
            if directory.is_symlink():
                continue
            now = stamp(directory)
            kept = before.get(directory.name)
            if kept is not None and kept.stamp == now:
                out[directory.name] = kept
                continue
            quiet = time.time_ns() - int(QUIET_S * 1e9)
            if now[0] is None or any(part is not None and part[2] > quiet for part in now):
                continue
            with contextlib.suppress(Exception):  # (damaged files: the start says how)
                meta = load_meta(directory)
                if meta.status == "exited" and meta.id == directory.name:
                    record = recorded(directory, meta)
                    if stamp(directory) == now:  # (not changed while it was read)
                        out[directory.name] = Ahead(now, record)
    return out


def records_at_start(root: Path, ahead: dict[str, Ahead]) -> tuple[dict[str, Dormant], list[Path]]:
    """At start: the records of `ahead` whose files have not changed since they were read, and the directories
    under `root` of the other terminals (those with a meta.json), to read now; a symbolic link is skipped (lookout
    follows none in its data dir), with a warning. Blocking."""
    true = {}
    for terminal_id, kept in ahead.items():
        with contextlib.suppress(OSError):
            if stamp(root / terminal_id) == kept.stamp:
                true[terminal_id] = kept.record
    others = []
    for directory in sorted(root.iterdir()):
        if directory.is_symlink():
            log.warning("skipping terminal %s: it is a symbolic link, and lookout does not follow links in its data dir; "
                        "remove it", directory.name)  # fmt: skip
        elif directory.name not in true and (directory / "meta.json").is_file():
            others.append(directory)
    return true, others
