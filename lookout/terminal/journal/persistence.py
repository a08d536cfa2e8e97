"""A terminal's files besides the journal: meta.json, screen.snapshot.json, events.jsonl and engine
checkpoints (a screen is rebuilt from them by lookout.terminal.screen.replay)."""

from __future__ import annotations

import asyncio
import logging
import os
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from lookout.core.ids import SAFE_ID
from lookout.core.private_files import make_dir
from lookout.core.storage import append_jsonl, atomic_write_json, read_json
from lookout.terminal.holder.sizes import check_size

log = logging.getLogger(__name__)

MAX_RECORD_BYTES = 32 << 20
"""meta.json and a checkpoint are a few KB (a checkpoint holds the view: a 1000x500 screen in every colour is
a few MB); a larger one is not read."""


@dataclass(slots=True)
class TerminalMeta:
    id: str
    name: str
    command: str
    argv: list[str]
    cwd: str
    cols: int
    rows: int
    engine: str
    shell: bool
    created_at: float = field(default_factory=time.time)
    pid: int | None = None
    status: str = "running"
    exit_code: int | None = None
    ended_at: float | None = None
    shell_integration: bool = False
    lost_reason: str | None = None
    """Why a `lost` terminal is lost (its holder ended without recording an exit, could not be trusted...)."""
    journal_started_at: float | None = None
    """The Unix time of the journal's t = 0 (its holder's start), as the holder said; index times count from
    it (terminals of earlier versions: None, and `created_at` stands in)."""
    ended_by: str | None = None
    """The stop ladder's signal after which the program ended (`SIGHUP`...), when lookout ended it."""
    program_start: str | None = None
    """What tells the program's process from a later one given the same pid: `<boot id>:<its start in clock
    ticks after boot>` (lookout.terminal.process.ladder), read when it started; None for terminals of earlier
    versions."""

    @property
    def journal_epoch(self) -> float:
        """The Unix time index times count from."""
        return self.journal_started_at if self.journal_started_at is not None else self.created_at

    def to_json(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> TerminalMeta:
        """ValueError (or TypeError) for a record that is not a terminal's, or whose size no terminal has."""
        known = {k: data[k] for k in cls.__dataclass_fields__ if k in data}
        for name, value in known.items():
            if name in _FIELD_CHECKS and not _FIELD_CHECKS[name](value):
                raise ValueError(f"meta.json: {name} {str(value)[:80]!r} is not what lookout writes there")
        meta = cls(**known)
        check_size(meta.cols, meta.rows)
        if not isinstance(meta.id, str) or not SAFE_ID.fullmatch(meta.id) or ".." in meta.id:
            raise ValueError(f"{meta.id!r} is not a terminal id")
        return meta


def _text(value: Any) -> bool:
    return isinstance(value, str)


def _time(value: Any) -> bool:
    return type(value) in (int, float) and 0 <= value < 1e11


def _optional(check: Callable[[Any], bool]) -> Callable[[Any], bool]:
    return lambda value: value is None or check(value)


_FIELD_CHECKS: dict[str, Callable[[Any], bool]] = {
    "name": _text, "command": _text, "cwd": _text, "engine": _text,
    "argv": lambda value: isinstance(value, list) and all(isinstance(arg, str) for arg in value),
    "shell": lambda value: isinstance(value, bool), "shell_integration": lambda value: isinstance(value, bool),
    "created_at": _time, "ended_at": _optional(_time), "journal_started_at": _optional(_time),
    "pid": _optional(lambda value: type(value) is int and value > 0),
    "status": lambda value: value in ("running", "exited", "lost"),
    "exit_code": _optional(lambda value: type(value) is int),
    "lost_reason": _optional(_text), "ended_by": _optional(_text), "program_start": _optional(_text),
}  # fmt: skip
"""What the fields of meta.json may hold besides its id and size (a pid is a positive integer)."""


class GuardedWrites:
    """Writes on the loop that a full disk may refuse: the session goes on, and `failure` says what its
    files miss (the first failure is logged)."""

    def __init__(self, terminal_id: str) -> None:
        self._terminal_id = terminal_id
        self.failure: str | None = None
        self.released = False
        """Another daemon has taken the terminal over: nothing is written here any more."""

    def __call__(self, name: str, write: Callable[..., object], *args: Any) -> None:
        if self.released:
            return
        try:
            write(*args)
        except OSError as exc:
            if self.failure is None:
                log.error("terminal %s: writing %s failed: %s", self._terminal_id, name, exc.strerror)
            self.failure = f"writing {name} failed: {exc.strerror}"


def in_background(write: Callable[..., None], *args: Any) -> asyncio.Future[None]:
    """Run blocking file work in the default executor, logging (never raising) its failure; the future says
    when it has ended."""

    def done(future: asyncio.Future[None]) -> None:
        if future.exception() is not None:
            log.error("%s failed: %s", write.__name__, future.exception())

    future = asyncio.get_running_loop().run_in_executor(None, write, *args)
    future.add_done_callback(done)
    return future


def save_meta(directory: Path, meta: TerminalMeta) -> None:
    atomic_write_json(directory / "meta.json", meta.to_json())


def load_meta(directory: Path) -> TerminalMeta:
    """ValueError or TypeError when meta.json is not a terminal's record (see TerminalMeta.from_json), or not
    the record of the terminal whose directory it is in."""
    meta = TerminalMeta.from_json(read_json(directory / "meta.json", MAX_RECORD_BYTES))
    if meta.id != directory.name:
        raise ValueError(f"meta.json is terminal {meta.id}'s record, in the directory of {directory.name}")
    return meta


def append_event(directory: Path, event: dict[str, Any]) -> None:
    append_jsonl(directory / "events.jsonl", event_record(event))


def save_end(writes: GuardedWrites, directory: Path, meta: TerminalMeta, event: dict[str, Any]) -> None:
    """A terminal's end: its meta.json, then its event in events.jsonl, through `writes` (blocking: a worker
    thread's work, lookout.terminal.screen.model.ScreenModel.close)."""
    writes("meta.json", save_meta, directory, meta)
    writes("events.jsonl", append_event, directory, event)


def event_record(event: dict[str, Any]) -> dict[str, Any]:
    """A line of events.jsonl: the event, and when."""
    return {"ts": time.time(), **event}


def record_size(writes: GuardedWrites, directory: Path, meta: TerminalMeta, cols: int, rows: int) -> None:
    """The terminal took a size: meta.json and events.jsonl say so (through `writes`), unless it had it."""
    if (meta.cols, meta.rows) != (cols, rows):
        meta.cols, meta.rows = cols, rows
        writes("meta.json", save_meta, directory, meta)
        writes("events.jsonl", append_event, directory, {"type": "resized", "cols": cols, "rows": rows})


def save_last_input(directory: Path, origin: dict[str, Any]) -> None:
    """Where the last input went (what a wait without `since` starts from), kept across restarts."""
    atomic_write_json(directory / "last_input.json", origin)


def load_last_input(directory: Path) -> dict[str, Any] | None:
    try:
        data = read_json(directory / "last_input.json")
    except (OSError, ValueError):
        return None
    return data if isinstance(data, dict) else None


def save_snapshot(directory: Path, snapshot: dict[str, Any]) -> None:
    atomic_write_json(directory / "screen.snapshot.json", snapshot)


@dataclass(frozen=True)
class SavedScreen:
    """What screen.snapshot.json gives a later daemon to take its terminal up from (written by the screen model
    with the session's ingest state); a field missing or not of its kind is its default."""

    raw_offset: int | None = 0
    """The journal offset the saved screen reflects; None when the file names something that is not one."""
    title: str = ""
    bracketed_paste: bool = False
    cwd: str | None = None
    blocks: dict[str, Any] = field(default_factory=dict)
    """The block tracker's state (BlockTracker.restore)."""
    checkpoint: dict[str, Any] | None = None
    """A checkpoint (`checkpoint_record`) taken with the snapshot, at or just before `raw_offset`: a restart
    replays the journal from there instead of from the last one kept in checkpoints/ (up to CHECKPOINT_BYTES
    earlier). None when the snapshot has none or one that cannot be used."""

    @property
    def forged(self) -> int:
        """How many forged marks were counted (0 when the count is not one)."""
        forged = self.blocks.get("forged", 0)
        return forged if type(forged) is int and forged >= 0 else 0


def load_snapshot(directory: Path) -> SavedScreen:
    """The saved screen's state; the defaults when there is none or it is not JSON."""
    try:
        saved = read_json(directory / "screen.snapshot.json")
    except (FileNotFoundError, ValueError):
        return SavedScreen()
    if not isinstance(saved, dict):
        return SavedScreen()
    offset, title, cwd, blocks = (saved.get(key) for key in ("raw_offset", "title", "cwd", "blocks"))
    if not isinstance(blocks, dict):  # written before the tracker's state was kept: its forged count only
        blocks = {"forged": saved.get("forged_marks", 0)}
    raw_offset = offset if type(offset) is int and offset >= 0 else None if "raw_offset" in saved else 0
    checkpoint = saved.get("checkpoint")
    return SavedScreen(
        raw_offset=raw_offset,
        title=title if isinstance(title, str) else "",
        bracketed_paste=saved.get("bracketed_paste") is True,
        cwd=cwd if isinstance(cwd, str) else None,
        blocks=blocks,
        checkpoint=checkpoint if raw_offset is not None and _usable(checkpoint, upto=raw_offset) else None,
    )


def checkpoint_record(offset: int, cols: int, rows: int, dump: str, kept: dict[str, Any], title: str) -> dict[str, Any]:
    """A checkpoint as it is stored: an engine's dump and kept state (ScreenEngine.kept_state) taken at journal
    `offset`, with the title then."""
    return {"offset": offset, "cols": cols, "rows": rows, "dump": dump, "kept": kept, "title": title}


def _usable(cp: Any, *, upto: int, offset: int | None = None) -> bool:
    """Whether `cp` is a checkpoint record a replay can start from: at or before `upto` (at `offset` when given),
    with a dump, of a size a terminal can have."""
    if not isinstance(cp, dict) or type(cp.get("offset")) is not int or not isinstance(cp.get("dump"), str):
        return False
    if not isinstance(cp.get("kept") or {}, dict):
        return False
    if not 0 <= cp["offset"] <= upto or (offset is not None and cp["offset"] != offset):
        return False
    try:
        check_size(cp.get("cols"), cp.get("rows"))
    except ValueError:
        return False
    return True


def save_checkpoint(
    directory: Path, offset: int, cols: int, rows: int, dump: str, kept: dict[str, Any], title: str
) -> None:
    """Store an engine dump and kept state (ScreenEngine.kept_state) taken at journal `offset` (with the title
    then). All are kept: each is a few KB (a dump holds the view, not the scrollback) and they bound the
    replay to any moment (lookout.terminal.screen.replay)."""
    folder = directory / "checkpoints"
    make_dir(folder)
    atomic_write_json(folder / f"{offset:016d}.json", checkpoint_record(offset, cols, rows, dump, kept, title))


def latest_checkpoint(directory: Path, upto: int) -> dict[str, Any] | None:
    """The newest checkpoint taken at or before journal offset `upto` (found by its file name, the offset:
    only that file is read, however many there are). One that cannot be used (unreadable, larger than
    MAX_RECORD_BYTES, of a size no terminal has) is passed over for the one before."""
    try:
        names = [entry.name for entry in os.scandir(directory / "checkpoints")]
    except FileNotFoundError:
        return None
    offsets = sorted((int(name[:-5]) for name in names if name.endswith(".json") and name[:-5].isdigit()), reverse=True)
    for offset in offsets:
        if offset > upto:
            continue
        try:
            cp = read_json(directory / "checkpoints" / f"{offset:016d}.json", MAX_RECORD_BYTES)
        except (OSError, ValueError):
            continue
        if _usable(cp, upto=upto, offset=offset):
            return cp
    return None
