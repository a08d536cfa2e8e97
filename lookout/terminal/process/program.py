"""A terminal's program while the daemon follows it: through its holder (lookout.terminal.process.holder_link) for what
goes in (input, answers to queries, resizes, markers, the stop ladder), through the journal the holder
writes (lookout.terminal.journal.follower) for what comes out, and through its terminal (lookout.terminal.process.tty) for
what it is doing.

Output is handed on in batches of PUMP_BYTES, one per turn of the event loop, so a flood (or the backlog an
adopted terminal wrote while no daemon ran) never holds other work up; `catch_up` takes an answer up to what
the program has written by now. When the program has exited and the journal is read to its end, `on_exit` is
called once with the exit code, or with None and the reason when the holder ended without recording one;
then `ended` is set.
"""

from __future__ import annotations

import asyncio
import base64
import logging
import time
from collections.abc import Callable
from typing import Any

from lookout.terminal.journal.follower import Batch, JournalFollower
from lookout.terminal.process.clean_stop import KILLED
from lookout.terminal.process.holder_link import Greeted, HolderLink
from lookout.terminal.process.state import State, derive_state
from lookout.terminal.process.tty import Tty

log = logging.getLogger(__name__)

PUMP_BYTES = 256 << 10
STOP_TIMEOUT_S = 15.0
"""How long `stop` waits for the holder's ladder (hangup, terminate, kill: about 7 s) to end the program."""
SYNC_TIMEOUT_S = 2.0
"""How long `catch_up` waits for the holder to say what the PTY held; then the journal's size on disk is
what the answer reflects."""

OutputSink = Callable[[Batch], None]
"""on_output(batch): the next output as the journal holds it, with the genuine shell marks in it."""
ExitSink = Callable[[int | None, str | None], None]
"""on_exit(exit code, None) or on_exit(None, why it is not known)."""


