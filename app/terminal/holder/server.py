"""The fork server: one process per daemon that has imported the holder's code once and forks a holder for
each new terminal (Python's forkserver idea, applied to holders). A holder then costs what its own pages
cost (its interpreter's are shared with every holder forked from the same server) and starts in a few
milliseconds instead of an interpreter's start.

Its descriptor 0 is a SOCK_SEQPACKET socket to the daemon, on which it hands over, for each holder it forks
ahead (a spare: waiting in a session of its own, with a PTY and the process that becomes the program made,
pty.fork_ahead), a socket to that spare once it is ready (a `spare` message, or one with an `error` when
none could be made). The daemon sends a spec there (a JSON object, with the descriptors protocol.SPEC_FDS
names: the holder's files and socket, made by the daemon), and the holder answers on it with its `started`
message and two descriptors: the PTY's master and its end of a connection the holder already counts as a
greeted client (so a new terminal needs no connect and no hello). One spare at a time: the next is forked
once this one has answered. The server ignores SIGCHLD, so the kernel reaps the holders that end while it
runs (a holder sets it back, to reap its program); when the daemon closes the socket the server ends, and
its holders go on, children of init or of the nearest subreaper.
"""

from __future__ import annotations

import gc
import json
import os
import selectors
import signal
import socket

from app.terminal.holder import journal, loop, protocol
from app.terminal.holder.holder_log import log
from app.terminal.holder.pty import close_all_but, fork_ahead
from app.terminal.holder.sizes import check_size

MAX_SPEC = 1 << 20
ANSWER_WAIT_S = 1.0
"""How long the server waits for a holder that has its spec to answer the daemon before it forks the next
spare anyway."""
FORK_TRIES = 3
"""Spares forked in a row that end before they are ready, after which the daemon is told why none is."""
FORK_RETRY_S = 0.5
REQUESTS = 0
READY, TAKEN = b"r", b"t"
"""What a spare tells the server: it is ready for a spec (its PTY and program's process made, and nothing
of the server's but its own socket held by that process); its spec has come. It closes its socket once it
has answered the daemon."""


def serve() -> None:
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGHUP, signal.SIG_IGN)
    signal.signal(signal.SIGCHLD, signal.SIG_IGN)  # the kernel reaps the holders that end
    close_all_but({REQUESTS, 1, 2})  # what the daemon's event loop let us inherit is no holder's business
    channel = socket.socket(fileno=REQUESTS)
    _warm_up()
    gc.collect()
    gc.freeze()  # what is loaded now is never scanned again: a holder's collections leave those pages shared
    with selectors.DefaultSelector() as selector:
        selector.register(channel, selectors.EVENT_READ)
        failures = 0
        while True:
            spare = _spare(channel)
            word = b"" if spare is None else _hear(selector, channel, spare[0], None)
            if word is None:
                return
            if spare is None or word != READY:
                for sock in spare or ():
                    sock.close()
                failures += 1
                if failures >= FORK_TRIES:
                    failures = 0
                    why = "could not be forked" if spare is None else "ended before it was ready (see the daemon's log)"
                    channel.send(protocol.encode("spare", error=f"the holder {why}"))
                    if _daemon_gone(selector, channel, FORK_RETRY_S):
                        return
                continue
            failures = 0
            to_spare, for_daemon = spare
            socket.send_fds(channel, [protocol.encode("spare")], [for_daemon.fileno()])
            for_daemon.close()
            try:
                word = _hear(selector, channel, to_spare, None)
                if word == TAKEN:  # the next spare is forked once this one has answered the daemon
                    word = _hear(selector, channel, to_spare, ANSWER_WAIT_S)
                if word is None:
                    return
            finally:
                to_spare.close()


def _hear(
    selector: selectors.BaseSelector, channel: socket.socket, to_spare: socket.socket, wait_s: float | None
) -> bytes | None:
    """The spare's next word (b"" once it has ended or closed its socket, or after `wait_s`); None once the
    daemon has gone."""
    selector.register(to_spare, selectors.EVENT_READ)
    try:
        while True:
            ready = [key.fileobj for key, _ in selector.select(wait_s)]
            if not ready:
                return b""
            if channel in ready and _ended(channel):
                return None
            if to_spare in ready:
                return to_spare.recv(1)
    finally:
        selector.unregister(to_spare)


