"""The fork server: one process per daemon that has imported the holder's code once and forks a holder for
each new terminal (Python's forkserver idea, applied to holders). A holder then costs what its own pages
cost (its interpreter's are shared with every holder forked from the same server) and starts in a few
milliseconds instead of an interpreter's start.

Its descriptor 0 is a SOCK_SEQPACKET socket to the daemon, on which it hands over, for each holder it forks
ahead (a spare: waiting in a session of its own, with a PTY and the process that becomes the program made,
pty.fork_ahead), a socket to that spare once it is ready (a `spare` message, or one with an `error` when
none could be made). On that socket the spare has already said `ahead` {pid: the program's}, with two
descriptors: the PTY's master and the daemon's end of a connection the holder counts as a greeted client. So
the daemon knows the terminal's pid and can follow it before it has asked for it: it sends the spec there (a
JSON object, with the descriptors protocol.SPEC_FDS names: the holder's files and socket, made by the
daemon) and waits for no answer (a holder that cannot take the spec up says why on that connection,
takeup.failed). The server keeps protocol.SPARES spares ready, forking only while none is starting a
terminal. It ignores SIGCHLD, so the kernel reaps the holders that end while it runs (a holder sets it back,
to reap its program); when the daemon closes the socket the server ends, and its holders go on, children of
init or of the nearest subreaper.
"""

from __future__ import annotations

import gc
import json
import os
import selectors
import signal
import socket
import time

from lookout.terminal.holder import journal, loop, protocol, takeup
from lookout.terminal.holder.holder_log import log
from lookout.terminal.holder.pty import check_program, close_all_but, fork_ahead
from lookout.terminal.holder.sizes import check_size

MAX_SPEC = 1 << 20
START_WAIT_S = 1.0
"""How long the server waits for a holder that has its spec to start its program before it forks spares
again anyway."""
FORK_TRIES = 3
"""Spares forked in a row that end before they are ready, after which the daemon is told why none is."""
FORK_RETRY_S = 0.5
REQUESTS = 0
READY, TAKEN = b"r", b"t"
"""What a spare tells the server: it is ready for a spec (its PTY and program's process made, and nothing
of the server's but its own socket held by that process); its spec has come. It closes its socket once it
has started its program."""


class _DaemonGone(Exception):
    """The daemon has closed the channel: the server ends (its holders go on)."""


def serve() -> None:
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGHUP, signal.SIG_IGN)
    signal.signal(signal.SIGCHLD, signal.SIG_IGN)  # the kernel reaps the holders that end
    close_all_but({REQUESTS, 1, 2})  # what the daemon's event loop let us inherit is no holder's business
    channel = socket.socket(fileno=REQUESTS)
    _warm_up()
    gc.collect()
    gc.freeze()  # what is loaded now is never scanned again: a holder's collections leave those pages shared
    try:
        _keep_spares(channel)
    except _DaemonGone:
        pass


def _keep_spares(channel: socket.socket) -> None:
    """Keep protocol.SPARES spares ready for the daemon, forking only while none is starting a terminal (so that a
    fork never takes a processor from a start)."""
    spares: dict[socket.socket, float | None] = {}
    """The server's socket to each spare handed over, and when its spec came (None: not yet)."""
    failures = 0
    with selectors.DefaultSelector() as selector:
        selector.register(channel, selectors.EVENT_READ)
        while True:
            if len(spares) < protocol.SPARES and all(taken is None for taken in spares.values()):
                to_spare = _ready_spare(channel, list(spares))
                if to_spare is not None:
                    failures = 0
                    spares[to_spare] = None
                    selector.register(to_spare, selectors.EVENT_READ)
                    continue
                failures += 1
                if failures >= FORK_TRIES:
                    failures = 0
                    channel.send(protocol.encode("spare", error="no holder could be made (see the daemon's log)"))
                    _follow(selector, channel, spares, FORK_RETRY_S)
                continue
            _follow(selector, channel, spares, None)


def _follow(
    selector: selectors.BaseSelector,
    channel: socket.socket,
    spares: dict[socket.socket, float | None],
    wait_s: float | None,
) -> None:
    """Wait (at most `wait_s`) for what the spares say, and forget each that has started its program, ended,
    or been slower than START_WAIT_S to start it."""
    now = time.monotonic()
    due = [taken + START_WAIT_S - now for taken in spares.values() if taken is not None]
    if due:
        wait_s = max(0.0, min(due if wait_s is None else [*due, wait_s]))
    for key, _ in selector.select(wait_s):
        if key.fileobj is channel:
            if _ended(channel):
                raise _DaemonGone
        elif isinstance(key.fileobj, socket.socket):
            if key.fileobj.recv(1) == TAKEN:
                spares[key.fileobj] = time.monotonic()
            else:
                _forget(selector, spares, key.fileobj)
    for sock, taken in list(spares.items()):
        if taken is not None and time.monotonic() - taken >= START_WAIT_S:
            _forget(selector, spares, sock)


def _forget(selector: selectors.BaseSelector, spares: dict[socket.socket, float | None], sock: socket.socket) -> None:
    selector.unregister(sock)
    del spares[sock]
    sock.close()


def _ready_spare(channel: socket.socket, others: list[socket.socket]) -> socket.socket | None:
    """Fork a spare and, once it is ready, hand the daemon a socket to it: the server's own socket to it (None
    when it could not be forked or ended before it was ready). `others`: the server's sockets to the spares
    it has, which the new one does not keep."""
    spare = _spare(channel, others)
    if spare is None:
        return None
    to_spare, for_daemon = spare
    try:
        with selectors.DefaultSelector() as selector:
            selector.register(channel, selectors.EVENT_READ)
            selector.register(to_spare, selectors.EVENT_READ)
            while True:
                ready = [key.fileobj for key, _ in selector.select()]
                if channel in ready and _ended(channel):
                    raise _DaemonGone
                if to_spare in ready:
                    break
        if to_spare.recv(1) != READY:
            to_spare.close()
            return None
        socket.send_fds(channel, [protocol.encode("spare")], [for_daemon.fileno()])
        return to_spare
    except BaseException:
        to_spare.close()
        raise
    finally:
        for_daemon.close()


