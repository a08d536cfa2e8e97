"""How long exited terminals' files are kept, so the data dir (and a restart that reads it) stays bounded.

Only terminals whose program has exited are ever pruned (never a running or a `lost` one: its program may still
run). Three limits, each off when 0: an age (since the program ended), a count and a total size. The newest
ended are kept first; a terminal is pruned when it ended longer ago than the age, or when keeping it would
pass the count or the size. The daemon applies them PRUNE_FIRST_S after its start (once it has adopted the
terminals of the run before: measuring every exited terminal's size competed with a take-over for the CPU) and
every PRUNE_EVERY_S after; `lookout prune` and `POST /v1/terminals/prune` apply them now (`dry_run` says what
would go).
"""

from __future__ import annotations

import os
import shutil
from dataclasses import dataclass
from pathlib import Path

from lookout.terminal.journal.persistence import load_meta

PRUNE_FIRST_S = 60.0
PRUNE_EVERY_S = 3600.0


@dataclass(frozen=True, slots=True)
class Retention:
    max_age_s: float
    """0: no limit."""
    max_count: int
    max_bytes: int

    def describe(self) -> dict[str, float | int]:
        return {"max_age_days": self.max_age_s / 86400, "max_count": self.max_count, "max_mb": self.max_bytes >> 20}


@dataclass(frozen=True, slots=True)
class Ended:
    """An exited terminal's files: its id, when its program ended, and how many bytes they take."""

    id: str
    ended_at: float
    size: int


def to_prune(ended: list[Ended], now: float, keep: Retention) -> list[tuple[Ended, str]]:
    """The terminals `keep` does not keep, each with the limit that prunes it, oldest first (pure)."""
    kept_count, kept_bytes = 0, 0
    out: list[tuple[Ended, str]] = []
    for terminal in sorted(ended, key=lambda t: t.ended_at, reverse=True):
        if keep.max_age_s and now - terminal.ended_at > keep.max_age_s:
            out.append((terminal, f"ended more than {keep.max_age_s / 86400:g} days ago"))
        elif keep.max_count and kept_count >= keep.max_count:
            out.append((terminal, f"more than {keep.max_count} exited terminals"))
        elif keep.max_bytes and kept_bytes + terminal.size > keep.max_bytes:
            out.append((terminal, f"exited terminals' files over {keep.max_bytes >> 20} MB"))
        else:
            kept_count, kept_bytes = kept_count + 1, kept_bytes + terminal.size
    return out[::-1]


def size_of(directory: Path) -> int:
    """The bytes of the files under `directory` (links are not followed)."""
    total = 0
    for top, _dirs, files in os.walk(directory):
        for name in files:
            try:
                total += os.lstat(os.path.join(top, name)).st_size
            except OSError:
                pass
    return total


def prune_files(root: Path, keep: Retention, now: float, dry_run: bool = False) -> list[tuple[Ended, str]]:
    """`lookout prune` with no daemon (its caller holds the data dir's lock): the exited terminals under `root`
    (meta.json says so) that `keep` does not keep, removed unless `dry_run`."""
    ended = []
    for directory in sorted(root.iterdir()) if root.is_dir() else []:
        if directory.is_symlink() or not (directory / "meta.json").is_file():
            continue
        try:
            meta = load_meta(directory)
        except (OSError, ValueError, TypeError):
            continue  # unreadable: lookout does not know it ended
        if meta.status == "exited":
            ended.append(Ended(meta.id, meta.ended_at or meta.created_at, size_of(directory)))
    chosen = to_prune(ended, now, keep)
    for terminal, _why in chosen if not dry_run else ():
        shutil.rmtree(root / terminal.id, ignore_errors=True)
    return chosen
