"""A terminal's screen at any moment of its journal: the newest engine checkpoint at or before that offset,
then a replay of the journal's tail (with its resizes) up to it, and the title as the side scanner reads it
from the same bytes (checkpoints keep the title they were taken with).

Checkpoints are taken every CHECKPOINT_BYTES of output and all are kept (lookout.terminal.screen.model), so any
moment is at most CHECKPOINT_BYTES of replay away: a few tens of ms (bench/terminal_replay.py). Blocking:
call it in a worker. An engine that fails all the same (sizes are checked where they enter) is a
BackendFailure that says so: that answer fails, or the terminal being adopted is `lost`; never the daemon.
"""

from __future__ import annotations

import bisect
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from lookout.core.errors import BackendFailure, BadInput, Gone, LookoutError
from lookout.terminal.journal.persistence import TerminalMeta, latest_checkpoint
from lookout.terminal.journal.reader import IndexEntry, raw_size, read_kind, read_raw, resize_of, stored_from
from lookout.terminal.screen.engines import create_engine
from lookout.terminal.screen.engines.base import ScreenEngine
from lookout.terminal.screen.scanner import SideScanner, TitleChanged
from lookout.terminal.screen.skip_ahead import plan_feed

REPLAY_CHUNK = 1 << 20


@dataclass(frozen=True, slots=True)
class PastScreen:
    engine: ScreenEngine
    title: str
    offset: int
    replayed: int
    """Bytes replayed after the checkpoint (the cost of this answer)."""
    scrollback_from: int | None = None
    """Where a replay that also gives the scrollback starts, when this one started from a nearer checkpoint
    (`screen_at`'s `near`): its screen is the same, its scrollback holds only what the shorter replay gave."""


def screen_at(
    directory: Path,
    meta: TerminalMeta,
    offset: int,
    scrollback: int,
    start: int | None = None,
    *,
    near: dict[str, Any] | None = None,
) -> PastScreen:
    """The screen after the first `offset` bytes of output (0 <= offset <= the journal's size), replayed from
    the newest checkpoint at or before `start` (default: `offset`; earlier gives more lines of scrollback), or
    from `near`, a checkpoint record kept elsewhere (screen.snapshot.json's), when it is nearer: then the
    answer's `scrollback_from` says where the replay that gives the scrollback too would have started.
    Gone when the records it needs are not there: output before where a journal range starts (a replay
    archive holds the journal from a checkpoint on), or a resize record of a size no terminal has."""
    size = raw_size(directory)
    if offset < 0 or offset > size:
        raise BadInput(f"at={offset} is outside the output (0..{size})", field="at")
    first = stored_from(directory)
    if offset < first:
        raise Gone(f"the output before offset {first} is not stored here (this journal is a range from an archive): "
                   f"the screen at {offset} cannot be rebuilt")  # fmt: skip
    cp = latest_checkpoint(directory, offset if start is None else min(start, offset))
    scrollback_from = None
    if near is not None and near["offset"] <= offset and near["offset"] > (cp["offset"] if cp is not None else 0):
        scrollback_from, cp = (int(cp["offset"]) if cp is not None else 0), near
    entries = read_kind(directory, "r", int(cp["offset"]) if cp is not None else 0)  # the resizes replayed through
    if first and (cp is None or int(cp["offset"]) < first):
        raise Gone(f"no checkpoint between offset {first}, where the stored output starts, and {offset}: the screen "
                   "cannot be rebuilt")  # fmt: skip
    with _engine_failures(meta, offset):
        past = _rebuild(directory, meta, entries, cp, offset, scrollback)
    return replace(past, scrollback_from=scrollback_from)


