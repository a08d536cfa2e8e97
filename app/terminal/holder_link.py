"""The daemon's side of a terminal's holder (app.terminal.holder): start one, connect to one (a new terminal's,
or one an earlier run of the daemon left), and talk to it on the event loop."""

from __future__ import annotations

import asyncio
import json
import logging
import os
import socket
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import app
from app.core.errors import BackendFailure
from app.core.private_files import open_file
from app.terminal import holder_protocol as proto
from app.terminal.tty import Tty

log = logging.getLogger(__name__)

START_TIMEOUT_S = 30.0
CONNECT_TIMEOUT_S = 5.0
HOLDER_LOG = "holder.log"
_SOURCE_ROOT = str(Path(app.__file__).resolve().parent.parent)


class HolderError(BackendFailure):
    """A holder could not be started or followed; the message says why."""


async def launch(spec: dict[str, Any], directory: Path) -> int:
    """Start a holder for the terminal in `directory` (its log: holder.log there); returns the program's pid
    once it runs. An exec failure raises OSError (as exec did), anything else HolderError."""
    return await asyncio.to_thread(_launch, spec, directory)


def _launch(spec: dict[str, Any], directory: Path) -> int:
    log_fd = open_file(directory / HOLDER_LOG, os.O_WRONLY | os.O_CREAT | os.O_APPEND)
    try:
        proc = subprocess.Popen(
            [sys.executable, "-m", "app.terminal.holder"],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=log_fd, start_new_session=True,
            cwd=_SOURCE_ROOT, env={"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "PYTHONPATH": _SOURCE_ROOT},
        )  # fmt: skip
    finally:
        os.close(log_fd)
    try:
        out, _ = proc.communicate(json.dumps(spec).encode() + b"\n", timeout=START_TIMEOUT_S)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.communicate()
        raise HolderError(f"the holder did not start within {START_TIMEOUT_S:.0f} s") from None
    try:
        answer = json.loads(out.splitlines()[0]) if out else {}
    except ValueError:
        answer = {}
    if "pid" in answer:
        return int(answer["pid"])
    if "errno" in answer and answer["errno"] is not None:
        raise OSError(answer["errno"], answer.get("error", "cannot run the command"))
    tail = (directory / HOLDER_LOG).read_text(errors="replace")[-500:]
    raise HolderError(f"the holder failed to start: {answer.get('error') or tail or 'no answer'}")


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


async def connect(
    holders: Path, terminal_id: str, on_message: Callable[[dict[str, Any]], None], on_closed: Callable[[], None]
) -> HolderLink:
    """Connect to and greet the holder of `terminal_id`. Raises OSError when nobody listens there (the holder
    has ended), ProtocolError when what listens is not to be trusted or speaks a version this lookout does
    not (the message says which)."""

    def greet() -> tuple[socket.socket, dict[str, Any], int]:
        sock = proto.connect(holders, terminal_id, CONNECT_TIMEOUT_S)
        try:
            greeting, master = proto.hello(sock)
            if greeting["version"] not in proto.SUPPORTED:
                if master is not None:
                    os.close(master)
                raise proto.ProtocolError(
                    f"its holder speaks protocol version {greeting['version']}, this lookout speaks "
                    f"{sorted(proto.SUPPORTED)}; it is left running (pid {greeting.get('pid')}): end it with the "
                    "lookout that started it, or with `kill`"
                )
            if master is None or greeting.get("id") != terminal_id or not isinstance(greeting.get("pid"), int):
                if master is not None:
                    os.close(master)
                raise proto.ProtocolError(f"its holder's greeting is not one of terminal {terminal_id}")
            return sock, greeting, master
        except BaseException:
            sock.close()
            raise

    try:
        sock, greeting, master = await asyncio.to_thread(greet)
    except TimeoutError:
        raise proto.ProtocolError(f"its holder did not answer within {CONNECT_TIMEOUT_S:.0f} s") from None
    return HolderLink(sock, greeting, master, on_message, on_closed)
