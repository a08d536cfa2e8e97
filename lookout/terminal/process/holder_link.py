"""The daemon's side of the terminals' holders (lookout.terminal.holder): start them through the fork server,
connect to one (a new terminal's, or one an earlier run of the daemon left), and talk to it on the loop."""

from __future__ import annotations

import asyncio
import errno
import json
import logging
import os
import socket
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import lookout
from lookout.core.errors import BackendFailure
from lookout.terminal.holder import protocol as proto
from lookout.terminal.process.tty import Tty

log = logging.getLogger(__name__)

START_TIMEOUT_S = 30.0
SPARE_TRIES = proto.SPARES + 1
"""Spares a launch tries: more than the fork server keeps, so that one gets through when all it had were killed."""
CONNECT_TIMEOUT_S = 5.0
NO_ROOM = "its holder takes no connection: its queue of them is full (it is stopped or stuck)"
_SOURCE_ROOT = str(Path(lookout.__file__).resolve().parent.parent)
CODE_ENV = "LOOKOUT_HOLDER_CODE"
"""In the fork server's and its holders' environment: the directory whose code they run (for people: which
lookout a holder that outlived an upgrade still runs)."""


class HolderError(BackendFailure):
    """A holder could not be started or followed; the message says why."""


@dataclass(frozen=True, slots=True)
class Greeted:
    """A holder that has greeted the daemon (a new terminal's, forked ahead of it; or one an earlier run of the
    daemon left, answering `connect`): its greeting, the PTY's master and a connection to it that it already
    counts as greeted."""

    greeting: dict[str, Any]
    master: int
    sock: socket.socket

    def close(self) -> None:
        """Leave the holder before it is followed."""
        os.close(self.master)
        self.sock.close()


class HolderLauncher:
    """The daemon's fork server (`python -S -E -m lookout.terminal.holder`, started on first use, again if it
    died), over a SOCK_SEQPACKET socket on which it hands over a socket to each holder it has forked ahead
    (a spare): `start` sends a spec there."""

    def __init__(self) -> None:
        self._server: asyncio.subprocess.Process | None = None
        self._channel: socket.socket | None = None
        self._spares: asyncio.Queue[socket.socket | str] = asyncio.Queue()
        """Sockets to the spares the server has forked, in order (a text: why there is none, or the server has
        ended; a launch that takes it says so)."""
        self._starting = asyncio.Lock()
        """Held while the fork server starts: opens that come meanwhile wait for it, not start one each."""

    async def start(self, spec: dict[str, Any], fds: list[int]) -> Greeted:
        """Send `spec`, with the descriptors proto.SPEC_FDS names (the caller keeps and closes its own), to the
        next spare: at once when one is ready (no pass of the loop in between), to the one after when it has
        ended (the server forks another). Its holder, with the program's pid and PTY, greeted: it waits for
        no answer (a holder that cannot take the spec up says why on that connection, `failed`, and ends)."""
        message = json.dumps(spec).encode()
        for _ in range(SPARE_TRIES):
            spare = await self._next_spare()
            try:
                holder = _ahead(spare, spec["id"])
                if holder is None:
                    continue
                try:
                    await _send(spare, message, fds)
                except BaseException:
                    holder.close()
                    raise
                return holder
            except OSError as exc:
                if exc.errno == errno.EMSGSIZE:
                    raise HolderError("the terminal's environment is too large to hand to its holder") from None
            finally:
                spare.close()
        raise HolderError(f"{SPARE_TRIES} holders in a row had ended before their spec came; try again")

    async def _next_spare(self) -> socket.socket:
        """The next spare, once the server has forked it (HolderError when it could not, or has ended)."""
        await self._running()
        try:
            spare = self._spares.get_nowait()
        except asyncio.QueueEmpty:
            try:
                async with asyncio.timeout(START_TIMEOUT_S):
                    spare = await self._spares.get()
            except TimeoutError:
                raise HolderError(f"the holders' fork server made no holder within {START_TIMEOUT_S:.0f} s") from None
        if isinstance(spare, str):
            raise HolderError(f"the holder could not start: {spare}")
        spare.setblocking(False)
        return spare

    async def _running(self) -> None:
        """Start the fork server unless it runs (once, however many opens ask at the same time: a second one
        would replace the first one's channel, which the loop still watches, and drop it unclosed)."""
        if self._server is not None and self._server.returncode is None and self._channel is not None:
            return
        async with self._starting:
            if self._server is None or self._server.returncode is not None or self._channel is None:
                await self._start_server()

    async def _start_server(self) -> None:
        if self._channel is not None:
            self._stop_reading()
        self._spares = asyncio.Queue()
        mine, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        try:
            self._server = await asyncio.create_subprocess_exec(
                sys.executable, "-S", "-E", "-m", "lookout.terminal.holder",
                stdin=theirs.fileno(), start_new_session=True, cwd=_SOURCE_ROOT,
                env={"PATH": os.environ.get("PATH", "/usr/bin:/bin"), CODE_ENV: _SOURCE_ROOT},
            )  # fmt: skip
        finally:
            theirs.close()
        mine.setblocking(False)
        self._channel = mine
        asyncio.get_running_loop().add_reader(mine.fileno(), self._readable)

    def _readable(self) -> None:
        assert self._channel is not None
        try:
            message, fds, _, _ = socket.recv_fds(self._channel, proto.MAX_LINE, 1)
        except BlockingIOError:
            return
        except OSError:
            message, fds = b"", []
        if not message:  # the fork server has ended
            self._stop_reading()
            return
        try:
            said = proto.decode(message.rstrip(b"\n"))
        except proto.ProtocolError:
            said = {"op": "?"}
        if said["op"] == "spare" and len(fds) == 1:
            self._spares.put_nowait(socket.socket(fileno=fds[0]))
            return
        for fd in fds:
            os.close(fd)
        why = said.get("error") or f"the holders' fork server said {message[:80]!r}"
        log.error("the holders' fork server: %s", why)
        self._spares.put_nowait(str(why))

    def _stop_reading(self) -> None:
        if self._channel is None:
            return
        asyncio.get_running_loop().remove_reader(self._channel.fileno())
        self._channel.close()
        self._channel = None
        while not self._spares.empty():  # their holders end when these close
            spare = self._spares.get_nowait()
            if not isinstance(spare, str):
                spare.close()
        for _ in range(SPARE_TRIES):  # for the launches waiting for a spare
            self._spares.put_nowait("the holders' fork server ended")

    async def close(self) -> None:
        """End the fork server (its holders go on)."""
        self._stop_reading()
        if self._server is not None and self._server.returncode is None:
            try:
                await asyncio.wait_for(self._server.wait(), 5)
            except TimeoutError:
                self._server.kill()
                await self._server.wait()