class TerminalProcess:
    def __init__(self, follower: JournalFollower, *, on_output: OutputSink, on_exit: ExitSink) -> None:
        self.follower = follower
        self.link: HolderLink | None = None
        self.stopping = False
        """lookout itself is ending the program (DELETE, `lookout kill`)."""
        self.released = False
        """Another daemon has taken the terminal over: this one only follows it (and syncs), and sends its
        holder nothing that changes the terminal."""
        self.ended = asyncio.Event()
        self.failure: str | None = None
        """Why the journal misses output (the holder could not write it: a full disk), or None."""
        self._on_output = on_output
        self._on_exit = on_exit
        self._announced = follower.offset
        self._exit: int | None = None
        self.ended_by: str | None = None
        """The stop ladder's signal after which the program ended, when the holder says."""
        self._holder_gone = False
        self._gone_reason = KILLED
        self._scheduled = False
        self._syncs: dict[int, asyncio.Future[int]] = {}
        self._next_sync = 0

    def follow_holder(self, holder: Greeted) -> None:
        """Follow the program through its holder, which has greeted the daemon (lookout.terminal.process.holder_link: a new
        terminal's, or one an earlier run of the daemon left)."""
        self.link = HolderLink(holder.sock, holder.greeting, holder.master, self._on_message, self._on_closed)
        self._announced = max(self._announced, int(holder.greeting.get("size") or 0))
        self.failure = holder.greeting.get("failure") or None
        self._schedule()

    def without_holder(self, gone_reason: str | None = None) -> None:
        """The holder has ended: read the journal to its end, then end with its recorded exit (or, when it
        recorded none, `lost` with `gone_reason`, by default that it may have been killed)."""
        self._gone_reason = gone_reason or self._gone_reason
        self._on_closed()

    @property
    def journal_size(self) -> int:
        """How much output the journal holds, as far as the holder has said (the ingest may be behind it)."""
        return max(self._announced, self.follower.offset)

    @property
    def tty(self) -> Tty | None:
        return self.link.tty if self.link is not None else None

    @property
    def pending(self) -> int:
        """Bytes of input (and other messages) the holder has not taken yet."""
        return self.link.pending if self.link is not None else 0

    def state(self, *, alt_screen: bool, shell: bool, command_running: bool | None, line_editor: bool) -> State:
        """What the program is doing (lookout.terminal.process.state), from its terminal's modes and foreground process and
        what the screen and the shell's marks say; `exited` once its terminal is not followed any more."""
        tty = self.tty
        if tty is None:
            return "exited"
        return derive_state(
            exited=False, alt_screen=alt_screen, flags=tty.tty_flags(), foreground=tty.foreground_pgid(),
            leader=tty.pid, leader_is_shell=shell, waits_for_input=tty.waits_for_input,
            command_running=command_running, line_editor=line_editor,
        )  # fmt: skip

    def leader_reading(self) -> bool:
        """Whether the program (its session's leader) is in the foreground, asleep in a read of its terminal."""
        tty = self.tty
        return tty is not None and tty.foreground_pgid() == tty.pid and tty.waits_for_input(tty.pid)

    def echoing(self) -> bool:
        """Whether its terminal shows what is typed: not while it reads a line without echo (a password)."""
        flags = self.tty.tty_flags() if self.tty is not None else None
        return flags is None or not flags.canonical or flags.echo

    async def catch_up(self, within: float | None = None) -> int | None:
        """Return once the ingest has taken every byte the program wrote before this call: the holder reads
        what its PTY holds into the journal and says the journal's size (a holder of protocol version 1, or
        one that does not answer within SYNC_TIMEOUT_S: the size on disk now), and the journal is followed
        up to there. With `within` (seconds), return by then at the latest: None when caught up, else the
        journal offset not reached (the ingest goes on)."""
        if self.ended.is_set():
            return None
        deadline = None if within is None else time.monotonic() + within
        target = self.follower.size
        link = self.link
        if link is not None and int(link.greeting.get("version", 1)) >= 2 and not self._holder_gone:
            self._next_sync += 1
            number = self._next_sync
            synced = self._syncs[number] = asyncio.get_running_loop().create_future()
            link.send("sync", id=number)
            try:
                target = max(target, await asyncio.wait_for(synced, SYNC_TIMEOUT_S))
            except TimeoutError:
                log.warning("the holder of pid %s did not answer a sync within %.0f s", link.tty.pid, SYNC_TIMEOUT_S)
            finally:
                self._syncs.pop(number, None)
        self._announced = max(self._announced, target)
        while self._advance():
            if not self.follower.behind(target):
                break
            if deadline is not None and time.monotonic() >= deadline:
                return target
            await asyncio.sleep(0)  # a large backlog: other work goes on between batches
        return None

    def write(self, data: bytes, redact: bool) -> None:
        """Send input (recorded in the journal as `i`, its bytes left out when `redact`)."""
        if self.link is not None and not self.released:
            self.link.send("input", data=base64.b64encode(data).decode("ascii"), redact=redact)

    def answer(self, reply: bytes) -> None:
        """Answer a terminal query (DA, DSR, CPR) as a terminal would, ahead of queued input."""
        if self.link is not None and not self.ended.is_set() and not self.released:
            self.link.send("answer", data=base64.b64encode(reply).decode("ascii"))

    def resize(self, cols: int, rows: int) -> None:
        if self.link is not None and not self.released:
            self.link.send("resize", cols=cols, rows=rows)

    def mark(self, label: str) -> None:
        if self.link is not None and not self.released:
            self.link.send("mark", label=label)

    async def stop(self) -> str | None:
        """End the program: the holder's stop ladder (hang up, terminate, kill the session). Returns once it has
        exited and its output is read; a holder that has not ended it within STOP_TIMEOUT_S is let go (the
        journal is read to its end, and the exit is what it records, or unknown), and the answer says so: the
        ladder is then lookout's to run (lookout.terminal.process.holders)."""
        if self.ended.is_set():
            return None
        self.stopping = True
        if self.link is not None:
            self.link.send("stop")
        try:
            await asyncio.wait_for(self.ended.wait(), STOP_TIMEOUT_S)
            return None
        except TimeoutError:
            log.warning("the program on pid %s did not end within %.0f s of its stop", self.tty and self.tty.pid,
                        STOP_TIMEOUT_S)  # fmt: skip
        self._gone_reason = f"its holder did not end the program within {STOP_TIMEOUT_S:.0f} s"
        if self.link is not None:
            self.link.close()
        self._on_closed()
        await self.ended.wait()
        return self._gone_reason

    def detach(self) -> None:
        """Leave the holder running (the daemon is ending)."""
        self._holder_gone = False
        if self.link is not None:
            self.link.close()

    # ----------------------------------------------------------------- following

    def _on_message(self, message: dict[str, Any]) -> None:
        op = message["op"]
        if op == "out":
            self._announced = max(self._announced, int(message["size"]))
            self.failure = message.get("failure") or self.failure
        elif op == "synced":
            waiter = self._syncs.get(message["id"]) if isinstance(message.get("id"), int) else None
            if waiter is not None and not waiter.done() and isinstance(message.get("size"), int):
                waiter.set_result(message["size"])
        elif op == "exit":
            self._exit = int(message["code"])
            self._announced = max(self._announced, int(message["size"]))
            self.ended_by = message.get("signal") if isinstance(message.get("signal"), str) else None
        elif op == "error":
            log.error("holder of pid %s: %s", self.tty and self.tty.pid, message.get("message"))
        elif op == "failed":  # a new terminal's holder could not take it up: the program never ran
            self._gone_reason = f"its holder could not start the program: {str(message.get('message'))[:500]}"
        self._schedule()

    def _on_closed(self) -> None:
        self._holder_gone = True
        for waiter in self._syncs.values():
            if not waiter.done():
                waiter.set_result(self.follower.size)
        self._schedule()

    def _schedule(self) -> None:
        if not self._scheduled and not self.ended.is_set():
            self._scheduled = True
            asyncio.get_running_loop().call_soon(self._pump)

    def _pump(self) -> None:
        self._scheduled = False
        if self._advance():
            self._schedule()

    def _advance(self) -> bool:
        """Hand on the next batch of what the holder announced (or, once it has ended, of the whole journal);
        returns whether more is left."""
        if self.ended.is_set():
            return False
        done = self._exit is not None or self._holder_gone
        target = self.follower.size if done else self._announced
        if self.follower.behind(target):
            batch = self.follower.read(target, PUMP_BYTES)
            if batch.data or batch.size is not None:
                self._on_output(batch)
            if self.follower.offset < target or self.follower.resize_here:  # `read` has just read the index
                return True
        if done:
            self._finish()
        return False

    def _finish(self) -> None:
        self.follower.refresh()
        code = self._exit if self._exit is not None else self.follower.exit_code
        if self.link is not None:
            self.link.close()
        self.follower.close()
        if code is None:
            self._on_exit(None, self._gone_reason)
        else:
            self._on_exit(code, None)
        self.ended.set()
