"""A terminal's screen model: its screen engine, fed lazily (lookout.terminal.screen.lazy_feed), the rows changed since
the last delta, the deltas (lookout.terminal.journal.deltas) with their rate limit and listeners, layered views built in
worker threads, and the snapshot and checkpoints that keep the screen readable after a restart.

The engine is changed (fed, resized) on the loop under `lock`, which a worker thread also holds while it
copies a view of the engine.
"""

from __future__ import annotations

import asyncio
import threading
import time
from collections import OrderedDict
from collections.abc import Callable
from functools import partial
from pathlib import Path
from typing import Any

from lookout.core.workers import BoundedPool
from lookout.terminal.journal import persistence as files
from lookout.terminal.journal.deltas import (
    MIN_INTERVAL_S,
    SCREEN_DELTAS,
    UNWATCHED_INTERVAL_S,
    Delta,
    DeltaLog,
    DeltaPage,
    Throttle,
)
from lookout.terminal.journal.persistence import GuardedWrites, TerminalMeta, in_background
from lookout.terminal.journal.reader import raw_size, read_raw
from lookout.terminal.screen.cell_layers import CELL_LAYERS, CellLayers
from lookout.terminal.screen.engines import create_engine
from lookout.terminal.screen.engines.base import ScreenEngine
from lookout.terminal.screen.layers import ScreenData, ViewOptions, render
from lookout.terminal.screen.lazy_feed import LazyFeed
from lookout.terminal.screen.replay import PastScreen, advance, offset_at, screen_at
from lookout.terminal.screen.sequence_boundary import cut_before
from lookout.terminal.screen.view import row_texts, screen_data, snapshot

DELTA_STYLE_LAYERS = ("fgColors", "bgColors", "styles")
RENDERS = BoundedPool("screens", 2)
"""Layered views are built in these threads (a 1000x500 screen with every cell layer is seconds of CPU):
the event loop stays free, and more big renders at once wait their turn."""
ON_LOOP_CELLS = 10_000
"""A view of the text and cursor alone, of a screen of at most this many cells (200x50) without scrollback, is built
on the loop (0.2 ms at most): handing it to a worker took eight times that (1.6 ms, the median, with 100 busy
terminals followed), as much as the holder's sync before it."""
SNAPSHOT_INTERVAL_S = 1.0
"""screen.snapshot.json is rewritten at most this often while output comes (and at exit, stop and hand-over): it
says where a later daemon takes the terminal up from (the journal after it is replayed); its rewrites were the
largest cost of following busy terminals (at 0.25 s, 40% of following 100 that each print a line every 20 ms)."""
DORMANT_KEPT = 32
"""Dormant screens (of terminals not followed: exited, lost) kept loaded after an answer, the last used."""
_DORMANT: OrderedDict[ScreenModel, None] = OrderedDict()
CHECKPOINT_BYTES = 512 << 10
"""Output between two engine checkpoints: the most any moment's screen is replayed (lookout.terminal.screen.replay)."""
CATCH_UP_ON_LOOP = 64 << 10
"""Output a rebuilt screen may still need to be fed on the loop when it takes the live one's place (`_deepen`)."""

DeltaListener = Callable[[dict[str, Any]], None]
Dump = tuple[int, int, str, dict[str, Any], str]
"""What a checkpoint stores of the screen besides its offset: columns, rows, the engine's dump and kept state, the
title (lookout.terminal.journal.persistence.checkpoint_record)."""


