"""A terminal's files besides the journal: meta.json, screen.snapshot.json, events.jsonl and engine
checkpoints (a screen is rebuilt from them by app.terminal.replay)."""

from __future__ import annotations

import asyncio
import logging
import os
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from app.core.private_files import make_dir
from app.core.storage import append_jsonl, atomic_write_json, read_json
from app.terminal.holder.sizes import size_error

log = logging.getLogger(__name__)


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

    @property
    def journal_epoch(self) -> float:
        """The Unix time index times count from."""
        return self.journal_started_at if self.journal_started_at is not None else self.created_at

    ended_by: str | None = None
    """The stop ladder's signal after which the program ended (`SIGHUP`...), when lookout ended it."""
    program_start: str | None = None
    """What tells the program's process from a later one given the same pid: `<boot id>:<its start in clock
    ticks after boot>` (app.terminal.session_ladder), read when it started; None for terminals of earlier
    versions."""

    def to_json(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_json(cls, data: Any) -> TerminalMeta:
        """The meta of a terminal's meta.json; ValueError says what in it lookout never writes."""
        if not isinstance(data, dict):
            raise ValueError("meta.json is not a JSON object")
        known = {k: data[k] for k in cls.__dataclass_fields__ if k in data}
        if (why := size_error(known.get("cols"), known.get("rows"))) is not None:
            raise ValueError(f"meta.json: {why}")
        for name, value in known.items():
            if name in _FIELD_CHECKS and not _FIELD_CHECKS[name](value):
                raise ValueError(f"meta.json: {name} {str(value)[:80]!r} is not what lookout writes there")
        try:
            return cls(**known)
        except TypeError as exc:  # a field missing
            raise ValueError(f"meta.json: {exc}") from None


def _text(value: Any) -> bool:
    return isinstance(value, str)


def _time(value: Any) -> bool:
    return type(value) in (int, float) and 0 <= value < 1e11


def _optional(check: Callable[[Any], bool]) -> Callable[[Any], bool]:
    return lambda value: value is None or check(value)


_FIELD_CHECKS: dict[str, Callable[[Any], bool]] = {
    "id": _text, "name": _text, "command": _text, "cwd": _text, "engine": _text,
    "argv": lambda value: isinstance(value, list) and all(isinstance(arg, str) for arg in value),
    "shell": lambda value: isinstance(value, bool), "shell_integration": lambda value: isinstance(value, bool),
    "created_at": _time, "ended_at": _optional(_time), "journal_started_at": _optional(_time),
    "pid": _optional(lambda value: type(value) is int and value > 1),
    "status": lambda value: value in ("running", "exited", "lost"),
    "exit_code": _optional(lambda value: type(value) is int),
    "lost_reason": _optional(_text), "ended_by": _optional(_text), "program_start": _optional(_text),
}  # fmt: skip
"""What each field of meta.json may hold (its size: app.terminal.holder.sizes)."""


class GuardedWrites:
    """Writes on the loop that a full disk may refuse: the session goes on, and `failure` says what its
    files miss (the first failure is logged)."""

    def __init__(self, terminal_id: str) -> None:
        self._terminal_id = terminal_id
        self.failure: str | None = None

    def __call__(self, name: str, write: Callable[..., None], *args: Any) -> None:
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
    """The terminal's meta.json; ValueError (OSError when it cannot be read) says what is wrong with it."""
    meta = TerminalMeta.from_json(read_json(directory / "meta.json"))
    if meta.id != directory.name:
        raise ValueError(f"meta.json: its id {meta.id[:80]!r} is not its directory's name")
    return meta


def append_event(directory: Path, event: dict[str, Any]) -> None:
    append_jsonl(directory / "events.jsonl", {"ts": time.time(), **event})


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


def load_snapshot(directory: Path) -> dict[str, Any] | None:
    try:
        return read_json(directory / "screen.snapshot.json")
    except (FileNotFoundError, ValueError):
        return None


def save_checkpoint(
    directory: Path, offset: int, cols: int, rows: int, dump: str, kept: dict[str, Any], title: str
) -> None:
    """Store an engine dump and kept state (ScreenEngine.kept_state) taken at journal `offset` (with the title
    then). All are kept: each is a few KB (a dump holds the view, not the scrollback) and they bound the
    replay to any moment (app.terminal.replay)."""
    folder = directory / "checkpoints"
    make_dir(folder)
    record = {"offset": offset, "cols": cols, "rows": rows, "dump": dump, "kept": kept, "title": title}
    atomic_write_json(folder / f"{offset:016d}.json", record)


@dataclass(frozen=True, slots=True)
class Checkpoint:
    """An engine's dump and kept state taken at journal `offset`, at `cols` x `rows`, with the title then."""

    offset: int
    cols: int
    rows: int
    dump: str
    kept: dict[str, Any]
    title: str

    @classmethod
    def from_json(cls, record: Any, offset: int) -> Checkpoint:
        """A checkpoint file's record, named for `offset`; ValueError says what in it lookout never writes."""
        if not isinstance(record, dict) or record.get("offset") != offset:
            raise ValueError("it is not the checkpoint its name says")
        cols, rows, dump, kept = record.get("cols"), record.get("rows"), record.get("dump"), record.get("kept") or {}
        if (why := size_error(cols, rows)) is not None:
            raise ValueError(why)
        if not isinstance(dump, str) or not isinstance(kept, dict):
            raise ValueError("its dump or kept state is not what an engine writes")
        assert isinstance(cols, int) and isinstance(rows, int)
        return cls(offset, cols, rows, dump, kept, str(record.get("title") or ""))


def latest_checkpoint(directory: Path, upto: int) -> Checkpoint | None:
    """The newest checkpoint taken at or before journal offset `upto` (found by its file name, the offset:
    only that file is read, however many there are). One that cannot be read, or holds what lookout never
    writes (a size out of range...), is passed over for an earlier one (logged): a checkpoint only saves
    replaying the journal, so an earlier one gives the same screen."""
    try:
        names = [entry.name for entry in os.scandir(directory / "checkpoints")]
    except FileNotFoundError:
        return None
    offsets = sorted((int(name[:-5]) for name in names if name.endswith(".json") and name[:-5].isdigit()), reverse=True)
    for offset in offsets:
        if offset > upto:
            continue
        path = directory / "checkpoints" / f"{offset:016d}.json"
        try:
            return Checkpoint.from_json(read_json(path), offset)
        except FileNotFoundError:
            continue
        except (OSError, ValueError) as exc:
            log.warning("checkpoint %s passed over: %s", path, exc)
    return None
