"""A terminal's program while it runs: its output handed on as the reading thread takes it off the PTY
(app.terminal.pty_reader), its input written without blocking, its exit seen through a pidfd, and the stop
ladder.

When the leader exits, the output that is still in the PTY is drained before the master is closed, so
nothing a fast program wrote is lost; then `on_exit` is called once, and `ended` is set.
"""

from __future__ import annotations

import asyncio
import logging
import os
import signal
from collections.abc import Callable

from app.terminal.pty_process import PtyProcessHandle
from app.terminal.pty_reader import PtyReader, read_batch

log = logging.getLogger(__name__)

EXIT_DRAIN_S = 1.0
"""After the leader exits, how long to keep reading output that is still on its way (or written by
children that kept the terminal open) before the master is closed."""
STOP_LADDER = ((signal.SIGHUP, 1.0), (signal.SIGTERM, 1.0), (signal.SIGKILL, 2.0))
WRITE_CHUNK = 65536

OutputSink = Callable[[bytes, bool], None]
"""on_output(data, final): output read from the PTY; `final` (with no data) once, after the last of it."""


async def spawn(
    argv: list[str], cwd: str, env: dict[str, str], cols: int, rows: int, pass_fd: int | None
) -> PtyProcessHandle:
    """Fork and exec `argv` on a new PTY, in a worker thread (see PtyProcessHandle.spawn); watch it with
    TerminalProcess, or end it with `discard`."""
    return await asyncio.to_thread(PtyProcessHandle.spawn, argv, cwd, env, cols, rows, pass_fd)


async def discard(handle: PtyProcessHandle) -> None:
    """Kill a spawned process that will not be watched, close its PTY and reap it."""
    handle.signal_session(signal.SIGKILL)
    handle.close_fd()
    await asyncio.to_thread(os.waitpid, handle.pid, 0)


class TerminalProcess:
    """A spawned process on its PTY, watched from the loop from construction on."""

    def __init__(
        self, handle: PtyProcessHandle, reader: PtyReader, *, on_output: OutputSink, on_exit: Callable[[int], None]
    ) -> None:
        self.handle = handle
        self.stopping = False
        """lookout itself is ending the process (close, shutdown)."""
        self.ended = asyncio.Event()
        self._on_output = on_output
        self._on_exit = on_exit
        self._outbox = bytearray()
        self._leader_exit: int | None = None
        self._hung_up = False
        self._finishing = False
        self._feed = reader.add(handle.fd, self._on_readable)
        self._pidfd: int | None = handle.pidfd()
        asyncio.get_running_loop().add_reader(self._pidfd, self._on_leader_exit)

    @property
    def pid(self) -> int:
        return self.handle.pid

    # ----------------------------------------------------------------- input

    @property
    def pending(self) -> int:
        """Bytes of input not yet accepted by the PTY."""
        return len(self._outbox)

    def write(self, data: bytes) -> None:
        """Queue input and write what the PTY accepts now; the rest follows when it is writable."""
        self._outbox += data
        self._flush()

    def answer(self, reply: bytes) -> None:
        """Answer a terminal query (DA, DSR, CPR) as a terminal would, ahead of queued input."""
        if not self.ended.is_set():
            self._outbox[0:0] = reply
            self._flush()

    def _flush(self) -> None:
        loop = asyncio.get_running_loop()
        while self._outbox:
            try:
                n = self.handle.write(bytes(self._outbox[:WRITE_CHUNK]))
            except OSError:  # the terminal went away; what is pending cannot be delivered
                self._outbox.clear()
                break
            if n == 0:
                break
            del self._outbox[:n]
        if self._outbox:
            loop.add_writer(self.handle.fd, self._flush)
        else:
            loop.remove_writer(self.handle.fd)

    # ----------------------------------------------------------------- output and exit

    def _on_readable(self) -> None:
        """The reading thread has a batch (see app.terminal.pty_reader)."""
        data, hangup = self._feed.take()
        if data:
            self._on_output(data, False)
        if hangup:
            self._on_hangup()
        elif not self._finishing:
            self._feed.resume()

    def _on_hangup(self) -> None:
        self._hung_up = True
        self._feed.stop()
        if self._leader_exit is not None:
            self._finish()

    def _on_leader_exit(self) -> None:
        assert self._pidfd is not None
        loop = asyncio.get_running_loop()
        loop.remove_reader(self._pidfd)
        os.close(self._pidfd)
        self._pidfd = None
        code = self.handle.reap()
        self._leader_exit = code if code is not None else -signal.SIGKILL
        if self._hung_up:
            self._finish()
        else:
            loop.call_later(EXIT_DRAIN_S, self._finish)

    def _finish(self) -> None:
        """Drain what is left, close the PTY, report the exit."""
        if self._finishing or self._leader_exit is None:
            return
        self._finishing = True  # the drain below may see the hang-up, which would finish again
        if not self._hung_up:
            self._feed.stop()
            taken, _ = self._feed.take()
            drained, _ = read_batch(self.handle.fd)
            if taken or drained:
                self._on_output(taken + drained, False)
        self._on_output(b"", True)
        asyncio.get_running_loop().remove_writer(self.handle.fd)
        self.handle.close_fd()
        self._outbox.clear()
        self._on_exit(self._leader_exit)
        self.ended.set()

    async def stop(self) -> None:
        """Hang up, then terminate, then kill the terminal's processes until the leader is gone; then kill
        whatever is left in its session (background jobs that ignored the hangup)."""
        if self.ended.is_set():
            return
        self.stopping = True
        for sig, grace in STOP_LADDER:
            self.handle.signal_session(sig)
            try:
                await asyncio.wait_for(self.ended.wait(), grace + EXIT_DRAIN_S)
                break
            except TimeoutError:
                continue
        else:
            log.error("terminal on pid %s: the leader survived SIGKILL", self.handle.pid)
        self.handle.signal_session(signal.SIGKILL, leader=False)