class ScreenModel:
    """The screen of one terminal. `offset` is the journal offset the screen reflects once what was given to
    `feed` is fed; `title` and `bracketed_paste` are set by the ingest (they are screen state, as in tmux)."""

    def __init__(
        self,
        directory: Path,
        meta: TerminalMeta,
        scrollback: int,
        *,
        offset: int,
        writes: GuardedWrites,
        ingest_state: Callable[[], dict[str, Any]],
    ) -> None:
        """`ingest_state`: what the ingest stores with each snapshot (see lookout.terminal.screen.view.snapshot)."""
        self.directory = directory
        self.scrollback = scrollback
        self.offset = offset
        self.title = ""
        self.bracketed_paste = False
        self.engine: ScreenEngine | None = None
        """None until `start` (a live terminal) or `load` (a dormant one, rebuilt from its files)."""
        self.lock = threading.Lock()
        """Held while the engine changes (feed, resize) and while a worker thread copies a view of it."""
        self._fed = (offset, "")
        """The journal offset and title the engine reflects, set with it under `lock` (a worker's copy reads them
        with it: `view`)."""
        self._meta = meta
        self._writes = writes
        self._ingest_state = ingest_state
        self._pending = LazyFeed(meta.engine)
        self._dirty: set[int] = set()
        self._resized = False
        self._deltas = DeltaLog(directory)
        self._throttle = Throttle(MIN_INTERVAL_S, time.monotonic)
        self._delta_due: asyncio.Handle | None = None
        self._listeners: set[Callable[[Delta], None]] = set()
        self._snapshot_due: asyncio.TimerHandle | None = None
        self._last_snapshot = 0.0
        self._snapshots = 0
        """How many snapshots were taken; each is stored unless a later one already is (`_store_snapshot`)."""
        self._snapshot_stored = 0
        self._snapshot_lock = threading.Lock()
        self._writing: set[asyncio.Future[None]] = set()
        self._since_checkpoint = 0
        self._dormant = False
        """Its engine was rebuilt from its files for an answer (`load`): it may be let go again."""
        self.good_cut = 0
        """The offset of the last checkpoint (or of the one the screen was rebuilt from): a clean cut of the
        stream, from which the next checkpoint's is found."""
        self._scrollback_from: int | None = None
        """The screen was taken up from a checkpoint near the journal's end (a restart: `take_up`), whose
        replay gave only part of the scrollback: the first answer that asks for scrollback rebuilds it from
        this offset's checkpoint (`_deepen`)."""
        self._deepening = asyncio.Lock()

    def start(self) -> None:
        """A fresh screen for a live terminal, of the size in its meta."""
        self.engine = create_engine(self._meta.engine, self._meta.cols, self._meta.rows, self.scrollback)

    async def load(self, deep: bool = False) -> ScreenEngine:
        """The engine, brought up to date; a dormant terminal's is rebuilt from its files, in a thread, and kept
        while it is among the DORMANT_KEPT dormant screens used last (an exited terminal costs the daemon no
        engine until it is asked for, and not for good: 500 exited terminals' screens read once held 190 MB).
        `deep`: with the scrollback a restart's quick take-up left out (`take_up`) rebuilt first."""
        if deep and self._scrollback_from is not None:
            await self._deepen()
        if self.engine is None:
            size = raw_size(self.directory)
            past = await asyncio.to_thread(screen_at, self.directory, self._meta, size, self.scrollback)
            self.take_up(past)
            self._dormant = True
        if self._dormant:
            _DORMANT[self] = None
            _DORMANT.move_to_end(self)
            while len(_DORMANT) > DORMANT_KEPT:
                _DORMANT.popitem(last=False)[0].engine = None
        return self.current()

    @property
    def settled(self) -> bool:
        """No file write is under way or due (the last delta and snapshot are written)."""
        due = (self._delta_due, self._snapshot_due)
        return not self._writing and all(handle is None or handle.cancelled() for handle in due)

    def let_go(self) -> None:
        """Its terminal's session is let go (lookout.terminal.dormant): so is its engine."""
        _DORMANT.pop(self, None)
        self.engine = None

    def take_up(self, past: PastScreen) -> None:
        """Go on from a screen rebuilt from the terminal's files (lookout.terminal.screen.replay). Its first snapshot
        comes SNAPSHOT_INTERVAL_S later, as after any: the one it was rebuilt from is that recent (a start adopting
        100 busy terminals wrote 100 of them meanwhile, in the workers its adoptions read their files in)."""
        self._last_snapshot = time.monotonic()
        self.engine = past.engine
        self.good_cut = past.offset - past.replayed
        self._scrollback_from = past.scrollback_from

    async def _deepen(self) -> None:
        """Put in the live engine's place the same screen replayed from `_scrollback_from`'s checkpoint, with the
        scrollback that replay gives: replayed in a worker up to where the live engine was, then brought on
        (in a worker while much output came meanwhile, the last bytes on the loop) to where it is now."""
        async with self._deepening:
            start, directory, meta, keep = self._scrollback_from, self.directory, self._meta, self.scrollback
            if start is None or self.engine is None:
                return
            live = self.current()
            past = await asyncio.to_thread(screen_at, directory, meta, self.offset, keep, start)
            while self.engine is live and self.offset - past.offset > CATCH_UP_ON_LOOP:
                past = await asyncio.to_thread(advance, directory, meta, past, self.offset, keep)
            if self.engine is not live:  # let go meanwhile: the next load rebuilds it whole
                return
            self.current()  # nothing is left pending for the old engine: the new one takes the rest
            past = advance(directory, meta, past, self.offset, keep)
            with self.lock:
                if (past.engine.cols, past.engine.rows) != (live.cols, live.rows):
                    past.engine.resize(live.cols, live.rows)
                self.engine = past.engine
            self._scrollback_from = None

    # ----------------------------------------------------------------- feeding

    def feed(self, data: bytes, offset: int) -> None:
        """Queue output for the engine (see lookout.terminal.screen.lazy_feed); the journal is at `offset` now."""
        self.offset = offset
        if data and self._pending.push(data):
            self.current()

    def current(self) -> ScreenEngine:
        """The live engine, brought up to date with every byte given to `feed`."""
        engine = self.engine
        assert engine is not None
        pieces, offset = self._pending.take(engine.rows + self.scrollback + 1), self.offset
        if pieces:
            with self.lock:
                for piece in pieces:
                    self._dirty |= engine.feed(piece)
                self._fed = (offset, self.title)
        else:  # nothing was pending: the engine already reflects it
            self._fed = (offset, self.title)
        return engine

    def output_read(self, size: int) -> None:
        """`size` bytes of output were read: a delta is due, and a checkpoint every CHECKPOINT_BYTES."""
        self._schedule_delta()
        self._since_checkpoint += size
        if self._since_checkpoint >= CHECKPOINT_BYTES:
            self.checkpoint()

    def resize(self, cols: int, rows: int) -> None:
        engine = self.current()
        with self.lock:
            engine.resize(cols, rows)
        self._dirty = set(range(rows))
        self._resized = True
        self._schedule_delta()

    def alt_screen(self, fresh: bool = True) -> bool:
        """Whether the alternate screen is on (not before the engine is loaded); `fresh=False` takes it as the
        engine has it, without feeding it the output still pending (until the next delta)."""
        if self.engine is None:
            return False
        return (self.current() if fresh else self.engine).alt_screen

    def text(self) -> str:
        return "\n".join(self.current().text_rows()) if self.engine is not None else ""

    async def view(
        self, options: ViewOptions, *, scrollback: int, changed_rows: set[int] | None,
        extra: Callable[[int], dict[str, Any]],
    ) -> tuple[ScreenData, dict[str, Any] | str]:  # fmt: skip
        """The layered view (lookout.terminal.screen.layers) and its data, `extra(offset)` in its header: `offset` is
        that of the screen copied, by a worker for a big one (1000x500 with scrollback: up to hundreds of ms; output
        fed on the loop while it waited is in the copy), which renders it while output goes on."""
        engine = await self.load()

        def view() -> tuple[ScreenData, dict[str, Any] | str]:
            with self.lock:
                data = copy()
            return data, render(data, options)

        def copy() -> ScreenData:  # with the engine's lock held
            offset, title = self._fed
            at = extra(offset)
            return screen_data(engine, title=title, scrollback=scrollback, changed_rows=changed_rows, extra=at)

        small = not scrollback and engine.cols * engine.rows <= ON_LOOP_CELLS
        if small and set(options.layers).isdisjoint(CELL_LAYERS) and self.lock.acquire(blocking=False):
            try:  # (else a worker holds the engine: the view waits there)
                data = copy()
            finally:
                self.lock.release()
            return data, render(data, options)
        return await RENDERS.run(view)

    async def view_at(self, options: ViewOptions, offset: int | None, when: float | None) -> dict[str, Any] | str:
        """The layered view of the screen as it was after `offset` bytes of output, or at Unix time `when`
        (lookout.terminal.screen.replay), rebuilt and rendered in a worker. The terminal's state then is not known
        (`state` is null); `at` says which offset the answer is and how much was replayed for it."""
        directory, meta = self.directory, self._meta

        def view() -> dict[str, Any] | str:
            at = offset if offset is not None else offset_at(directory, meta, when or 0.0)
            past = screen_at(directory, meta, at, 0)
            extra = {"state": None, "raw_offset": at, "at": {"raw_offset": at, "replayed_bytes": past.replayed}}
            return render(screen_data(past.engine, title=past.title, extra=extra), options)

        return await RENDERS.run(view)

    def hydration(self) -> str:
        """An escape string that repaints the current screen (reset, content, cursor, title, modes) on a fresh
        terminal. The engine must be loaded."""
        engine = self.current()
        parts = ["\x1bc", engine.dump()]
        if self.title:
            parts.append(f"\x1b]2;{self.title}\x07")
        if self.bracketed_paste:
            parts.append("\x1b[?2004h")
        if engine.app_cursor_keys:
            parts.append("\x1b[?1h")
        return "".join(parts)

    # ----------------------------------------------------------------- deltas

    def _delta(self, engine: ScreenEngine, changed: tuple[tuple[int, str], ...], **flags: bool) -> Delta:
        cur = engine.cursor()
        return Delta(
            t=time.time(), cols=engine.cols, rows=engine.rows, changed=changed,
            cursor=(cur.col, cur.row, cur.visible), title=self.title, alt_screen=engine.alt_screen,
            raw_offset=self.offset, **flags,
        )  # fmt: skip

    def _schedule_delta(self) -> None:
        """Emit a delta now if the rate limit allows, else once it does (leading and trailing edge)."""
        if self._delta_due is not None:
            return
        loop = asyncio.get_running_loop()
        self._throttle.interval = MIN_INTERVAL_S if self._listeners else UNWATCHED_INTERVAL_S
        delay = self._throttle.delay()
        if delay == 0:
            self._delta_due = loop.call_soon(self._emit_delta)
        else:
            self._delta_due = loop.call_later(delay, self._emit_delta)

    def open_deltas(self) -> None:
        """Open `screen.jsonl` ahead of the first delta (blocking: see DeltaLog.open)."""
        self._deltas.open()

    def _emit_delta(self) -> None:
        self._delta_due = None
        engine = self.current()
        self._schedule_snapshot()
        if not self._dirty and not self._resized:
            return
        delta = self._delta(engine, row_texts(engine, self._dirty), resized=self._resized)
        self._dirty.clear()
        self._resized = False
        self._writes(SCREEN_DELTAS, self._deltas.append, delta)
        self._throttle.emitted()
        for listener in tuple(self._listeners):
            listener(delta)

    def flush_delta(self) -> None:
        """Write the delta that is waiting for the rate limit now: a reader sees every change so far."""
        if self._delta_due is not None:
            self._delta_due.cancel()
            self._emit_delta()

    def full_delta(self) -> Delta:
        """Every row, as a delta (what a deltas stream starts with). The engine must be loaded."""
        engine = self.current()
        return self._delta(engine, tuple(enumerate(engine.text_rows())), full=True)

    def with_styles(self, delta: Delta) -> dict[str, Any]:
        """`delta` (JSON) plus `fgColors`, `bgColors` and `styles` runs of its changed rows (in the same order)
        with their `colorPalette` and `styleLegend`, read from the screen as it is now."""
        engine = self.current()
        rows = [row for row, _ in delta.changed if row < engine.rows]
        layers = CellLayers(DELTA_STYLE_LAYERS)
        row_cells = engine.frozen_cells() if len(rows) > 1 else engine.row_cells  # one read of the screen
        for row in rows:
            layers.add_row(row_cells(row), 0, engine.cols)
        encoded = layers.encode("runs", lambda runs, cells: runs)
        legends = {"colorPalette": encoded.palette, "styleLegend": encoded.style_legend}
        return {**delta.to_json(), **encoded.layers, **legends}

    def subscribe(self, listener: DeltaListener, styles: bool = False) -> Callable[[], None]:
        """Call `listener` with the JSON of every delta from now on (with `styles`, see `with_styles`); returns
        the unsubscribe function."""
        deliver: Callable[[Delta], None] = (
            (lambda delta: listener(self.with_styles(delta))) if styles else (lambda delta: listener(delta.to_json()))
        )
        self._listeners.add(deliver)
        self.flush_delta()  # the next one is due at the watched rate
        return lambda: self._listeners.discard(deliver)

    def delta_cursor(self) -> int:
        return self._deltas.size()

    async def read_deltas(self, cursor: int, limit: int, max_bytes: int | None = None) -> DeltaPage:
        """Deltas from `cursor` on, the pending one included (the file is read in a thread); see
        DeltaLog.read."""
        self.flush_delta()
        return await asyncio.to_thread(self._deltas.read, cursor, limit, max_bytes)

    async def rows_changed_since(self, cursor: int) -> set[int] | None:
        """Rows changed after delta cursor `cursor` (None: all of them, the size changed), including
        changes not yet written as a delta. The delta log is read in a thread (it may be megabytes)."""
        rows = await asyncio.to_thread(self._deltas.rows_changed_since, cursor)
        if rows is None or self._resized:
            return None
        if self.engine is not None:
            self.current()
            rows |= self._dirty
        return rows

    # ----------------------------------------------------------------- snapshots and checkpoints

    def snapshot(self) -> dict[str, Any]:
        return snapshot(
            self.current(), title=self.title, raw_offset=self.offset, ts=time.time(), **self._ingest_state()
        )

    def _schedule_snapshot(self) -> None:
        """Rewrite screen.snapshot.json at most every SNAPSHOT_INTERVAL_S, always after the last change.
        Called when a delta is due (after every output), so the snapshot is mostly taken right after the
        delta brought the screen model up to date, and costs no second update."""
        if self._snapshot_due is not None:
            return
        delay = max(0.0, self._last_snapshot + SNAPSHOT_INTERVAL_S - time.monotonic())
        if delay == 0:
            self._write_snapshot()
        else:
            self._snapshot_due = asyncio.get_running_loop().call_later(delay, self._write_snapshot)

    def snapshot_now(self) -> None:
        """Write a snapshot now (in the background: see `written`)."""
        if self._snapshot_due is not None:
            self._snapshot_due.cancel()
        self._write_snapshot()

    def _write_snapshot(self) -> None:
        self._snapshot_due = None
        self._last_snapshot = time.monotonic()
        self._snapshots += 1
        taken, dump = self.snapshot(), self._dump(self.current())
        self._in_background("screen.snapshot.json", self._store_snapshot, self._snapshots, taken, dump, self.good_cut)

    def _store_snapshot(self, number: int, snapshot: dict[str, Any], dump: Dump | None = None, good: int = 0) -> None:
        """Write a snapshot unless a later one is stored already (a slow write in the background may end
        after the final one); with a checkpoint of `dump`, the engine's when the snapshot was taken, where the
        stream can be cut at the snapshot's offset or just before it (`good`: a clean cut before; see
        `checkpoint`), so that a restart replays almost nothing (lookout.terminal.journal.persistence.SavedScreen)."""
        if dump is not None:
            cut = cut_before(partial(read_raw, self.directory), snapshot["raw_offset"], good)
            if cut is not None:
                snapshot = {**snapshot, "checkpoint": files.checkpoint_record(cut, *dump)}
        with self._snapshot_lock:
            if number > self._snapshot_stored:
                files.save_snapshot(self.directory, snapshot)
                self._snapshot_stored = number

    def checkpoint(self) -> None:
        """Store the engine's dump (taken now, on the loop) with the journal offset it reflects: where the
        stream is between sequences (lookout.terminal.screen.sequence_boundary), or where the unfinished one begins. When
        that cannot be told, nothing is stored, and the next output tries again."""
        cut = self._cut()
        if cut is not None:
            self._in_background("a checkpoint", files.save_checkpoint, self.directory, cut, *self._dump(self.current()))

    def _cut(self) -> int | None:
        """Where the next checkpoint falls (see `checkpoint`), None when that cannot be told; reads the journal."""
        cut = cut_before(partial(read_raw, self.directory), self.offset, self.good_cut)
        if cut is not None:
            self._since_checkpoint = 0
            self.good_cut = cut
        return cut

    def _dump(self, engine: ScreenEngine) -> Dump:
        """What a checkpoint stores of the screen besides its offset (lookout.terminal.journal.persistence)."""
        return engine.cols, engine.rows, engine.dump(), engine.kept_state(), self.title

    def _in_background(self, name: str, write: Callable[..., None], *args: Any) -> None:
        """`write(*args)` in a worker; a failure is the terminal's, as one on the loop (GuardedWrites)."""
        if self._writes.released:
            return
        future = in_background(self._writes, name, write, *args)
        self._writing.add(future)
        future.add_done_callback(self._writing.discard)

    async def save_now(self) -> None:
        """Write the delta that waits for the rate limit and a snapshot now, and return once every write has
        ended: what a daemon that takes the terminal up next goes on from."""
        self.flush_delta()
        self.snapshot_now()
        await self.written()

    async def written(self) -> None:
        """Return once every file write started in the background has ended (a failure is the terminal's)."""
        while self._writing:
            await asyncio.wait(set(self._writing))

    def close(self, then: Callable[[], None]) -> None:
        """The process has exited and its output is all fed: the last delta, written now; then, in a worker thread
        (off the loop: many terminals end at once), the last snapshot and checkpoint, taken there of the engine no
        output changes any more, and `then` (the session's last writes, after these, as they were in order).
        `written` returns once they have ended; a failure is the terminal's, as one on the loop (GuardedWrites)."""
        if self._delta_due is not None:
            self._delta_due.cancel()
        self._emit_delta()
        self._deltas.close()
        if self._snapshot_due is not None:
            self._snapshot_due.cancel()
        self._snapshots += 1
        engine, ingest = self.current(), self._ingest_state()
        self._in_background("its last files", self._write_last, engine, self._snapshots, ingest, then)

    def _write_last(self, engine: ScreenEngine, number: int, ingest: dict[str, Any], then: Callable[[], None]) -> None:
        with self.lock:
            taken = snapshot(engine, title=self.title, raw_offset=self.offset, ts=time.time(), **ingest)
            dump = self._dump(engine)
        self._writes("screen.snapshot.json", self._store_snapshot, number, taken)
        self._writes("a checkpoint", self._store_checkpoint, dump)
        then()

    def _store_checkpoint(self, dump: Dump) -> None:
        if (cut := self._cut()) is not None:
            files.save_checkpoint(self.directory, cut, *dump)