def _ahead(spare: socket.socket, terminal_id: str) -> Greeted | None:
    """What `spare` said before it was handed over (`ahead`: its program's pid, with the PTY's master and a
    connection to it), as the greeting of the terminal `terminal_id` (None when it has not said it: it ended
    before it was ready)."""
    try:
        message, fds, _, _ = socket.recv_fds(spare, proto.MAX_LINE, 2, socket.MSG_CMSG_CLOEXEC)
    except OSError:  # (BlockingIOError included: what a spare says before it is ready is there when it is)
        return None
    try:
        said = proto.decode(message.rstrip(b"\n"))
    except proto.ProtocolError:
        said = {"op": "?"}
    if said["op"] != "ahead" or type(said.get("pid")) is not int or len(fds) != 2:
        for fd in fds:
            os.close(fd)
        return None
    greeting = {"version": proto.VERSION, "id": terminal_id, "pid": said["pid"], "size": 0}
    return Greeted(greeting, fds[0], socket.socket(fileno=fds[1]))


async def _send(channel: socket.socket, message: bytes, fds: list[int]) -> None:
    """Send one message with descriptors on a non-blocking socket, waiting while it is full."""
    loop = asyncio.get_running_loop()
    while True:
        try:
            socket.send_fds(channel, [message], fds)
            return
        except BlockingIOError:
            writable = loop.create_future()
            loop.add_writer(channel.fileno(), writable.set_result, None)
            try:
                await writable
            finally:
                loop.remove_writer(channel.fileno())


