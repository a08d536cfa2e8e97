"""A terminal's holder: the small process that owns its PTY and its program, apart from the daemon.

The dtach model, one holder per terminal (docs/terminals.md says why): `python -m app.terminal.holder` reads
its spec (a JSON line) on stdin, forks once so that it is nobody's child but init's (or a subreaper's), in
a session and process group of its own (the daemon starts it with a new session), opens the journal, listens
on its socket (app.terminal.holder_protocol), starts the program on a new PTY, answers `{"pid": ...}` (or
`{"error": ...}`) on stdout and closes it. From then on it

- reads the PTY and appends every byte to the journal (output.raw and output.idx, of which it is the only
  writer), with the shell integration's nonce masked and each genuine mark's offset recorded as an `n`
  index record written before the bytes it names;
- writes input, answers to terminal queries, resizes and markers from the daemon, recorded at their true
  offsets;
- tells each connected client (the daemon, `lookout kill`) how far the journal has grown. A client that is
  slow or gone is never waited for: the journal on disk is the buffer, so nothing is dropped and the program
  never waits on the daemon;
- runs the stop ladder when asked;
- reaps the program, drains what it left in the PTY, records its exit (`x`), tells the clients, and ends.

It imports only the standard library and lookout's journal and nonce modules (fast to start, and the code of
the lookout that started it stays loaded however lookout is upgraded on disk).
"""

from __future__ import annotations

import base64
import fcntl
import json
import logging
import os
import selectors
import signal
import socket
import struct
import sys
import termios
import time
from collections.abc import Callable
from functools import partial
from pathlib import Path
from typing import Any

from app.terminal import holder_protocol as proto
from app.terminal.journal import INDEX_FLUSH_S, JournalWriter
from app.terminal.nonce_filter import NonceFilter

log = logging.getLogger("app.terminal.holder")

