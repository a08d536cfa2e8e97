"""One terminal: a process on a PTY, its journal, its screen model and its side scanner.

The PTY master is read in batches by the reading thread (app.terminal.pty_reader); on the loop, each batch
goes to the journal first, then to the scanner and the screen engine. The leader's exit is seen through a
pidfd, and the output that is still in the PTY is drained before the session is marked exited, so nothing a
fast program wrote is lost.
"""
from __future__ import annotations

import asyncio
import logging
import os
import signal
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from app.core.errors import BadInput, Conflict, TooLarge
from app.core.private_files import DIR_MODE, make_dir
from app.core.workers import BoundedPool
from app.terminal import persistence as files
from app.terminal import shell_integration
from app.terminal.blocks import BlockTracker
from app.terminal.cell_layers import CellLayers
from app.terminal.deltas import MIN_INTERVAL_S, UNWATCHED_INTERVAL_S, DeltaLog, DeltaPage, Throttle
from app.terminal.engines import create_engine
from app.terminal.engines.base import ScreenEngine
from app.terminal.frames import TAIL_BYTES, block_frame, exit_frame, input_frame, output_tail, screen_frame
from app.terminal.journal import JournalWriter, raw_size, read_raw
from app.terminal.input_steps import InputStep, encode_steps
from app.terminal.layers import ScreenData, ViewOptions, render
from app.terminal.pty_process import PtyProcessHandle
from app.terminal.pty_reader import Feed, PtyReader, read_batch
from app.terminal.scanner import (
    CwdChanged, ModeChanged, Query, ShellMark, SideScanner, TitleChanged, query_reply,
)
from app.terminal.screen_view import screen_data, snapshot
from app.terminal.skip_ahead import plan_feed
from app.terminal.state import LINE_EDITOR_SHELLS, State, derive_state
from app.terminal.waiting import Origin, Until, WaitResult, wait_until
from app.timeline.recording import DEFAULT_AGENT, NullRecorder, Recorder, current_agent

log = logging.getLogger(__name__)

SYNC_BYTES = {"avt": (256 << 10, 2 << 20), "pyte": (16 << 10, 16 << 10)}
"""Output is fed to the screen engine lazily: before anything reads the screen (the next delta, which is
due after any output, within UNWATCHED_INTERVAL_S), or once this much is pending (the first figure normally,
the second in a flood of plain text). Slow engines get small batches so that one flooding session never
holds the event loop for long; in a plain flood, large batches let skip_ahead spare the engine what nobody
can see."""
DELTA_STYLE_LAYERS = ("fgColors", "bgColors", "styles")
RENDERS = BoundedPool("screens", 2)
"""Layered views are built in these threads (a 1000x500 screen with every cell layer is seconds of CPU):
the event loop stays free, and more big renders at once wait their turn."""
SNAPSHOT_INTERVAL_S = 0.25
CHECKPOINT_BYTES = 8 << 20
EXIT_DRAIN_S = 1.0
"""After the leader exits, how long to keep reading output that is still on its way (or written by
children that kept the terminal open) before the master is closed."""
STOP_LADDER = ((signal.SIGHUP, 1.0), (signal.SIGTERM, 1.0), (signal.SIGKILL, 2.0))


@dataclass(frozen=True, slots=True)
class SessionLimits:
    scrollback: int
    max_journal_bytes: int
    max_input_bytes: int


class Pulse:
    """Wakes every waiter when something changed."""

    def __init__(self) -> None:
        self._future: asyncio.Future[None] | None = None

    async def wait(self, timeout: float) -> None:
        if self._future is None or self._future.done():
            self._future = asyncio.get_running_loop().create_future()
        try:
            await asyncio.wait_for(asyncio.shield(self._future), timeout)
        except asyncio.TimeoutError:
            pass

    def fire(self) -> None:
        if self._future is not None and not self._future.done():
            self._future.set_result(None)


