"""One terminal: its program, its command blocks, its hands, the waits on it, and its facts (meta.json,
events.jsonl), over parts that are each a module of their own: the process (lookout.terminal.process.program, held
by a holder, lookout.terminal.holder), the ingest pipeline (lookout.terminal.ingest), the screen model
(lookout.terminal.screen.model, the session's `screen_model`) and who typed what (lookout.terminal.hand_inputs). How a
session comes to be is lookout.terminal.origins. It tells the event bus and the timeline recorder what happened.
"""

from __future__ import annotations

import asyncio
import logging
import os
import time
from collections.abc import Callable
from dataclasses import dataclass, replace
from functools import partial
from pathlib import Path
from typing import Any

from lookout.core.errors import BadInput, Conflict, TakenOver
from lookout.core.events import EventBus
from lookout.core.hands import Ledger
from lookout.core.leases import Holdable, LeaseBook
from lookout.terminal import frames
from lookout.terminal.blocks.blocks import Block, BlockTracker
from lookout.terminal.facts import SCREEN_CATCH_UP_S, facts, screen_header
from lookout.terminal.hand_inputs import TerminalHands
from lookout.terminal.ingest import Ingest
from lookout.terminal.input.steps import InputStep, encode_within
from lookout.terminal.journal import persistence as files
from lookout.terminal.journal.follower import JournalFollower
from lookout.terminal.journal.reader import read_raw
from lookout.terminal.process import holders, ladder
from lookout.terminal.process.program import TerminalProcess
from lookout.terminal.process.state import LINE_EDITOR_SHELLS, State
from lookout.terminal.screen.layers import ViewOptions
from lookout.terminal.screen.model import ScreenModel
from lookout.terminal.waits.waiting import Origin, Pulse, Until, WaitResult, wait_until
from lookout.timeline.recording import Recorder, current_agent

log = logging.getLogger(__name__)


@dataclass(frozen=True, slots=True)
class SessionLimits:
    scrollback: int
    max_journal_bytes: int
    max_input_bytes: int


