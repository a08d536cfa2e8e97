"""A terminal's holder at work: one process, one terminal, one selector loop.

Made by the fork server (lookout.terminal.holder.server) ahead of its terminal, in a session and process group of
its own and nobody's child, with the PTY and the process that becomes the program already made
(lookout.terminal.holder.pty.fork_ahead) and a connection to the daemon that counts as greeted (the daemon has
the other end, the PTY's master and the program's pid before it sends the spec). Given the spec, it takes
the journal's files, its log and its listening socket from the daemon (which made them;
lookout.terminal.holder.protocol.SPEC_FDS) and has that process run the program (lookout.terminal.holder.takeup);
one that cannot says why (`failed`) on that connection and ends. From then on it

- reads the PTY and appends every byte to the journal (of which it is the only writer), with the shell
  integration's nonce masked and each genuine mark's offset recorded as an `n` index record written before
  the bytes it names;
- writes input, answers to terminal queries, resizes and markers from its clients, recorded at their true
  offsets, after checking each (a size out of range is refused and answered, never applied);
- tells each connected client (the daemon, `lookout kill`) how far the journal has grown, and on `sync` reads
  what the PTY holds into the journal first. A client that is slow or gone is never waited for: the journal
  on disk is the buffer, so nothing is dropped and the program never waits on the daemon;
- runs the stop ladder when asked;
- reaps the program, drains what it left in the PTY, records its exit (`x`), tells the clients, and ends.
"""

from __future__ import annotations

import base64
import binascii
import os
import selectors
import signal
import socket
import time
from collections.abc import Callable
from dataclasses import dataclass
from functools import partial
from typing import Any

from lookout.terminal.holder import protocol as proto
from lookout.terminal.holder.door import Door
from lookout.terminal.holder.holder_log import log
from lookout.terminal.holder.journal import INDEX_FLUSH_S, JournalWriter
from lookout.terminal.holder.nonce import NonceFilter
from lookout.terminal.holder.pace import PACE_S, Pace
from lookout.terminal.holder.pty import (
    READ_BYTES,
    STOP_LADDER,
    children,
    read_batch,
    set_size,
    signal_session,
)
from lookout.terminal.holder.sizes import check_size

EXIT_DRAIN_S = 1.0
"""After the program exits, how long output still on its way (or written by children that kept the terminal
open) is read before the PTY is closed."""
MAX_INPUT_PENDING = 4 << 20
"""Input the program has not read yet past which the holder stops taking more from its clients."""
MAX_LABEL = 4096
SYNC_BYTES = 16 << 20
"""The most a `sync` reads from the PTY before it answers (the PTY's buffer holds far less; a program that
writes faster than the holder reads is caught up with by the next one)."""


@dataclass(frozen=True, slots=True)
class Started:
    """A holder's program, just started: its journal (with the first size recorded), PTY and pid."""

    journal: JournalWriter
    cols: int
    rows: int
    master: int
    pid: int
    reaper: int | None
    """This holder's pid when it is its program's child subreaper (pty.become_subreaper), else None."""


class Client:
    """One connection: its received bytes and what waits to be sent to it."""

    def __init__(self, sock: socket.socket) -> None:
        self.sock = sock
        self.lines = proto.LineBuffer()
        self.outbox = bytearray()
        self.owed = False
        """A growth of the journal not yet announced (announced when the outbox is empty again)."""
        self.greeted = False