def advance(directory: Path, meta: TerminalMeta, past: PastScreen, offset: int, scrollback: int) -> PastScreen:
    """`past` brought on to the screen after the first `offset` bytes of output (at or after `past.offset`),
    replaying the journal (with its resizes) from where it stands; its engine is changed. Blocking, as
    `screen_at`."""
    entries = read_kind(directory, "r", past.offset)
    with _engine_failures(meta, offset):
        title = _replay_through(directory, past.engine, entries, past.offset, offset, past.title, scrollback)
    return replace(past, title=title, offset=offset, replayed=past.replayed + offset - past.offset)


@contextmanager
def _engine_failures(meta: TerminalMeta, offset: int) -> Iterator[None]:
    """An engine that fails on the bytes replayed: a BackendFailure that says so (this answer fails, never the
    daemon); the journal's own errors go through as they are."""
    try:
        yield
    except (OSError, LookoutError):
        raise
    except Exception as exc:
        raise BackendFailure(f"the {meta.engine} screen engine failed while rebuilding the screen at offset "
                             f"{offset}: {type(exc).__name__}: {str(exc)[:200]}") from exc  # fmt: skip


def _rebuild(
    directory: Path,
    meta: TerminalMeta,
    entries: list[IndexEntry],
    cp: dict[str, Any] | None,
    offset: int,
    scrollback: int,
) -> PastScreen:
    if cp is not None:
        engine = create_engine(meta.engine, cp["cols"], cp["rows"], scrollback)
        engine.restore(cp["dump"], cp.get("kept") or {})
        pos, title = int(cp["offset"]), str(cp.get("title") or "")
    else:
        cols, rows = _first_size(entries, meta)
        engine = create_engine(meta.engine, cols, rows, scrollback)
        pos, title = 0, ""
    title = _replay_through(directory, engine, entries, pos, offset, title, scrollback)
    return PastScreen(engine, title, offset, offset - pos)


def _replay_through(
    directory: Path, engine: ScreenEngine, entries: list[IndexEntry], pos: int, offset: int, title: str, keep: int
) -> str:
    """Feed the journal from `pos` to `offset`, resizing where the resize records among `entries` say; the
    title then."""
    scanner = SideScanner()
    for entry in entries:
        if entry.offset < pos or entry.offset > offset:
            continue
        title = _replay(directory, engine, scanner, pos, entry.offset, title, keep)
        pos = entry.offset
        cols, rows = resize_of(entry)
        if (cols, rows) != (engine.cols, engine.rows):
            engine.resize(cols, rows)
    return _replay(directory, engine, scanner, pos, offset, title, keep)


def offset_at(directory: Path, meta: TerminalMeta, when: float) -> int:
    """The journal offset reached at Unix time `when`: the end of the output written by then. BadInput for a
    time before the terminal existed."""
    if when < meta.created_at:
        raise BadInput(f"at_time is before the terminal was created ({meta.created_at:.3f})", field="at_time")
    outputs = [e for e in read_kind(directory, "o") if type(e.value) is int]
    elapsed = when - meta.created_at
    i = bisect.bisect_right([e.t for e in outputs], elapsed)
    if i == len(outputs):
        return raw_size(directory)
    return outputs[i - 1].offset + int(outputs[i - 1].value) if i else 0


def _first_size(entries: list[IndexEntry], meta: TerminalMeta) -> tuple[int, int]:
    first = next((e for e in entries if e.kind == "r"), None)
    return (meta.cols, meta.rows) if first is None else resize_of(first)


def _replay(
    directory: Path, engine: ScreenEngine, scanner: SideScanner, start: int, stop: int, title: str, keep: int
) -> str:
    """Feed the journal from `start` to `stop` (keeping `keep` lines of scrollback right); the title then."""
    pos = start
    while pos < stop:
        chunk = read_raw(directory, pos, min(REPLAY_CHUNK, stop - pos))
        if not chunk:
            break
        for piece in plan_feed(chunk, engine.rows + keep + 1):  # what nobody could see is skipped, as live
            engine.feed(piece)
        for event in scanner.feed(chunk):
            if isinstance(event, TitleChanged):
                title = event.title
        pos += len(chunk)
    return title