class TerminalSession(Holdable):
    """A terminal. It is made following no program: dormant, its files served; `follow` makes it live until
    its program ends."""

    def __init__(
        self,
        meta: files.TerminalMeta,
        directory: Path,
        limits: SessionLimits,
        *,
        holders: Path,
        bus: EventBus,
        recorder: Recorder,
        offset: int = 0,
    ) -> None:
        """`holders`: where the holders' sockets are; `offset`: the journal offset the screen starts from."""
        self.meta = meta
        self.directory = directory
        self.limits = limits
        self.holders = holders
        self.bus = bus
        self.recorder = recorder
        self.readopt = True
        """Whether a `lost` terminal may be adopted again once its holder answers (not when its files fail)."""
        self.ending = False
        """A client is ending it (it is then not adopted again)."""
        self.meta_known = True
        """False when `meta` stands in for a meta.json that cannot be used (it is never written)."""
        self.last_output_at = time.monotonic()
        self.stopping = False
        """The daemon is stopping: waits answer now (`stop_waits`)."""
        self.leases = LeaseBook(None)
        """The daemon's leases (the registry's book; lookout.core.leases): whose input is let in."""
        self.writes = files.GuardedWrites(meta.id)
        """The terminal's writes on the loop: none once another daemon took it over; a failure is `degraded`."""
        self.hands = TerminalHands(directory, self.writes)
        """Every input with its hand, each hand's last input (what its `wait` starts from), whose blocks are."""
        self.blocks = BlockTracker(directory, meta.shell_integration, self.writes)
        self.screen_model = ScreenModel(
            directory, meta, limits.scrollback, offset=offset, writes=self.writes, ingest_state=self._ingest_state
        )
        self.stored_from = 0
        """Where the stored output starts (journal.reader.stored_from): above 0 only for a replay archive's range."""
        self._ingest = Ingest(
            self.screen_model, self.blocks, offset=offset, cwd=meta.cwd,
            answer=self._answer, on_block=self._block_event, on_output=self._output_taken, on_size=self._size_taken,
        )  # fmt: skip
        self._process: TerminalProcess | None = None
        self._pulse = Pulse()
        self._finalized = asyncio.Event()
        self._finalized.set()  # until it follows a program
        self._resize_listeners: set[Callable[[int, int], None]] = set()

    def follow(self, follower: JournalFollower, cwd: str | None = None, answer_from: int = 0) -> TerminalProcess:
        """Follow the program from where `follower` is in its journal, through the process returned (which
        then follows its holder); `cwd`: the one its shell reported last; queries before `answer_from` are
        not answered (see Ingest). The session is live until the program has ended."""
        self._ingest.offset, self._ingest.reported_cwd, self._ingest.answer_from = follower.offset, cwd, answer_from
        self._process = TerminalProcess(follower, on_output=self._ingest.feed, on_exit=self._finalize)
        self._finalized.clear()
        return self._process

    def lose(self, reason: str) -> TerminalSession:
        """It is `lost` (meta.json says so, and why) and follows nothing any more."""
        self.meta.status, self.meta.lost_reason = "lost", reason
        files.save_meta(self.directory, self.meta)
        self._process = None
        self._finalized.set()
        return self

    def _ingest_state(self) -> dict[str, Any]:
        """Stored with each snapshot: what lookout.terminal.origins.adopt takes up from."""
        model = self.screen_model
        return {"blocks": self.blocks.state(), "bracketed_paste": model.bracketed_paste, "cwd": self.reported_cwd}

    # ----------------------------------------------------------------- what the parts report

    def _answer(self, reply: bytes) -> None:
        if self._process is not None:
            self._process.answer(reply)

    def _output_taken(self) -> None:
        self.last_output_at = time.monotonic()
        self._pulse.fire()

    def _block_event(self, what: str, block: Block) -> None:
        """A block started or ended: a marker in the journal (and so in recordings), and an event."""
        assert self._process is not None
        if self.writes.released:  # the daemon that took the terminal over tells of it
            return
        owner = self.hands.claim(block)
        summary = {"n": block.n, "command": block.command, "exit_code": block.exit_code, "hand": owner.hand}
        self._process.mark(frames.block_label(what, block))
        self.bus.publish(f"terminal.block_{what}", id=self.id, block=summary)
        if what == "ended" and block.end is not None:
            tail = frames.block_tail(block, self.read_raw)
            self.recorder.record(frames.block_frame(self.id, block, tail, self.hands.hand_of(block)))

    def _finalize(self, exit_code: int | None, lost: str | None) -> None:
        """The program has exited (or its holder ended without saying how: `lost` says so) and its output is
        all read: record the end, write the final delta, snapshot, checkpoint and meta (ScreenModel.close)."""
        assert self._process is not None
        if lost is not None and ladder.program_runs(self.meta):
            lost += f"; its program runs on as pid {self.meta.pid} (DELETE, or `lookout kill {self.id}`, ends it)"
        self.meta.status = "exited" if exit_code is not None else "lost"
        self.meta.exit_code = exit_code
        self.meta.ended_by = self._process.ended_by
        self.meta.lost_reason = lost
        self.meta.ended_at = time.time()
        last = self.blocks.close(self.raw_offset, self.meta.ended_at, exit_code)
        if last is not None:
            self._block_event("ended", last)
        event = {"type": self.meta.status, "exit_code": exit_code, **({"reason": lost} if lost else {})}
        self.screen_model.close(partial(files.save_end, self.writes, self.directory, replace(self.meta), event))
        if self.writes.released:
            pass  # the daemon that took the terminal over tells of it
        elif lost:
            log.warning("terminal %s is lost: %s", self.id, lost)
            self.bus.publish("terminal.lost", id=self.id, reason=lost)
            files.in_background(holders.remove_stale_socket, self.holders, self.id)  # its holder was killed
        else:
            self.bus.publish("terminal.exited", id=self.id, exit_code=exit_code)
            self.recorder.record(
                frames.exit_frame(self.id, exit_code, self._process.stopping, self.hands.exit_hand(self.blocks))
            )
        self._finalized.set()
        self._pulse.fire()

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
        return self._ingest.offset

    @property
    def ledger(self) -> Ledger:
        return self.hands.ledger

    @property
    def reported_cwd(self) -> str | None:
        """The cwd the shell reported last (OSC 7), if any."""
        return self._ingest.reported_cwd

    @reported_cwd.setter
    def reported_cwd(self, cwd: str | None) -> None:  # taken up from an ended terminal's files (origins.recover)
        self._ingest.reported_cwd = cwd

    @property
    def degraded(self) -> str | None:
        """Why this session's files are incomplete (a full disk...), or None."""
        journal = self._process.failure if self._process is not None else None
        return "; ".join(why for why in (journal, self.writes.failure) if why) or None

    def read_raw(self, offset: int, limit: int) -> bytes:
        """Up to `limit` bytes of output from `offset`; Gone for output that is not stored (see `stored_from`)."""
        return read_raw(self.directory, offset, limit, stored_from=self.stored_from)

    async def changed(self, timeout: float) -> None:
        await self._pulse.wait(timeout)

    async def catch_up(self) -> None:
        """Take in every byte the program has written so far (see TerminalProcess.catch_up): what an answer
        says is then true of everything the holder journaled before it."""
        if self._process is not None:
            await self._process.catch_up()

    def state(self, fresh: bool = True) -> State:
        """See lookout.terminal.process.state; `fresh=False`: see ScreenModel.alt_screen."""
        if self.exited or self._process is None or self.screen_model.engine is None:
            return "exited"
        return self._process.state(
            alt_screen=self.screen_model.alt_screen(fresh), shell=self.meta.shell,
            command_running=self.blocks.current is not None if self.blocks.marked else None,
            line_editor=os.path.basename(self.meta.argv[0]) in LINE_EDITOR_SHELLS,
        )  # fmt: skip

    def shell_reading(self) -> bool:
        """Whether the terminal's shell is in the foreground, sleeping in a read of the terminal (at its prompt)."""
        return self.meta.shell and not self.exited and self._process is not None and self._process.leader_reading()

    def describe(self, fresh: bool = True) -> dict[str, Any]:
        """The terminal's facts; listings pass `fresh=False` (see `state`: it holds no loop on flooding terminals)."""
        return facts(
            self.meta, state=self.state(fresh), cwd=self.reported_cwd, blocks=self.blocks.describe(),
            title=self.screen_model.title, degraded=self.degraded, alt_screen=self.screen_model.alt_screen(fresh),
            raw_size=self._process.journal_size if self._process is not None else self.raw_offset, lease=self.lease(),
        )  # fmt: skip

    async def screen(
        self, options: ViewOptions = ViewOptions(), scrollback: int = 0, changed_since: int | None = None
    ) -> dict[str, Any] | str:
        """The layered view of the screen (see lookout.terminal.screen.layers; a string for format=text) with the
        newest `scrollback` lines, the state, the journal offset it reflects (`behind` when short of the output:
        lookout.terminal.facts.behind), `delta_cursor`: with `changed_since=<delta cursor>` only the rows changed
        after that cursor."""
        short_of = await self._process.catch_up(SCREEN_CATCH_UP_S) if self._process is not None else None
        await self.screen_model.load(deep=scrollback > 0)
        delta_cursor = self.screen_model.delta_cursor()  # before the read: a delta written meanwhile is in the next too
        changed = await self.screen_model.rows_changed_since(changed_since) if changed_since is not None else None
        extra = screen_header(self.state(), delta_cursor, short_of)
        data, answer = await self.screen_model.view(options, scrollback=scrollback, changed_rows=changed, extra=extra)
        facts = {"cols": data.cols, "rows": data.rows, "state": data.extra["state"], "title": data.title,
                 "cwd": self.reported_cwd or self.meta.cwd, "raw_size": data.extra["raw_offset"]}  # fmt: skip
        self.recorder.record(frames.screen_frame(self.id, data, facts, options, scrollback))
        return answer

    def send(
        self, *steps: InputStep, text: str | None = None, keys: list[str] | None = None, paste: str | None = None,
        take_over: bool = False,
    ) -> dict[str, Any]:  # fmt: skip
        """Write input, step by step in order (see lookout.terminal.input.steps), then one more step of `text`,
        `keys` and `paste` if given; the next wait starts here. Another hand's lease refuses it (Leased),
        unless `take_over` (a person shown the lease), recorded the first time."""
        if text is not None or keys or paste is not None:
            steps = (*steps, InputStep(text=text, keys=tuple(keys or ()), paste=paste))
        if not self.running or self._process is None:
            raise Conflict(f"terminal {self.id} has {self.meta.status}; it takes no more input")
        if self.writes.released:
            raise TakenOver(f"terminal {self.id} is being taken over by a restarted daemon; send the input again")
        pending = self._process.pending
        encoded = encode_within(steps, self.screen_model.bracketed_paste, self.screen_model.current().app_cursor_keys,
                                self.limits.max_input_bytes, pending, self.id)  # fmt: skip
        data, offset, hidden = encoded.data, self.raw_offset, not self._process.echoing()
        if (taken := self.admit(current_agent.get(), take_over)) is not None:
            self.recorder.record(frames.take_over_frame(self.id, taken))
        self.recorder.record(frames.input_frame(self.id, steps, hidden))
        self.hands.record(current_agent.get(), offset, steps, encoded, hidden, self.state(fresh=False))
        self._process.write(data, redact=hidden)
        return {"bytes_written": len(data), "raw_offset": offset, "pending": self._process.pending}

    def lease_key(self) -> str:
        return frames.resource(self.id)

    def unholdable(self) -> str | None:
        return None if self.running else f"terminal {self.id} has {self.meta.status}: there is nothing to hold"

    def resize(self, cols: int, rows: int) -> None:
        """Resize the PTY (its holder records where in the output it did; the screen takes it there: `_size_taken`);
        a frame names who asked (the request's agent). Another hand's lease refuses it (Leased)."""
        if not self.running or self._process is None:
            raise Conflict(f"terminal {self.id} has {self.meta.status}; it cannot be resized")
        self.admit(current_agent.get())
        before = (self.meta.cols, self.meta.rows)
        self._process.resize(cols, rows)
        self.recorder.record(frames.resize_frame(self.id, before, (cols, rows)))
        files.record_size(self.writes, self.directory, self.meta, cols, rows)

    def _size_taken(self, cols: int, rows: int) -> None:
        """The journal says the terminal took this size here, in its output (resized through this daemon, an
        earlier one, or its holder directly): the screen takes it at the same point as a replay does, and live
        viewers are told (they never resize the PTY themselves)."""
        engine = self.screen_model.engine
        if engine is None or (engine.cols, engine.rows) == (cols, rows):
            return
        self.screen_model.resize(cols, rows)
        for listener in tuple(self._resize_listeners):
            listener(cols, rows)
        self.bus.publish("terminal.resized", id=self.id, cols=cols, rows=rows)
        files.record_size(self.writes, self.directory, self.meta, cols, rows)
        self._pulse.fire()

    # ----------------------------------------------------------------- streams

    async def finished(self) -> None:
        """Returns once the process has exited and its output is all read."""
        await self._finalized.wait()

    def subscribe_resizes(self, listener: Callable[[int, int], None]) -> Callable[[], None]:
        """Call `listener(cols, rows)` after every resize from now on; returns the unsubscribe function."""
        self._resize_listeners.add(listener)
        return lambda: self._resize_listeners.discard(listener)

    def subscribe_output(self, listener: Callable[[bytes], None]) -> Callable[[], None]:
        """Call `listener` with every chunk of output from now on; returns the unsubscribe function."""
        return self._ingest.subscribe(listener)

    async def wait(self, until: Until, since: int | None, timeout_ms: int) -> WaitResult:
        """See lookout.terminal.waits.waiting. `since` defaults to the caller's own last input (lookout.core.hands): the wait
        then skips its echo and takes a state only as the terminal's answer to it."""
        hand = current_agent.get()
        origin = self.hands.origin(hand) if since is None else Origin(since=since, hand=hand)
        if origin.since < 0 or origin.since > self.raw_offset:
            raise BadInput(f"since={origin.since} is outside the output (0..{self.raw_offset})", field="since")
        await self.screen_model.load()
        return await wait_until(self, until, origin, timeout_ms / 1000)

    async def detach(self) -> None:
        """Leave the program running under its holder (the daemon is ending), with a last snapshot for the
        daemon that adopts it."""
        if self._process is not None and not self._finalized.is_set():
            self._process.detach()
            await self.screen_model.save_now()

    def stop_waits(self) -> None:
        """The daemon is stopping: every wait answers now, with the cursor to resume from."""
        self.stopping = True
        self._pulse.fire()

    def take_back(self) -> None:
        """Undo `release` (the daemon that was to take over failed): write and control the terminal again."""
        self.writes.released = False
        if self._process is not None:
            self._process.released = False

    async def release(self) -> None:
        """Another daemon takes this terminal over: write what it takes up from, then only follow the terminal
        (answers begun here end true): write no file, change nothing of its holder, tell nobody of its events."""
        if self._process is not None and not self._finalized.is_set():
            await self.screen_model.save_now()
            self._process.released = True
        await self.screen_model.written()  # an exited one's last files too
        self.writes.released = True

    async def stop(self) -> None:
        """End the program: its holder's stop ladder, or without a holder the same ladder run by lookout
        (lookout.terminal.process.holders). Returns once it is gone and its files are written (a purge may remove them),
        `meta.ended_by` the signal after which it was gone; Conflict, saying what, when something remains."""
        self.ending, self.hands.stopped_by = True, current_agent.get()
        process, holder_failed = self._process, None
        if process is not None and not self._finalized.is_set():
            holder_failed = await process.stop()
        await self.screen_model.written()  # the end's files, before a lost one's end is written over them
        if self.meta.status == "lost":
            try:
                ending = await asyncio.to_thread(
                    holders.end_lost, self.holders, self.directory, self.meta, self.meta_known, holder_failed
                )
            except holders.NotEnded as exc:
                self.ending = False
                raise Conflict(f"terminal {self.id} is not ended: {exc}") from None
            self.bus.publish("terminal.exited", id=self.id, exit_code=ending.code, ended_by=ending.signal)
            self.recorder.record(frames.exit_frame(self.id, ending.code, True, current_agent.get()))