class Holder:
    """A holder whose program runs (`start`): its state, and its loop (`run`)."""

    def __init__(self, spec: dict[str, Any], started: Started, listener: socket.socket, greeted: socket.socket) -> None:
        self.id: str = spec["id"]
        self.journal = started.journal
        self.cols, self.rows = started.cols, started.rows
        self.nonce = NonceFilter(spec["nonce"]) if spec.get("nonce") else None
        self.selector = selectors.DefaultSelector()
        self.clients: dict[int, Client] = {}
        self.paused: set[Client] = set()
        """Clients not read while the program is behind with its input."""
        self.input = bytearray()
        self.exit_code: int | None = None
        self.ended_by: str | None = None
        """The stop ladder's signal that the program ended after (its name), if it ended on the ladder."""
        self.hung_up = False
        self.pace = Pace()
        self.done = False
        self.deadlines: dict[str, tuple[float, Callable[[], None]]] = {}
        self.ladder: list[tuple[int, float]] = []
        self.last_rung: int | None = None
        self.stopping = False
        self.dir_fd = proto.open_dir(spec["socket_dir"])
        self.socket_name = proto.socket_name(self.id)
        self.listener = listener
        self.listener.setblocking(False)
        self.door = Door(listener, self.selector, self._on_connect, self.deadlines)
        self.master, self.pid, self.reaper = started.master, started.pid, started.reaper
        os.set_blocking(self.master, False)
        self.pidfd = os.pidfd_open(self.pid)
        self._greeted(greeted)

    # ----------------------------------------------------------------- the loop

    def run(self) -> None:
        self._watch_master()
        self.selector.register(self.pidfd, selectors.EVENT_READ, self._on_exit)
        if self.reaper is not None:  # processes of the program's session whose parent ended are ours to reap
            woken, wake = os.pipe2(os.O_NONBLOCK | os.O_CLOEXEC)
            signal.signal(signal.SIGCHLD, lambda *_: None)
            signal.set_wakeup_fd(wake, warn_on_full_buffer=False)
            self.selector.register(woken, selectors.EVENT_READ, partial(self._reap_adopted, woken))
        self.door.open()
        while not self.done:
            now = time.monotonic()
            due = min((at for at, _ in self.deadlines.values()), default=now + 1.0)
            for key, events in self.selector.select(max(0.0, min(due - now, INDEX_FLUSH_S))):
                try:
                    key.data(events)
                except Exception as exc:  # noqa: BLE001 (a fault in one event must not end the program's terminal)
                    log(f"an event failed: {exc!r}")
            now = time.monotonic()
            for name, (at, action) in list(self.deadlines.items()):
                if at <= now and self.deadlines.get(name) == (at, action):
                    del self.deadlines[name]
                    action()
            if not self.done:
                self.journal.flush_if_due()

    def _reap_adopted(self, woken: int, _events: int) -> None:
        """A child changed state: reap the ended ones the holder adopted (never the program: `_on_exit` does)."""
        try:
            os.read(woken, 4096)
        except BlockingIOError:
            pass
        for child in children(os.getpid()) or []:
            if child != self.pid:
                try:
                    os.waitpid(child, os.WNOHANG)
                except ChildProcessError:
                    pass

    def _on_master(self, events: int) -> None:
        if events & selectors.EVENT_WRITE:
            self._write(b"")
        if events & selectors.EVENT_READ and not self.hung_up:
            self._follow()

    def _follow(self) -> None:
        """Read what the PTY holds, and rest before the next read if its pace says so (lookout.terminal.holder.pace)."""
        now, was_resting = time.monotonic(), self.pace.resting
        got = self._read_master(READ_BYTES)
        if self.hung_up or self.done:
            return
        if self.pace.read(now, got):
            self.deadlines["rest"] = (now + PACE_S, self._follow)
        if self.pace.resting != was_resting:
            self._watch_master()

    def _attend(self) -> None:
        """Input was written: read the PTY at once again, so that what answers it is read as it comes."""
        resting = self.pace.resting
        self.pace.attend(time.monotonic())
        if resting:
            self.deadlines.pop("rest", None)
            self._watch_master()

    def _read_master(self, limit: int) -> int:
        """Read what the PTY holds (up to about `limit` bytes) into the journal; how much it held."""
        data, hangup = read_batch(self.master, limit)
        self._store(data, final=hangup)
        if hangup:
            self.hung_up = True
            self._watch_master()
            if self.exit_code is not None:
                self._finish()
        return len(data)

    def _watch_master(self) -> None:
        """Read the PTY until it hangs up; write to it while input waits."""
        events = (0 if self.hung_up or self.pace.resting else selectors.EVENT_READ) | (
            selectors.EVENT_WRITE if self.input else 0
        )
        registered = self.master in self.selector.get_map()
        if events and registered:
            self.selector.modify(self.master, events, self._on_master)
        elif events:
            self.selector.register(self.master, events, self._on_master)
        elif registered:
            self.selector.unregister(self.master)

    def _store(self, data: bytes, final: bool) -> None:
        if self.nonce is not None:
            shown = self.nonce.feed(data, final)
            genuine = self.nonce.positions
        else:
            shown, genuine = data, []
        if shown:
            self.journal.write_output(shown, genuine)
            self._announce()

    def _announce(self) -> None:
        for client in list(self.clients.values()):
            if client.greeted:
                client.owed = True
                self._flush(client)

    def _on_exit(self, _events: int) -> None:
        self.selector.unregister(self.pidfd)
        os.close(self.pidfd)
        try:
            _, status = os.waitpid(self.pid, 0)
            self.exit_code = os.waitstatus_to_exitcode(status)
        except ChildProcessError:
            self.exit_code = -signal.SIGKILL
        if self.last_rung is not None:
            self.ended_by = signal.Signals(self.last_rung).name
        if self.hung_up:
            self._finish()
        else:
            self.deadlines["drain"] = (time.monotonic() + EXIT_DRAIN_S, self._finish)

    def _finish(self) -> None:
        """Drain what is left, record the exit, tell the clients, close everything."""
        if self.done:
            return
        self.done = True
        assert self.exit_code is not None
        if not self.hung_up:
            data, _ = read_batch(self.master, limit=64 << 20)
            self._store(data, final=True)
        elif self.nonce is not None:
            self._store(b"", final=True)
        if self.stopping:  # nothing of the session may stay behind
            signal_session(self.pid, signal.SIGKILL, self.reaper)
        if self.master in self.selector.get_map():
            self.selector.unregister(self.master)
        os.close(self.master)
        self.journal.record("x", self.exit_code)
        self.journal.close()
        try:
            os.unlink(self.socket_name, dir_fd=self.dir_fd)
        except FileNotFoundError:
            pass
        ended_by = {"signal": self.ended_by} if self.ended_by else {}
        for client in list(self.clients.values()):
            if not client.greeted:  # it finds the holder gone, and the exit in the journal
                client.sock.close()
                continue
            client.outbox += proto.encode("exit", code=self.exit_code, size=self.journal.size, **ended_by)
            try:
                client.sock.setblocking(True)
                client.sock.settimeout(1.0)
                client.sock.sendall(bytes(client.outbox))
            except OSError:
                pass
            client.sock.close()

    # ----------------------------------------------------------------- clients

    def _on_connect(self, _events: int) -> None:
        sock = self.door.accept(len(self.clients))
        if sock is None:
            return
        sock.setblocking(False)
        client = Client(sock)
        self.clients[sock.fileno()] = client
        self.selector.register(sock, selectors.EVENT_READ, partial(self._on_client, client))

    def _on_client(self, client: Client, events: int) -> None:
        if events & selectors.EVENT_WRITE:
            self._flush(client)
        if not events & selectors.EVENT_READ or client.sock.fileno() < 0:
            return
        data = proto.receive(client.sock)
        if data is None:
            return
        if not data:
            self._drop(client)
            return
        try:
            messages = client.lines.feed(data)
        except proto.ProtocolError as exc:
            self._refuse(client, str(exc), None)
            return
        for message in messages:
            try:
                self._handle(client, message)
            except proto.Refused as exc:
                self._refuse(client, str(exc), message["op"])
            except proto.ProtocolError as exc:
                self._refuse(client, str(exc), None)
                return

    def _refuse(self, client: Client, why: str, op: str | None) -> None:
        """Answer a message that is not accepted (`refused`: its op); without `op` (not the protocol at all)
        the client is also disconnected."""
        log(f"refused {'a message' if op is None else repr(op)}: {why}")
        client.outbox += proto.encode("error", message=why[:200], **({"refused": op} if op else {}))
        self._flush(client)
        if op is None:
            self._drop(client)

    def greeting_fields(self) -> dict[str, Any]:
        """What the `hello` tells of the holder."""
        return greeting(self.id, self.pid, self.journal, self.cols, self.rows, self.exit_code)

    def _greeted(self, sock: socket.socket) -> None:
        """Take `sock` as a client greeted from the start: the daemon that opened this terminal has the other
        end (handed to it with the spare, lookout.terminal.holder.server)."""
        sock.setblocking(False)
        client = Client(sock)
        client.greeted = True
        self.clients[sock.fileno()] = client
        self.selector.register(sock, selectors.EVENT_READ, partial(self._on_client, client))

    def _handle(self, client: Client, message: dict[str, Any]) -> None:
        op = message["op"]
        if op == "hello":
            socket.send_fds(client.sock, [proto.encode("hello", **self.greeting_fields())], [self.master])
            client.greeted = True
        elif not client.greeted:
            raise proto.ProtocolError(f"{op!r} before hello")
        elif op == "input":
            data = _base64(message, "data")
            self.journal.record_input(data, redact=message.get("redact") is True)
            self._write(data)
            self._attend()
        elif op == "answer":
            self.input[0:0] = _base64(message, "data")
            self._write(b"")
        elif op == "resize":
            try:
                cols, rows = check_size(message.get("cols"), message.get("rows"))
            except ValueError as exc:
                raise proto.Refused(f"resize refused: {exc}") from None
            self._resize(cols, rows)
        elif op == "mark":
            label = message.get("label")
            if not isinstance(label, str) or len(label) > MAX_LABEL:
                raise proto.Refused(f"mark refused: its label must be a string of at most {MAX_LABEL} characters")
            self.journal.record("m", label)
        elif op == "sync":
            if not self.hung_up:
                self._read_master(SYNC_BYTES)
            client.outbox += proto.encode("synced", id=message.get("id"), size=self.journal.size)
            self._flush(client)
        elif op == "stop":
            if not self.stopping:
                self.stopping = True
                self.ladder = list(STOP_LADDER)
                self._climb()
        else:
            raise proto.Refused(f"unknown op {op!r}")

    def _resize(self, cols: int, rows: int) -> None:
        """Resize the PTY where the journal is once it holds what the program wrote at the old size (a replay
        resizes there too); nothing once the program has ended and its output is all journaled."""
        if not self.hung_up:
            self._read_master(SYNC_BYTES)
        if self.hung_up and self.exit_code is not None:  # it has ended: the holder has finished
            return
        set_size(self.master, cols, rows)
        self.cols, self.rows = cols, rows
        self.journal.record("r", f"{cols}x{rows}")

    def _climb(self) -> None:
        """The next rung of the stop ladder (until the program has exited)."""
        if self.exit_code is not None or not self.ladder:
            return
        sig, grace = self.ladder.pop(0)
        self.last_rung = sig
        signal_session(self.pid, sig, self.reaper)
        self.deadlines["ladder"] = (time.monotonic() + grace + EXIT_DRAIN_S, self._climb)

    def _flush(self, client: Client) -> None:
        if client.owed and not client.outbox:
            client.outbox += self._growth()
            client.owed = False
        while client.outbox:
            try:
                sent = client.sock.send(client.outbox)
            except BlockingIOError:
                break
            except OSError:
                self._drop(client)
                return
            del client.outbox[:sent]
            if not client.outbox and client.owed:
                client.outbox += self._growth()
                client.owed = False
        self._watch_client(client)

    def _growth(self) -> bytes:
        """The `out` message: the journal's size, and why it misses output if it does (a full disk)."""
        if self.journal.failure is None:
            return proto.encode("out", size=self.journal.size)
        failure = f"{self.journal.failure}; output past offset {self.journal.size} is neither stored nor shown"
        return proto.encode("out", size=self.journal.size, failure=failure)

    def _watch_client(self, client: Client) -> None:
        """Read a client unless the program is behind with its input (back-pressure); write while its outbox
        holds something."""
        events = (0 if len(self.input) > MAX_INPUT_PENDING else selectors.EVENT_READ) | (
            selectors.EVENT_WRITE if client.outbox else 0
        )
        key = self.selector.get_map().get(client.sock.fileno())
        if key is None:
            return
        if events:
            self.selector.modify(client.sock, events, key.data)
        else:
            self.selector.unregister(client.sock)
            self.paused.add(client)

    def _drop(self, client: Client) -> None:
        self.clients.pop(client.sock.fileno(), None)
        self.paused.discard(client)
        try:
            self.selector.unregister(client.sock)
        except (KeyError, ValueError):
            pass
        client.sock.close()

    # ----------------------------------------------------------------- input

    def _write(self, data: bytes) -> None:
        self.input += data
        while self.input:
            try:
                n = os.write(self.master, self.input[:65536])
            except BlockingIOError:
                break
            except OSError:  # the terminal went away: what is pending cannot be delivered
                self.input.clear()
                break
            del self.input[:n]
        self._watch_master()
        if len(self.input) <= MAX_INPUT_PENDING:
            for client in self.paused:
                if client.sock.fileno() >= 0:
                    self.selector.register(client.sock, selectors.EVENT_READ, partial(self._on_client, client))
            self.paused.clear()
        for client in list(self.clients.values()):
            self._watch_client(client)


def _base64(message: dict[str, Any], field: str) -> bytes:
    value = message.get(field)
    if not isinstance(value, str):
        raise proto.Refused(f"{message['op']} refused: {field} must be a base64 string")
    try:
        return base64.b64decode(value, validate=True)
    except (binascii.Error, ValueError):
        raise proto.Refused(f"{message['op']} refused: {field} is not base64") from None


def greeting(
    holder_id: str, pid: int, journal: JournalWriter, cols: int, rows: int, exit_code: int | None
) -> dict[str, Any]:
    """What the `hello` (and a new terminal's `started`) tells of the holder."""
    return {
        "version": proto.VERSION, "id": holder_id, "pid": pid, "size": journal.size, "cols": cols, "rows": rows,
        "exit": exit_code, "failure": journal.failure, "started_at": journal.started_at,
    }  # fmt: skip