NONCE_FD = "LOOKOUT_NONCE_FD"
EXIT_DRAIN_S = 1.0
"""After the program exits, how long output still on its way (or written by children that kept the terminal
open) is read before the PTY is closed."""
STOP_LADDER = ((signal.SIGHUP, 1.0), (signal.SIGTERM, 1.0), (signal.SIGKILL, 2.0))
READ_BYTES = 256 << 10
"""Most bytes read from the PTY before they go to the journal."""
MAX_INPUT_PENDING = 4 << 20
"""Input the program has not read yet past which the holder stops taking more from its clients."""


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
    def __init__(self, spec: dict[str, Any]) -> None:
        self.id: str = spec["id"]
        self.directory = Path(spec["directory"])
        self.journal = JournalWriter(self.directory, int(spec["max_journal_bytes"]))
        self.journal.record("r", f"{spec['cols']}x{spec['rows']}")
        self.cols, self.rows = int(spec["cols"]), int(spec["rows"])
        self.nonce = NonceFilter(spec["nonce"]) if spec.get("nonce") else None
        self.selector = selectors.DefaultSelector()
        self.clients: dict[int, Client] = {}
        self.paused: set[Client] = set()
        """Clients not read while the program is behind with its input."""
        self.input = bytearray()
        self.exit_code: int | None = None
        self.hung_up = False
        self.done = False
        self.deadlines: dict[str, tuple[float, Callable[[], None]]] = {}
        self.ladder: list[tuple[int, float]] = []
        self.stopping = False
        self.dir_fd = proto.open_dir(Path(spec["socket_dir"]))
        self.socket_name = proto.socket_name(self.id)
        self.listener = self._listen()
        try:
            self.pid, self.master = _spawn(
                spec["argv"], spec["cwd"], spec["env"], self.cols, self.rows, spec.get("nonce")
            )
        except OSError:  # no program: no socket left behind either
            os.unlink(self.socket_name, dir_fd=self.dir_fd)
            raise
        os.set_blocking(self.master, False)
        self.pidfd = os.pidfd_open(self.pid)

    def _listen(self) -> socket.socket:
        sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM | socket.SOCK_CLOEXEC)
        try:
            os.unlink(self.socket_name, dir_fd=self.dir_fd)
        except FileNotFoundError:
            pass
        old = os.umask(0o177)
        try:
            sock.bind(proto.via_fd(self.dir_fd, self.socket_name))
        finally:
            os.umask(old)
        sock.listen(8)
        sock.setblocking(False)
        return sock

    # ----------------------------------------------------------------- the loop

    def run(self) -> None:
        self._watch_master()
        self.selector.register(self.pidfd, selectors.EVENT_READ, self._on_exit)
        self.selector.register(self.listener, selectors.EVENT_READ, self._on_connect)
        while not self.done:
            now = time.monotonic()
            due = min((at for at, _ in self.deadlines.values()), default=now + 1.0)
            for key, events in self.selector.select(max(0.0, min(due - now, INDEX_FLUSH_S))):
                try:
                    key.data(events)
                except Exception:  # a fault in one event must not end the program's terminal
                    log.exception("an event failed")
            now = time.monotonic()
            for name, (at, action) in list(self.deadlines.items()):
                if at <= now and self.deadlines.get(name) == (at, action):
                    del self.deadlines[name]
                    action()
            if not self.done:
                self.journal.flush_if_due()

    def _on_master(self, events: int) -> None:
        if events & selectors.EVENT_WRITE:
            self._write(b"")
        if events & selectors.EVENT_READ and not self.hung_up:
            data, hangup = _read_batch(self.master)
            self._store(data, final=hangup)
            if hangup:
                self.hung_up = True
                self._watch_master()
                if self.exit_code is not None:
                    self._finish()

    def _watch_master(self) -> None:
        """Read the PTY until it hangs up; write to it while input waits."""
        events = (0 if self.hung_up else selectors.EVENT_READ) | (selectors.EVENT_WRITE if self.input else 0)
        registered = self.master in self.selector.get_map()
        if events and registered:
            self.selector.modify(self.master, events, self._on_master)
        elif events:
            self.selector.register(self.master, events, self._on_master)
        elif registered:
            self.selector.unregister(self.master)

    def _store(self, data: bytes, final: bool) -> None:
        if self.nonce is not None:
            data, shown = self.nonce.feed(data, final)
            genuine = self.nonce.positions(data)
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
            data, _ = _read_batch(self.master, limit=64 << 20)
            self._store(data, final=True)
        elif self.nonce is not None:
            self._store(b"", final=True)
        if self.stopping:  # nothing of the session may stay behind
            _signal_session(self.pid, signal.SIGKILL)
        if self.master in self.selector.get_map():
            self.selector.unregister(self.master)
        os.close(self.master)
        self.journal.record("x", self.exit_code)
        self.journal.close()
        try:
            os.unlink(self.socket_name, dir_fd=self.dir_fd)
        except FileNotFoundError:
            pass
        for client in list(self.clients.values()):
            if not client.greeted:  # it finds the holder gone, and the exit in the journal
                client.sock.close()
                continue
            client.outbox += proto.encode("exit", code=self.exit_code, size=self.journal.size)
            try:
                client.sock.setblocking(True)
                client.sock.settimeout(1.0)
                client.sock.sendall(bytes(client.outbox))
            except OSError:
                pass
            client.sock.close()

    # ----------------------------------------------------------------- clients

    def _on_connect(self, _events: int) -> None:
        try:
            sock, _ = self.listener.accept()
        except BlockingIOError:
            return
        if proto.peer_uid(sock) != os.getuid():
            log.warning("refused a connection from user %s", proto.peer_uid(sock))
            sock.close()
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
            for message in client.lines.feed(data):
                self._handle(client, message)
        except (proto.ProtocolError, KeyError, TypeError, ValueError) as exc:
            log.warning("a client sent what the protocol does not allow (%s); it is disconnected", exc)
            client.outbox += proto.encode("error", message=str(exc)[:200])
            self._flush(client)
            self._drop(client)

    def _handle(self, client: Client, message: dict[str, Any]) -> None:
        op = message["op"]
        if op == "hello":
            reply = proto.encode(
                "hello", version=proto.VERSION, id=self.id, pid=self.pid, size=self.journal.size,
                cols=self.cols, rows=self.rows, exit=self.exit_code, failure=self.journal.failure,
            )  # fmt: skip
            socket.send_fds(client.sock, [reply], [self.master])
            client.greeted = True
        elif not client.greeted:
            raise proto.ProtocolError(f"{op!r} before hello")
        elif op == "input":
            data = base64.b64decode(message["data"], validate=True)
            self.journal.record_input(data, redact=bool(message.get("redact")))
            self._write(data)
        elif op == "answer":
            self.input[0:0] = base64.b64decode(message["data"], validate=True)
            self._write(b"")
        elif op == "resize":
            cols, rows = int(message["cols"]), int(message["rows"])
            fcntl.ioctl(self.master, termios.TIOCSWINSZ, struct.pack("HHHH", rows, cols, 0, 0))
            self.cols, self.rows = cols, rows
            self.journal.record("r", f"{cols}x{rows}")
        elif op == "mark":
            self.journal.record("m", str(message["label"]))
        elif op == "stop":
            if not self.stopping:
                self.stopping = True
                self.ladder = list(STOP_LADDER)
                self._climb()
        else:
            raise proto.ProtocolError(f"unknown op {op!r}")

    def _climb(self) -> None:
        """The next rung of the stop ladder (until the program has exited)."""
        if self.exit_code is not None or not self.ladder:
            return
        sig, grace = self.ladder.pop(0)
        _signal_session(self.pid, sig)
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


