"""The fork server: one process per daemon that has imported the holder's code once and forks a holder for
each new terminal (Python's forkserver idea, applied to holders). A holder then costs what its own pages
cost (its interpreter's are shared with every holder forked from the same server) and starts in a few
milliseconds instead of an interpreter's start.

Its descriptor 0 is a SOCK_SEQPACKET socket to the daemon: each message is a spec (a JSON object) with the
descriptors protocol.SPEC_FDS names (the holder's files and socket, made by the daemon). For each, the server
hands both to the holder it forked ahead (a spare, waiting for them in a session of its own, with a PTY and
the process that becomes the program made: pty.fork_ahead), which answers the daemon itself, on the same
socket, with its `started` message and two descriptors: the PTY's master and its end of a connection the
holder already counts as a greeted client (so a new terminal needs no connect and no hello). Answers may come in any order; each names the spec's id. The server ignores
SIGCHLD, so the kernel reaps the holders that end while it runs (a holder sets it back, to reap its
program); when the daemon closes the socket the server ends, and its holders go on, children of init or of
the nearest subreaper.
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
"""How long the server waits for a holder to answer the daemon before it forks the next spare anyway."""
REQUESTS = 0


def serve() -> None:
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGHUP, signal.SIG_IGN)
    signal.signal(signal.SIGCHLD, signal.SIG_IGN)  # the kernel reaps the holders that end
    close_all_but({REQUESTS, 1, 2})  # what the daemon's event loop let us inherit is no holder's business
    channel = socket.socket(fileno=REQUESTS)
    _warm_up()
    gc.collect()
    gc.freeze()  # what is loaded now is never scanned again: a holder's collections leave those pages shared
    spare = _spare(channel)
    while True:
        message, fds = _receive(channel)
        if not message:
            break
        holder = spare if spare is not None else _spare(channel)
        if holder is None:
            channel.send(protocol.encode("started", id=_spec_id(message), error="the holder could not be forked"))
            for fd in fds:
                os.close(fd)
        else:
            try:
                socket.send_fds(holder, [message], fds)
            except OSError as exc:  # the spare died: say so for this spec
                channel.send(protocol.encode("started", id=_spec_id(message), error=f"the holder died: {exc.strerror}"))
            for fd in fds:  # the holder has its own now
                os.close(fd)
            _wait_answered(holder)
            holder.close()
        spare = _spare(channel)


def _wait_answered(holder: socket.socket) -> None:
    """Wait (at most ANSWER_WAIT_S) until the holder has answered the daemon, or ended: its end of the socket
    closes then. The next spare is forked only after, so that a fork never takes a processor from a start."""
    with selectors.DefaultSelector() as selector:
        selector.register(holder, selectors.EVENT_READ)
        selector.select(ANSWER_WAIT_S)


def _receive(sock: socket.socket) -> tuple[bytes, list[int]]:
    """The next spec and its descriptors (b"" once the other side has ended)."""
    message, fds, _, _ = socket.recv_fds(sock, MAX_SPEC, len(protocol.SPEC_FDS), socket.MSG_CMSG_CLOEXEC)
    return message, fds


def _spare(channel: socket.socket) -> socket.socket | None:
    """Fork the holder for the next spec; the socket that gives it the spec and its descriptors (None when no
    fork was possible: the next spec forks again, and says why if it cannot)."""
    mine, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
    try:
        pid = os.fork()
    except OSError:
        mine.close()
        theirs.close()
        return None
    if pid:
        theirs.close()
        return mine
    spec: object = None
    try:
        mine.close()
        signal.signal(signal.SIGCHLD, signal.SIG_DFL)  # the holder reaps its program
        os.setsid()
        ahead = fork_ahead()  # made while waiting: the program starts with a write once the spec comes
        _warm_up()  # (after the fork: the pages it writes are copied now, not once the spec has come)
        message, fds = _receive(theirs)
        if not message:  # the server has ended
            os._exit(0)
        spec = json.loads(message)
        if not isinstance(spec, dict):
            raise ValueError("a spec is a JSON object")
        loop.run(spec, channel, fds, ahead, answered=theirs.close)
        os._exit(0)
    except BaseException as exc:  # noqa: BLE001 (a forked child never returns into the server's loop)
        try:
            log(f"the holder failed: {exc!r}")  # (its holder.log, once it has it)
            answer_id = spec.get("id") if isinstance(spec, dict) else None
            channel.send(
                protocol.encode("started", id=answer_id, error=f"not a holder's spec, or the holder failed: {exc!r}")
            )
        finally:
            os._exit(1)


def _spec_id(message: bytes) -> object:
    try:
        spec = json.loads(message)
    except (ValueError, RecursionError):
        return None
    return spec.get("id") if isinstance(spec, dict) else None


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