def _daemon_gone(selector: selectors.BaseSelector, channel: socket.socket, wait_s: float) -> bool:
    """Whether the daemon closes the channel within `wait_s` (the only socket `selector` watches)."""
    return any(_ended(channel) for _ in selector.select(wait_s))


def _ended(channel: socket.socket) -> bool:
    """Whether the daemon has closed the channel, which is readable (it sends the server nothing else)."""
    return not channel.recv(MAX_SPEC)


def _spare(channel: socket.socket) -> tuple[socket.socket, socket.socket] | None:
    """Fork the holder for the next spec: the server's socket to it, and the one to hand the daemon, which
    sends the spec and its descriptors there (None when no fork was possible)."""
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
    spec: object = None
    try:
        to_spare.close()
        for_daemon.close()
        null = os.open(os.devnull, os.O_RDWR)
        os.dup2(null, channel.detach())  # the daemon's channel is the server's alone
        os.close(null)
        signal.signal(signal.SIGCHLD, signal.SIG_DFL)  # the holder reaps its program
        os.setsid()
        ahead = fork_ahead()  # made while waiting: the program starts with a write once the spec comes
        _warm_up()  # (after the fork: the pages it writes are copied now, not once the spec has come)
        to_server.send(READY)
        message, fds = _receive(from_daemon, to_server)
        if not message:  # the server or the daemon has ended
            os._exit(0)
        to_server.send(TAKEN)
        spec = json.loads(message)
        if not isinstance(spec, dict):
            raise ValueError("a spec is a JSON object")
        loop.run(spec, from_daemon, fds, ahead, answered=to_server.close)
        os._exit(0)
    except BaseException as exc:  # noqa: BLE001 (a forked child never returns into the server's loop)
        try:
            log(f"the holder failed: {exc!r}")  # (its holder.log, once it has it)
            answer_id = spec.get("id") if isinstance(spec, dict) else None
            from_daemon.send(
                protocol.encode("started", id=answer_id, error=f"not a holder's spec, or the holder failed: {exc!r}")
            )
        finally:
            os._exit(1)


def _receive(from_daemon: socket.socket, to_server: socket.socket) -> tuple[bytes, list[int]]:
    """The spec and its descriptors (b"" once the daemon has dropped this spare or the server has ended)."""
    with selectors.DefaultSelector() as selector:
        selector.register(from_daemon, selectors.EVENT_READ)
        selector.register(to_server, selectors.EVENT_READ)
        for key, _ in selector.select():
            if key.fileobj is to_server:
                return b"", []
    message, fds, _, _ = socket.recv_fds(from_daemon, MAX_SPEC, len(protocol.SPEC_FDS), socket.MSG_CMSG_CLOEXEC)
    return message, fds


def _warm_up() -> None:
    """Run what a holder runs first, on made-up values: once in the server, so that what these steps make and
    cache is made once, in pages every holder shares; and again in each spare while it waits for its spec,
    so that it takes then, not once the spec has come, the copy-on-write faults of the pages those steps
    write (a spare took about 160 faults between its spec and its answer without, 55 with)."""
    spec = json.loads(_SAMPLE_SPEC)
    check_size(spec["cols"], spec["rows"])
    loop.check_program(spec)
    nowhere = (os.open(os.devnull, os.O_WRONLY), os.open(os.devnull, os.O_WRONLY))
    writer = journal.JournalWriter(*nowhere, spec["max_journal_bytes"])
    writer.record("r", "80x24")
    writer.write_output(b"x")
    writer.close()
    hello = loop.greeting(spec["id"], 1, writer, spec["cols"], spec["rows"], None)
    protocol.decode(protocol.encode("started", **hello))
    protocol.encode("out", size=0)
    one, other = socket.socketpair(socket.AF_UNIX, socket.SOCK_STREAM)
    one.close()
    other.close()
    selectors.DefaultSelector().close()


_SAMPLE_SPEC = json.dumps({
    "id": "t_0000000000", "socket_dir": "/", "argv": ["sh"], "cwd": "/", "cols": 80, "rows": 24, "nonce": None,
    "env": {f"VARIABLE_{i}": "value " * 5 for i in range(40)}, "max_journal_bytes": 1 << 20,
}).encode()  # fmt: skip
"""A spec as the daemon sends them (an environment of a usual size)."""