def _ended(channel: socket.socket) -> bool:
    """Whether the daemon has closed the channel, which is readable (it sends the server nothing else)."""
    try:
        return not channel.recv(MAX_SPEC)
    except ConnectionError:  # it ended with something unread
        return True


def _spare(channel: socket.socket, others: list[socket.socket]) -> tuple[socket.socket, socket.socket] | None:
    """Fork the holder for the next spec: the server's socket to it, and the one to hand the daemon, which
    sends the spec and its descriptors there (None when no fork was possible). The child closes `others`
    (kept, they would hide the server's end from those spares for as long as this holder runs)."""
    to_server, to_spare = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
    from_daemon, for_daemon = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
    try:
        pid = os.fork()
    except OSError:
        for sock in (to_server, to_spare, from_daemon, for_daemon):
            sock.close()
        return None
    if pid:
        to_server.close()
        from_daemon.close()
        return to_spare, for_daemon
    message = b""
    daemon: socket.socket | None = None
    try:
        for sock in (to_spare, for_daemon, *others):
            sock.close()
        null = os.open(os.devnull, os.O_RDWR)
        os.dup2(null, channel.detach())  # the daemon's channel is the server's alone
        os.close(null)
        signal.signal(signal.SIGCHLD, signal.SIG_DFL)  # the holder reaps its program
        os.setsid()
        ahead = fork_ahead()  # made while waiting: the program starts with a write once the spec comes
        daemon, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_STREAM)
        socket.send_fds(from_daemon, [protocol.encode("ahead", pid=ahead.pid)], [ahead.master, theirs.fileno()])
        theirs.close()
        _warm_up()  # (after the fork: the pages it writes are copied now, not once the spec has come)
        to_server.send(READY)
        message, fds = _receive(from_daemon, to_server)
        from_daemon.close()
        if not message:  # the server or the daemon has ended
            os._exit(0)
        try:
            to_server.send(TAKEN)
        except OSError:  # the server has ended since: the terminal is the daemon's, and goes on
            pass
        spec = json.loads(message)
        if not isinstance(spec, dict):
            raise ValueError("a spec is a JSON object")
        takeup.run(spec, fds, ahead, daemon, taken=to_server.close)
        os._exit(0)
    except BaseException as exc:  # noqa: BLE001 (a forked child never returns into the server's loop)
        try:
            if isinstance(exc, ConnectionError) and not message:  # the daemon has dropped it (a clean stop)
                pass
            elif daemon is None or not message:  # (no spec came: nobody waits for this spare)
                log(f"a spare failed: {exc!r}")
            else:
                takeup.failed(daemon, f"not a holder's spec, or the holder failed: {exc!r}")
        finally:
            os._exit(1)


def _receive(from_daemon: socket.socket, to_server: socket.socket) -> tuple[bytes, list[int]]:
    """The spec and its descriptors (b"" once the daemon has dropped this spare or the server has ended)."""
    with selectors.DefaultSelector() as selector:
        selector.register(from_daemon, selectors.EVENT_READ)
        selector.register(to_server, selectors.EVENT_READ)
        selector.select()
    try:  # a spec that came is taken up even when the server ended as it came (the daemon was told it runs)
        flags = socket.MSG_CMSG_CLOEXEC | socket.MSG_DONTWAIT
        message, fds, _, _ = socket.recv_fds(from_daemon, MAX_SPEC, len(protocol.SPEC_FDS), flags)
    except BlockingIOError:  # the server has ended, and no spec came
        return b"", []
    return message, fds


def _warm_up() -> None:
    """Run what a holder runs first, on made-up values: once in the server, so that what these steps make and
    cache is made once, in pages every holder shares; and again in each spare while it waits for its spec,
    so that it takes then, not once the spec has come, the copy-on-write faults of the pages those steps
    write (a spare took about 160 faults between its spec and its answer without, 55 with, when spares still
    answered their spec)."""
    spec = json.loads(_SAMPLE_SPEC)
    check_size(spec["cols"], spec["rows"])
    check_program(spec)
    nowhere = (os.open(os.devnull, os.O_WRONLY), os.open(os.devnull, os.O_WRONLY))
    writer = journal.JournalWriter(*nowhere, spec["max_journal_bytes"], spec["started_at"])
    writer.record("r", "80x24")
    writer.write_output(b"x")
    writer.close()
    hello = loop.greeting(spec["id"], 1, writer, spec["cols"], spec["rows"], None)
    protocol.decode(protocol.encode("hello", **hello))
    protocol.encode("out", size=0)
    one, other = socket.socketpair(socket.AF_UNIX, socket.SOCK_STREAM)
    one.close()
    other.close()
    selectors.DefaultSelector().close()
    import ctypes  # (pty.become_subreaper: loaded once here, in pages every holder shares)

    ctypes.CDLL(None, use_errno=True)


_SAMPLE_SPEC = json.dumps({
    "id": "t_0000000000", "socket_dir": "/", "argv": ["sh"], "cwd": "/", "cols": 80, "rows": 24, "nonce": None,
    "env": {f"VARIABLE_{i}": "value " * 5 for i in range(40)}, "max_journal_bytes": 1 << 20, "started_at": 1.5e9,
}).encode()  # fmt: skip
"""A spec as the daemon sends them (an environment of a usual size)."""