class HolderLink:
    """A greeted connection to a holder, on the loop: `send` never blocks (what the socket does not take
    waits in an outbox: `pending`); every message from the holder goes to `on_message`, and the end of the
    connection to `on_closed`."""

    def __init__(
        self,
        sock: socket.socket,
        greeting: dict[str, Any],
        master: int,
        on_message: Callable[[dict[str, Any]], None],
        on_closed: Callable[[], None],
    ) -> None:
        self.greeting = greeting
        self.tty = Tty(master, int(greeting["pid"]))
        self._sock = sock
        self._on_message = on_message
        self._on_closed = on_closed
        self._lines = proto.LineBuffer()
        self._outbox = bytearray()
        self._closed = False
        if sock.getblocking():  # (a system call: `reach` made most non-blocking in its worker)
            sock.setblocking(False)
        self._loop = asyncio.get_running_loop()
        self._loop.add_reader(sock.fileno(), self._readable)
        rest = greeting.pop("rest", b"")
        if rest:
            self._loop.call_soon(self._take, rest)

    @property
    def pending(self) -> int:
        """Bytes of messages not yet taken by the holder's socket."""
        return len(self._outbox)

    def send(self, op: str, **fields: Any) -> None:
        if self._closed:
            return
        self._outbox += proto.encode(op, **fields)
        self._flush()

    def _flush(self) -> None:
        while self._outbox and not self._closed:
            try:
                sent = self._sock.send(self._outbox)
            except BlockingIOError:
                break
            except OSError:
                self._outbox.clear()
                break
            del self._outbox[:sent]
        if self._closed:
            return
        if self._outbox:
            self._loop.add_writer(self._sock.fileno(), self._flush)
        else:
            self._loop.remove_writer(self._sock.fileno())

    def _readable(self) -> None:
        data = proto.receive(self._sock)
        if data is None:
            return
        if not data:
            self.close()
            self._on_closed()
            return
        self._take(data)

    def _take(self, data: bytes) -> None:
        try:
            messages = self._lines.feed(data)
        except proto.ProtocolError as exc:
            log.error("holder of pid %s: %s; disconnected", self.tty.pid, exc)
            self.close()
            self._on_closed()
            return
        for message in messages:
            self._on_message(message)

    def close(self) -> None:
        """Leave the holder (it goes on without the daemon)."""
        if self._closed:
            return
        self._closed = True
        self._loop.remove_reader(self._sock.fileno())
        self._loop.remove_writer(self._sock.fileno())
        self._sock.close()
        self.tty.close()


async def connect(holders: Path, terminal_id: str, pid: int | None) -> Greeted:
    """Connect to and greet the holder of `terminal_id`, whose program is pid `pid`. Raises OSError when nobody
    listens there (the holder has ended), ProtocolError when what listens is not to be trusted, speaks a
    version this lookout does not, or runs another program (the message says which)."""
    return await greeting(await asyncio.to_thread(reach, holders, terminal_id), terminal_id, pid)


def reach(holders: Path, terminal_id: str) -> socket.socket:
    """A connection to the holder of `terminal_id` (checked: lookout.terminal.holder.protocol.connect) that has
    greeted it, non-blocking; its answer is for `greeting` to wait for. Blocking: call it in a thread."""
    try:
        sock = proto.connect(holders, terminal_id, CONNECT_TIMEOUT_S)
    except BlockingIOError:  # (a unix socket's connect waits for no room in the queue: it fails at once)
        raise proto.ProtocolError(NO_ROOM) from None
    try:
        proto.send_hello(sock)
        sock.setblocking(False)
    except BaseException:
        sock.close()
        raise
    return sock


async def greeting(sock: socket.socket, terminal_id: str, pid: int | None) -> Greeted:
    """The holder's answer on `sock` (`reach`), awaited on the loop (many holders greeted at once hold no
    thread while they answer) and checked as `connect` says; `sock` is closed when it is not taken."""
    loop = asyncio.get_running_loop()
    answer = proto.HelloReader()
    if sock.getblocking():
        sock.setblocking(False)
    try:
        try:
            async with asyncio.timeout(CONNECT_TIMEOUT_S):
                while not answer.take(*await _received(loop, sock)):
                    pass
        except TimeoutError:
            raise proto.ProtocolError(f"its holder did not answer within {CONNECT_TIMEOUT_S:.0f} s") from None
        said, master = answer.greeting()
        proto.check_greeting(said, terminal_id, pid)
        if master is None:
            raise proto.ProtocolError(f"its holder's greeting is not one of terminal {terminal_id}")
        return Greeted(said, master, sock)
    except BaseException:
        answer.close()
        sock.close()
        raise


async def _received(loop: asyncio.AbstractEventLoop, sock: socket.socket) -> tuple[bytes, list[int]]:
    """What the non-blocking `sock` holds next, with the descriptors sent with it (one at most)."""
    while True:
        try:
            chunk, fds, _, _ = socket.recv_fds(sock, 65536, 1)
            return chunk, fds
        except BlockingIOError:
            readable: asyncio.Future[None] = loop.create_future()
            loop.add_reader(sock.fileno(), _settle, readable)
            try:
                await readable
            finally:
                loop.remove_reader(sock.fileno())


def _settle(future: asyncio.Future[None]) -> None:
    """Settle `future` (a reader's callback: the loop may call it again before it is removed)."""
    if not future.done():
        future.set_result(None)