def _read_batch(fd: int, limit: int = READ_BYTES) -> tuple[bytes, bool]:
    """What `fd` holds now, up to about `limit` bytes, and whether the other side has hung up (EOF, or EIO:
    every holder of the slave side has closed it)."""
    chunks: list[bytes] = []
    total = 0
    while total < limit:
        try:
            data = os.read(fd, 65536)
        except BlockingIOError:
            return b"".join(chunks), False
        except OSError:
            return b"".join(chunks), True
        if not data:
            return b"".join(chunks), True
        chunks.append(data)
        total += len(data)
    return b"".join(chunks), False


def _spawn(argv: list[str], cwd: str, env: dict[str, str], cols: int, rows: int, nonce: str | None) -> tuple[int, int]:
    """Start `argv` as the leader of a new session on a new PTY of `cols` x `rows`; (pid, master). An exec
    failure raises its OSError here."""
    master, slave = os.openpty()
    fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", rows, cols, 0, 0))
    nonce_fd = _pipe_holding(nonce + "\n") if nonce else None
    if nonce_fd is not None:
        env = {**env, NONCE_FD: str(nonce_fd)}
    report_r, report_w = os.pipe2(os.O_CLOEXEC)
    pid = os.fork()
    if pid == 0:  # the program's side: nothing but the terminal (and the nonce's pipe) goes with it
        try:
            os.close(master)
            os.close(report_r)
            os.setsid()
            fcntl.ioctl(slave, termios.TIOCSCTTY, 0)
            for target in (0, 1, 2):
                os.dup2(slave, target)
            keep = {0, 1, 2, report_w} | ({nonce_fd} if nonce_fd is not None else set())
            for fd in _open_fds():
                if fd not in keep:
                    try:
                        os.close(fd)
                    except OSError:
                        pass
            if nonce_fd is not None:
                os.set_inheritable(nonce_fd, True)
            _default_signals()
            os.chdir(cwd)
            os.execvpe(argv[0], argv, env)
        except OSError as exc:
            os.write(report_w, json.dumps([exc.errno, exc.strerror]).encode())
        finally:
            os._exit(127)
    os.close(slave)
    os.close(report_w)
    if nonce_fd is not None:
        os.close(nonce_fd)
    report = b"".join(iter(lambda: os.read(report_r, 4096), b""))
    os.close(report_r)
    if report:
        os.waitpid(pid, 0)
        os.close(master)
        errno_, strerror = json.loads(report)
        raise OSError(errno_, strerror)
    return pid, master


def _open_fds() -> list[int]:
    return [int(name) for name in os.listdir("/proc/self/fd") if name.isdigit()]


def _default_signals() -> None:
    """Every signal back to its default (ignored signals stay ignored across exec: Python ignores SIGPIPE and
    SIGXFSZ, and a daemon started by nohup ignores SIGHUP) and none blocked."""
    for sig in signal.valid_signals():
        if sig not in (signal.SIGKILL, signal.SIGSTOP):
            try:
                signal.signal(sig, signal.SIG_DFL)
            except (OSError, ValueError):  # the C library's own real-time signals
                pass
    signal.pthread_sigmask(signal.SIG_SETMASK, [])


def _pipe_holding(text: str) -> int:
    """The read end of a pipe that holds `text` (far less than a pipe's buffer) and has no writer left."""
    read_fd, write_fd = os.pipe2(os.O_CLOEXEC)
    try:
        os.write(write_fd, text.encode())
    finally:
        os.close(write_fd)
    return read_fd


def session_members(sid: int) -> list[int]:
    """The processes whose session is `sid` (from /proc; a process that just exited is skipped)."""
    members = []
    for entry in os.scandir("/proc"):
        if not entry.name.isdigit():
            continue
        try:
            with open(f"/proc/{entry.name}/stat", "rb") as f:
                fields = f.read().rsplit(b")", 1)[1].split()
        except OSError:
            continue
        if int(fields[3]) == sid:
            members.append(int(entry.name))
    return members


def _signal_session(leader: int, sig: int) -> None:
    """Send `sig` to every process of the program's session: the foreground job, background jobs in process
    groups of their own, and the leader."""
    for pid in {*session_members(leader), leader}:
        try:
            os.kill(pid, sig)
        except (ProcessLookupError, PermissionError):
            pass


def main() -> None:
    logging.basicConfig(level=logging.INFO, format="%(asctime)s holder: %(message)s")
    spec = json.loads(sys.stdin.buffer.readline())
    if os.fork():  # the first process ends at once (the daemon reaps it): the holder is nobody's child
        os._exit(0)
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGHUP, signal.SIG_IGN)
    try:
        holder = Holder(spec)
    except OSError as exc:
        sys.stdout.write(json.dumps({"error": exc.strerror or str(exc), "errno": exc.errno}) + "\n")
        sys.stdout.flush()
        os._exit(1)
    sys.stdout.write(json.dumps({"pid": holder.pid}) + "\n")
    sys.stdout.flush()
    null = os.open(os.devnull, os.O_RDWR)
    os.dup2(null, 0)
    os.dup2(null, 1)
    os.close(null)
    os.chdir("/")
    holder.run()


if __name__ == "__main__":
    main()