class TerminalSession:
    """A live terminal, or (after a restart) a dormant one whose files are still served."""

    def __init__(
        self, meta: files.TerminalMeta, directory: Path, limits: SessionLimits, nonce: str | None = None
    ) -> None:
        self.meta = meta
        self.directory = directory
        self.limits = limits
        self.title = ""
        self.reported_cwd: str | None = None
        self.bracketed_paste = False
        self.last_output_at = time.monotonic()
        self.last_input = Origin(since=0)
        """Where the last input was sent (what `wait` starts from by default)."""
        self._engine: ScreenEngine | None = None
        self._engine_lock = threading.Lock()
        """Held while the engine changes (feed, resize) and while a worker thread copies a view of it."""
        self._handle: PtyProcessHandle | None = None
        self._journal: JournalWriter | None = None
        self._scanner = SideScanner()
        self._nonce_filter = shell_integration.NonceFilter(nonce) if nonce else None
        self._pulse = Pulse()
        self._outbox = bytearray()
        self._pidfd: int | None = None
        self._leader_exit: int | None = None
        self._hung_up = False
        self._feed: Feed | None = None
        self._finalized = asyncio.Event()
        self._finalizing = False
        self._snapshot_due: asyncio.TimerHandle | None = None
        self._last_snapshot = 0.0
        self._since_checkpoint = 0
        self._backlog: list[bytes] = []
        self._backlog_size = 0
        self._sync_sizes = SYNC_BYTES.get(meta.engine, (16 << 10, 16 << 10))
        self._sync_bytes = self._sync_sizes[0]
        self._dormant_size = 0
        self._deltas = DeltaLog(directory)
        self._dirty: set[int] = set()
        self._resized = False
        self._delta_throttle = Throttle(MIN_INTERVAL_S, time.monotonic)
        self._delta_due: asyncio.Handle | None = None
        self._output_listeners: set[Callable[[bytes], None]] = set()
        self._delta_listeners: set[Callable[[dict[str, Any]], None]] = set()
        self.on_event: Callable[..., None] = lambda type_, **fields: None
        self.recorder: Recorder = NullRecorder()
        self.last_agent = DEFAULT_AGENT  # whose input the commands that end belong to
        self._stopping = False  # lookout itself is ending the process (close, shutdown)
        self._storage_failure: str | None = None
        self.blocks = BlockTracker(directory, nonce)

    # ----------------------------------------------------------------- creation

    @classmethod
    async def start(
        cls, meta: files.TerminalMeta, directory: Path, env: dict[str, str], limits: SessionLimits, reader: PtyReader
    ) -> TerminalSession:
        """Spawn the process and start reading it. Exec failures raise FileNotFoundError/PermissionError."""
        make_dir(directory.parent)
        os.mkdir(directory, DIR_MODE)  # a new id: exists neither as a directory nor as a link
        launch = shell_integration.launch(meta, directory, env)
        try:
            self = cls(meta, directory, limits, launch.nonce)
            self._engine = create_engine(meta.engine, meta.cols, meta.rows, limits.scrollback)
            self._journal = JournalWriter(directory, limits.max_journal_bytes)
            self._journal.record("r", f"{meta.cols}x{meta.rows}")
            try:
                self._handle = await asyncio.to_thread(
                    PtyProcessHandle.spawn, launch.argv, meta.cwd, launch.env, meta.cols, meta.rows, launch.nonce_fd
                )
            except BaseException:
                self._journal.close()
                raise
        finally:  # the shell has its own copy of the nonce's pipe, or none is needed any more
            if launch.nonce_fd is not None:
                os.close(launch.nonce_fd)
        meta.pid = self._handle.pid
        try:
            files.save_meta(directory, meta)
            files.append_event(directory, {"type": "created", "pid": meta.pid})
        except OSError:  # a session that cannot be recorded is not started: no process is left behind
            self._handle.signal_session(signal.SIGKILL)
            self._handle.close_fd()
            await asyncio.to_thread(os.waitpid, self._handle.pid, 0)
            self._journal.close()
            raise
        self._feed = reader.add(self._handle.fd, self._on_output)
        loop = asyncio.get_running_loop()
        self._pidfd = self._handle.pidfd()
        loop.add_reader(self._pidfd, self._on_leader_exit)
        return self

    @classmethod
    def recover(cls, directory: Path, limits: SessionLimits) -> TerminalSession:
        """A session from an earlier run of the daemon: `exited`, or `lost` if it was still running."""
        meta = files.load_meta(directory)
        if meta.status == "running":
            meta.status = "lost"
            files.save_meta(directory, meta)
        self = cls(meta, directory, limits)
        snapshot = files.load_snapshot(directory) or {}
        self.title = snapshot.get("title", "")
        self.blocks.forged = int(snapshot.get("forged_marks", 0))
        self._dormant_size = raw_size(directory)
        self._finalized.set()
        return self

    # ----------------------------------------------------------------- reading

    def _on_output(self) -> None:
        """The reading thread has a batch (see app.terminal.pty_reader)."""
        assert self._feed is not None
        data, hangup = self._feed.take()
        if data:
            self._ingest(data)
        if hangup:
            self._on_hangup()
        elif not self._finalizing:
            self._feed.resume()

    def _ingest(self, data: bytes, final: bool = False) -> None:
        """Process output read from the PTY (`final`: the last of it). The scanner reads it as is; everything
        else (journal, screen, listeners) gets it with the shell integration's nonce masked."""
        assert self._journal is not None
        shown = data
        if self._nonce_filter is not None:
            data, shown = self._nonce_filter.feed(data, final)
        if not data:
            return
        base = self._journal.size
        self._journal.write_output(shown)
        pos = 0
        for event in self._scanner.feed(data):
            if isinstance(event, Query):
                self._defer(shown[pos : event.end])
                pos = event.end
                cur = self._sync().cursor()
                self._answer(query_reply(event.kind, cur.row, cur.col))
            elif isinstance(event, TitleChanged):
                self.title = event.title
            elif isinstance(event, CwdChanged):
                if self.blocks.trusts_cwd(event.nonce):
                    self.reported_cwd = event.path
            elif isinstance(event, ShellMark):
                cwd = self.reported_cwd or self.meta.cwd
                for what, block in self.blocks.feed(event, base + event.end, time.time(), cwd):
                    self._block_event(what, block)
            elif isinstance(event, ModeChanged) and event.mode == "bracketed_paste":
                self.bracketed_paste = event.on
        self._defer(shown[pos:] if pos else shown)
        for listener in tuple(self._output_listeners):
            listener(shown)
        self._schedule_delta()
        self.last_output_at = time.monotonic()
        self._since_checkpoint += len(data)
        if self._since_checkpoint >= CHECKPOINT_BYTES:
            self._checkpoint()
        self._pulse.fire()

    def _defer(self, data: bytes) -> None:
        """Queue output for the screen engine (see SYNC_BYTES)."""
        if not data:
            return
        self._backlog.append(data)
        self._backlog_size += len(data)
        if self._backlog_size >= self._sync_bytes:
            self._sync()

    def _sync(self) -> ScreenEngine:
        """The live engine, brought up to date with every byte read."""
        assert self._engine is not None
        if self._backlog:
            data = self._backlog[0] if len(self._backlog) == 1 else b"".join(self._backlog)
            self._backlog.clear()
            self._backlog_size = 0
            pieces = plan_feed(data, self._engine.rows + self.limits.scrollback + 1)
            with self._engine_lock:
                for piece in pieces:
                    self._dirty |= self._engine.feed(piece)
            self._sync_bytes = self._sync_sizes[len(pieces) > 1]
        return self._engine

    def _block_event(self, what: str, block: dict[str, Any]) -> None:
        """A block started or ended: a marker in the journal (and so in recordings), and an event."""
        assert self._journal is not None
        summary = {"n": block["n"], "command": block["command"], "exit_code": block["exit_code"]}
        label = f"block {block['n']} {what}" + (f" (exit {block['exit_code']})" if what == "ended" else "")
        self._journal.record("m", f"{label}: {block['command']}")
        self.on_event(f"terminal.block_{what}", id=self.id, block=summary)
        if what == "ended":
            start, end = block["raw"]["start"], block["raw"]["end"]
            tail = output_tail(self.read_raw(max(start, end - TAIL_BYTES), min(end - start, TAIL_BYTES)))
            self.recorder.record(block_frame(self.id, block, tail, self.last_agent))

    def _schedule_delta(self) -> None:
        """Emit a delta now if the rate limit allows, else once it does (leading and trailing edge)."""
        if self._delta_due is not None:
            return
        loop = asyncio.get_running_loop()
        self._delta_throttle.interval = MIN_INTERVAL_S if self._delta_listeners else UNWATCHED_INTERVAL_S
        delay = self._delta_throttle.delay()
        if delay == 0:
            self._delta_due = loop.call_soon(self._emit_delta)
        else:
            self._delta_due = loop.call_later(delay, self._emit_delta)

    def _emit_delta(self) -> None:
        self._delta_due = None
        engine = self._sync()
        self._schedule_snapshot()
        if not self._dirty and not self._resized:
            return
        cur = engine.cursor()
        delta: dict[str, Any] = {
            "t": time.time(),
            "cols": engine.cols,
            "rows": engine.rows,
            "changed": _changed_rows(engine, self._dirty),
            "cursor": {"left": cur.col, "top": cur.row, "visible": cur.visible},
            "title": self.title,
            "alt_screen": engine.alt_screen,
            "raw_offset": self.raw_offset,
        }
        if self._resized:
            delta["resized"] = True
        self._dirty.clear()
        self._resized = False
        self._persist("screen.jsonl", self._deltas.append, delta)
        self._delta_throttle.emitted()
        for listener in tuple(self._delta_listeners):
            listener(delta)

    def _answer(self, reply: bytes) -> None:
        """Answer a terminal query (DA, DSR, CPR) as a terminal would, ahead of queued input."""
        if self._handle is not None and not self._finalized.is_set():
            self._outbox[0:0] = reply
            self._flush_outbox()

    def _on_hangup(self) -> None:
        self._hung_up = True
        if self._feed is not None:
            self._feed.stop()
        if self._leader_exit is not None:
            self._finalize()

    def _on_leader_exit(self) -> None:
        assert self._handle is not None and self._pidfd is not None
        loop = asyncio.get_running_loop()
        loop.remove_reader(self._pidfd)
        os.close(self._pidfd)
        self._pidfd = None
        code = self._handle.reap()
        self._leader_exit = code if code is not None else -signal.SIGKILL
        if self._hung_up:
            self._finalize()
        else:
            loop.call_later(EXIT_DRAIN_S, self._finalize)

    def _finalize(self) -> None:
        """Drain what is left, close the PTY, record the exit, write the final snapshot and checkpoint."""
        if self._finalizing or self._handle is None or self._journal is None:
            return
        self._finalizing = True  # the drain below may see the hang-up, which would finalize again
        loop = asyncio.get_running_loop()
        if not self._hung_up and self._feed is not None:
            self._feed.stop()
            taken, _ = self._feed.take()
            drained, _ = read_batch(self._handle.fd)
            if taken or drained:
                self._ingest(taken + drained)
        self._ingest(b"", final=True)  # what the nonce filter held back
        loop.remove_writer(self._handle.fd)
        self._handle.close_fd()
        self._outbox.clear()
        self.meta.status = "exited"
        self.meta.exit_code = self._leader_exit
        self.meta.ended_at = time.time()
        last = self.blocks.close(self.raw_offset, self.meta.ended_at, self._leader_exit)
        if last is not None:
            self._block_event("ended", last)
        self._journal.record("x", self._leader_exit)
        self._journal.close()
        if self._delta_due is not None:
            self._delta_due.cancel()
        self._emit_delta()
        self._deltas.close()
        if self._snapshot_due is not None:
            self._snapshot_due.cancel()
        self._persist("screen.snapshot.json", files.save_snapshot, self.directory, self._snapshot())
        self._persist("a checkpoint", self._checkpoint, False)
        self._persist("meta.json", files.save_meta, self.directory, self.meta)
        self._persist("events.jsonl", files.append_event, self.directory, {"type": "exited", "exit_code": self._leader_exit})
        self.on_event("terminal.exited", id=self.id, exit_code=self._leader_exit)
        self.recorder.record(exit_frame(self.id, self._leader_exit, self._stopping, self.last_agent))
        self._finalized.set()
        self._pulse.fire()

    # ----------------------------------------------------------------- persistence

    def _persist(self, name: str, write: Callable[..., None], *args: Any) -> None:
        """A write on the loop that a full disk may refuse: the session goes on, marked degraded."""
        try:
            write(*args)
        except OSError as exc:
            if self._storage_failure is None:
                log.error("terminal %s: writing %s failed: %s", self.id, name, exc.strerror)
            self._storage_failure = f"writing {name} failed: {exc.strerror}"

    @property
    def degraded(self) -> str | None:
        """Why this session's files are incomplete (a full disk...), or None."""
        journal = self._journal.failure if self._journal is not None else None
        return journal or self._storage_failure or self.blocks.failure

    def _snapshot(self) -> dict[str, Any]:
        return snapshot(
            self._sync(), title=self.title, forged_marks=self.blocks.forged, raw_offset=self.raw_offset, ts=time.time()
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

    def _write_snapshot(self) -> None:
        self._snapshot_due = None
        self._last_snapshot = time.monotonic()
        _background(files.save_snapshot, self.directory, self._snapshot())

    def _checkpoint(self, in_thread: bool = True) -> None:
        """Store the engine's dump (taken now, on the loop) with the journal offset it reflects."""
        engine = self._sync()
        self._since_checkpoint = 0
        args = (self.directory, self.raw_offset, engine.cols, engine.rows, engine.dump())
        if in_thread:
            _background(files.save_checkpoint, *args)
        else:
            files.save_checkpoint(*args)

    # ----------------------------------------------------------------- what clients call

    @property
    def id(self) -> str:
        return self.meta.id

    @property
    def running(self) -> bool:
        return self.meta.status == "running" and not self._finalized.is_set()

    @property
    def exited(self) -> bool:
        return not self.running

    @property
    def exit_code(self) -> int | None:
        return self.meta.exit_code

    @property
    def raw_offset(self) -> int:
        return self._journal.size if self._journal is not None else self._dormant_size

    def read_raw(self, offset: int, limit: int) -> bytes:
        return read_raw(self.directory, offset, limit)

    async def changed(self, timeout: float) -> None:
        await self._pulse.wait(timeout)

    async def engine(self) -> ScreenEngine:
        """The screen model; for a dormant session it is rebuilt from its files once, in a thread."""
        if self._engine is None:
            self._engine = await asyncio.to_thread(
                files.rebuild_engine, self.directory, self.meta, self.limits.scrollback
            )
        return self._sync()

    def screen_text(self) -> str:
        return "\n".join(self._sync().text_rows()) if self._engine is not None else ""

    def state(self, fresh: bool = True) -> State:
        """See app.terminal.state; `fresh=False` takes the alternate-screen flag from the screen model as it
        is, without feeding it the output still pending (until the next delta)."""
        if self.exited or self._handle is None or self._engine is None:
            return "exited"
        handle = self._handle
        return derive_state(
            exited=False,
            alt_screen=(self._sync() if fresh else self._engine).alt_screen,
            flags=handle.tty_flags(),
            foreground=handle.foreground_pgid(),
            leader=handle.pid,
            leader_is_shell=self.meta.shell,
            waits_for_input=handle.waits_for_input,
            command_running=self.blocks.current is not None if self._nonce_filter is not None else None,
            line_editor=os.path.basename(self.meta.argv[0]) in LINE_EDITOR_SHELLS,
        )

    def describe(self, fresh: bool = True) -> dict[str, Any]:
        """The terminal's facts; listings pass `fresh=False` (see `state`): bringing every flooding terminal's
        screen model up to date would hold the loop for a while."""
        m = self.meta
        engine = self._sync() if fresh and self._engine is not None else self._engine
        return {
            "id": m.id,
            "name": m.name,
            "command": m.command,
            "argv": m.argv,
            "pid": m.pid,
            "status": m.status,
            "exit_code": m.exit_code,
            "cols": m.cols,
            "rows": m.rows,
            "state": self.state(fresh),
            "cwd": self.reported_cwd or m.cwd,
            "shell_integration": m.shell_integration,
            **self.blocks.describe(),
            "title": self.title,
            "degraded": self.degraded,
            "alt_screen": engine.alt_screen if engine is not None else False,
            "raw_size": self.raw_offset,
            "engine": m.engine,
            "created_at": m.created_at,
            "ended_at": m.ended_at,
        }

    async def screen(
        self, options: ViewOptions = ViewOptions(), scrollback: int = 0, changed_since: int | None = None
    ) -> dict[str, Any] | str:
        """The layered view of the screen (see app.terminal.layers; a string for format=text) with the
        newest `scrollback` lines, the state, the journal offset it reflects, and `delta_cursor`: with
        `changed_since=<delta cursor>` only the rows changed after that cursor are returned."""
        engine = await self.engine()
        delta_cursor = self._deltas.size()  # before the read: a delta written meanwhile is in the next answer too
        changed = await self.rows_changed_since(changed_since) if changed_since is not None else None
        extra = {"state": self.state(), "raw_offset": self.raw_offset, "delta_cursor": delta_cursor}
        facts = {"cols": engine.cols, "rows": engine.rows, "state": extra["state"], "title": self.title,
                 "cwd": self.reported_cwd or self.meta.cwd, "raw_size": extra["raw_offset"]}  # fmt: skip
        title = self.title

        def view() -> tuple[ScreenData, dict[str, Any] | str]:
            """In a worker: copy the screen (a 1000x500 one with scrollback takes tens to hundreds of ms), then
            render the copy while output goes on."""
            with self._engine_lock:
                data = screen_data(engine, title=title, scrollback=scrollback, changed_rows=changed, extra=extra)
            return data, render(data, options)

        data, answer = await RENDERS.run(view)
        self.recorder.record(screen_frame(self.id, list(data.text), (data.cursor.row, data.cursor.col), facts))
        return answer

    def send(
        self, *steps: InputStep, text: str | None = None, keys: list[str] | None = None, paste: str | None = None
    ) -> dict[str, Any]:
        """Write input, step by step in order (see app.terminal.input_steps), then one more step of `text`,
        `keys` and `paste` if given; the next wait starts here."""
        if text is not None or keys or paste is not None:
            steps = (*steps, InputStep(text=text, keys=tuple(keys or ()), paste=paste))
        if not self.running or self._handle is None or self._engine is None:
            raise Conflict(f"terminal {self.id} has {self.meta.status}; it takes no more input")
        encoded = encode_steps(steps, bracketed=self.bracketed_paste, app_cursor=self._sync().app_cursor_keys)
        data = encoded.data
        if len(data) > self.limits.max_input_bytes:
            raise TooLarge(f"input of {len(data)} bytes exceeds the limit of {self.limits.max_input_bytes}")
        if len(self._outbox) + len(data) > 4 * self.limits.max_input_bytes:
            raise Conflict(f"terminal {self.id} is not reading its input ({len(self._outbox)} bytes pending)")
        offset = self.raw_offset
        flags = self._handle.tty_flags()
        assert self._journal is not None
        hidden = flags is not None and flags.canonical and not flags.echo
        self._journal.record_input(data, redact=hidden)
        self.last_agent = current_agent.get()
        self.recorder.record(input_frame(self.id, steps, hidden))
        self.last_input = Origin(since=offset, after_input=True, echo="" if hidden else encoded.echo)
        self._outbox += data
        self._flush_outbox()
        return {"bytes_written": len(data), "raw_offset": offset, "pending": len(self._outbox)}

    def _flush_outbox(self) -> None:
        assert self._handle is not None
        loop = asyncio.get_running_loop()
        while self._outbox:
            try:
                n = self._handle.write(bytes(self._outbox[:65536]))
            except OSError:  # the terminal went away; what is pending cannot be delivered
                self._outbox.clear()
                break
            if n == 0:
                break
            del self._outbox[:n]
        if self._outbox:
            loop.add_writer(self._handle.fd, self._flush_outbox)
        else:
            loop.remove_writer(self._handle.fd)

    def resize(self, cols: int, rows: int) -> None:
        if not self.running or self._handle is None or self._engine is None or self._journal is None:
            raise Conflict(f"terminal {self.id} has {self.meta.status}; it cannot be resized")
        self._handle.set_size(cols, rows)
        engine = self._sync()
        with self._engine_lock:
            engine.resize(cols, rows)
        self._dirty = set(range(rows))
        self._resized = True
        self._schedule_delta()
        self.on_event("terminal.resized", id=self.id, cols=cols, rows=rows)
        self.meta.cols, self.meta.rows = cols, rows
        self._journal.record("r", f"{cols}x{rows}")
        files.save_meta(self.directory, self.meta)
        files.append_event(self.directory, {"type": "resized", "cols": cols, "rows": rows})
        self._pulse.fire()

    # ----------------------------------------------------------------- streams

    def hydration(self) -> tuple[int, str]:
        """An escape string that repaints the current screen (reset, content, cursor, title, modes) on a
        fresh terminal, and the journal offset it reflects: live output continues from there. The screen
        must be loaded (`await engine()`)."""
        engine = self._sync()
        parts = ["\x1bc", engine.dump()]
        if self.title:
            parts.append(f"\x1b]2;{self.title}\x07")
        if self.bracketed_paste:
            parts.append("\x1b[?2004h")
        if engine.app_cursor_keys:
            parts.append("\x1b[?1h")
        return self.raw_offset, "".join(parts)

    def full_delta(self) -> dict[str, Any]:
        """Every row, as a delta (what a deltas stream starts with). The screen must be loaded."""
        engine = self._sync()
        cur = engine.cursor()
        return {
            "t": time.time(),
            "cols": engine.cols,
            "rows": engine.rows,
            "changed": [[row, text] for row, text in enumerate(engine.text_rows())],
            "cursor": {"left": cur.col, "top": cur.row, "visible": cur.visible},
            "title": self.title,
            "alt_screen": engine.alt_screen,
            "raw_offset": self.raw_offset,
            "full": True,
        }

    async def finished(self) -> None:
        """Returns once the process has exited and its output is all read."""
        await self._finalized.wait()

    def subscribe_output(self, listener: Callable[[bytes], None]) -> Callable[[], None]:
        """Call `listener` with every chunk of output from now on; returns the unsubscribe function."""
        self._output_listeners.add(listener)
        return lambda: self._output_listeners.discard(listener)

    def subscribe_deltas(
        self, listener: Callable[[dict[str, Any]], None], styles: bool = False
    ) -> Callable[[], None]:
        """Call `listener` with every delta from now on (with `styles`, also the colour and style layers of
        its changed rows); returns the unsubscribe function."""
        deliver = (lambda delta: listener(self.with_styles(delta))) if styles else listener
        self._delta_listeners.add(deliver)
        self._flush_delta()  # the next one is due at the watched rate
        return lambda: self._delta_listeners.discard(deliver)

    def with_styles(self, delta: dict[str, Any]) -> dict[str, Any]:
        """`delta` plus `fgColors`, `bgColors` and `styles` runs of its changed rows (in the same order) with
        their `colorPalette` and `styleLegend`, read from the screen as it is now."""
        engine = self._sync()
        rows = [row for row, _ in delta["changed"] if row < engine.rows]
        layers = CellLayers(DELTA_STYLE_LAYERS)
        row_cells = engine.frozen_cells() if len(rows) > 1 else engine.row_cells  # one read of the screen
        for row in rows:
            layers.add_row(row_cells(row), 0, engine.cols)
        encoded = layers.encode("runs", lambda runs, cells: runs)
        return {**delta, **encoded.layers, "colorPalette": encoded.palette, "styleLegend": encoded.style_legend}

    async def read_deltas(self, cursor: int, limit: int, max_bytes: int | None = None) -> DeltaPage:
        """Deltas from `cursor` on, the pending one included (the file is read in a thread); see
        DeltaLog.read."""
        self._flush_delta()
        return await asyncio.to_thread(self._deltas.read, cursor, limit, max_bytes)

    def _flush_delta(self) -> None:
        """Write the delta that is waiting for the rate limit now: a reader sees every change so far."""
        if self._delta_due is not None:
            self._delta_due.cancel()
            self._emit_delta()

    async def rows_changed_since(self, cursor: int) -> set[int] | None:
        """Rows changed after delta cursor `cursor` (None: all of them, the size changed), including
        changes not yet written as a delta. The delta log is read in a thread (it may be megabytes)."""
        rows = await asyncio.to_thread(self._deltas.rows_changed_since, cursor)
        if rows is None or self._resized:
            return None
        if self._engine is not None:
            self._sync()
            rows |= self._dirty
        return rows

    async def wait(self, until: Until, since: int | None, timeout_ms: int) -> WaitResult:
        """See app.terminal.waiting. `since` defaults to the last input: the wait then skips its echo and
        takes a state only as the terminal's answer to it."""
        origin = self.last_input if since is None else Origin(since=since)
        if origin.since < 0 or origin.since > self.raw_offset:
            raise BadInput(f"since={origin.since} is outside the output (0..{self.raw_offset})", field="since")
        await self.engine()
        return await wait_until(self, until, origin, timeout_ms / 1000)

    async def stop(self) -> None:
        """Hang up, then terminate, then kill the terminal's processes until the leader is gone; then kill
        whatever is left in its session (background jobs that ignored the hangup)."""
        if self._handle is None or self._finalized.is_set():
            return
        self._stopping = True
        for sig, grace in STOP_LADDER:
            self._handle.signal_session(sig)
            try:
                await asyncio.wait_for(self._finalized.wait(), grace + EXIT_DRAIN_S)
                break
            except asyncio.TimeoutError:
                continue
        else:
            log.error("terminal %s: pid %s survived SIGKILL", self.id, self._handle.pid)
        self._handle.signal_session(signal.SIGKILL, leader=False)


def _changed_rows(engine: ScreenEngine, dirty: set[int]) -> list[list[Any]]:
    """[row, text] of each dirty row on the screen; many rows are read in one pass over the screen."""
    rows = sorted(row for row in dirty if row < engine.rows)
    if len(rows) > 4:
        texts = engine.text_rows()
        return [[row, texts[row]] for row in rows]
    return [[row, engine.row_text(row)] for row in rows]


def _background(fn: Any, *args: Any) -> None:
    """Run blocking file work in the default executor, logging (never raising) its failure."""
    future = asyncio.get_running_loop().run_in_executor(None, fn, *args)
    future.add_done_callback(lambda f: f.exception() and log.error("%s failed: %s", fn.__name__, f.exception()))
